"""Posting one outbox row to its channel: apprise for the chat and paging services, httpx for
the signed webhook and the router push.

Errors are described in our own words (the HTTP status, a timeout): apprise's own log lines may
carry the address and are never stored or logged. A 4xx other than 408/429 means the address is
gone or wrong, so the row gives up at once; anything else is retried by the outbox.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re

import apprise
import httpx
from django.conf import settings
from django.utils import timezone

from advisor.advice import advise
from advisor.feeds import render
from advisor.shape import Shape
from alerts.delivery.channels import messages, secrets
from alerts.delivery.channels.messages import Message
from alerts.models import Channel, Notification, Service

SIGNATURE_HEADER = "X-Tokspeed-Signature"
RETRYABLE_4XX = (408, 425, 429)
TITLE_LIMIT = 150  # Slack's header block
BODY_LIMIT = 2900  # under Slack's 3,000 characters per section
STATUS = re.compile(r"error=(\d{3})")
LINE_BREAKS = re.compile(r"\n+")
# The HTTP libraries log request URLs, which hold the secret, at DEBUG (apprise, urllib3) or
# INFO (httpx): they never reach a log, whatever level the rest of tokspeed logs at.
for _name in ("apprise", "urllib3", "httpx", "httpcore"):
    logging.getLogger(_name).setLevel(logging.WARNING)


class ChannelFailed(Exception):
    def __init__(self, reason: str, *, permanent: bool = False) -> None:
        super().__init__(reason)
        self.permanent = permanent


def _refused(status: int) -> bool:
    return 400 <= status < 500 and status not in RETRYABLE_4XX


def post(notification: Notification) -> str:
    """Send the row to its channel; returns the title sent; raises ChannelFailed."""
    channel = notification.channel
    message = messages.build(notification)
    try:
        address = secrets.address(channel)
    except secrets.SecretMissing as error:
        raise ChannelFailed(f"no address: {error}") from None
    if channel.signed:
        _webhook(channel, address, _body(channel, notification, message), message)
    elif channel.pages:
        for action in _pager_actions(message):
            _apprise(channel, _pager_url(channel, address, message, action), message)
    else:
        _apprise(channel, _with_params(address, _chat_params(channel)), message)
    return message.title


def _paragraphs(channel: Channel, body: str) -> str:
    """Teams shows a lone newline in an adaptive card's TextBlock as a space and breaks a line
    only at a blank one, so each line of the message becomes its own paragraph there."""
    return LINE_BREAKS.sub("\n\n", body) if channel.service == Service.TEAMS else body


# --- signed webhooks -------------------------------------------------------------------------


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>` (docs/channels.md)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def _body(channel: Channel, notification: Notification, message: Message) -> bytes:
    document: object = message.document
    if channel.service == Service.ROUTER and notification.advice_change_id:
        document = router_feed(channel, notification)
    return json.dumps(document, separators=(",", ":"), default=str).encode()


def router_feed(channel: Channel, notification: Notification) -> object:
    """The profile's feed as it stands now (the advice that just changed)."""
    profile = notification.advice_change.profile
    advice = advise(Shape.of(profile), profile=profile, now=timezone.now())
    return render(advice, channel.feed or "litellm")


def _webhook(channel: Channel, url: str, body: bytes, message: Message) -> None:
    timestamp = int(timezone.now().timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "tokspeed",
        "X-Tokspeed-Event": message.kind,
        "X-Tokspeed-Delivery": str(message.document.get("delivery", "")),
        SIGNATURE_HEADER: sign(secrets.signing_secret(channel), timestamp, body),
    }
    try:
        answer = httpx.post(url, content=body, headers=headers, timeout=settings.CHANNELS_TIMEOUT_S)
    except httpx.TimeoutException:
        raise ChannelFailed(f"no answer within {settings.CHANNELS_TIMEOUT_S:g} s") from None
    except httpx.HTTPError as error:
        raise ChannelFailed(f"could not connect ({type(error).__name__})") from None
    if answer.status_code >= 300:
        raise ChannelFailed(
            f"HTTP {answer.status_code} from the receiver", permanent=_refused(answer.status_code)
        )


# --- apprise ---------------------------------------------------------------------------------


def _with_params(url: str, params: dict[str, str]) -> str:
    timeout = f"{settings.CHANNELS_TIMEOUT_S:g}"
    query = "&".join(f"{k}={v}" for k, v in {**params, "cto": timeout, "rto": timeout}.items())
    return f"{url}{'&' if '?' in url else '?'}{query}"


def _chat_params(channel: Channel) -> dict[str, str]:
    # No remote images: the receiver sees tokspeed's words, not a library's icon.
    if channel.service == Service.SLACK:
        return {"blocks": "yes", "footer": "no", "image": "no"}
    return {"image": "no"} if channel.service in (Service.TEAMS, Service.DISCORD) else {}


def _pager_actions(message: Message) -> list[str]:
    if not message.kind.startswith(("alert.", "test")):
        return []  # a pager is for incidents: the digest and the monthly report never page
    if message.kind == "test":  # a test must not wake anyone: raise and resolve at once
        return ["trigger", "resolve"]
    return ["resolve"] if message.kind == "alert.resolved" else ["trigger"]


def _pager_url(channel: Channel, key: str, message: Message, action: str) -> str:
    dedup = f"tokspeed-alert-{message.alert_id}" if message.alert_id else f"tokspeed-{message.kind}"
    if message.kind == "test":
        dedup = f"tokspeed-test-channel-{channel.id}"
    if channel.service == Service.PAGERDUTY:
        base = key if "://" in key else f"pagerduty://{key}@tokspeed/tokspeed/alerts"
        return _with_params(base, {"action": action, "dedup": dedup})
    base = key if "://" in key else f"opsgenie://{key}"
    verb = "close" if action == "resolve" else "new"
    return _with_params(base, {"action": verb, "alias": dedup})


def _apprise(channel: Channel, url: str, message: Message) -> None:
    notifier = apprise.Apprise()
    if not notifier.add(url):
        raise ChannelFailed(
            f"not a {channel.get_service_display()} address (check it on the channel)",
            permanent=True,
        )
    with apprise.LogCapture(level=logging.WARNING) as captured:
        ok = notifier.notify(
            body=_paragraphs(channel, message.body[:BODY_LIMIT]),
            title=message.title[:TITLE_LIMIT],
            notify_type=message.level,
            body_format=apprise.NotifyFormat.MARKDOWN,
        )
        said = captured.getvalue()
    if ok:
        return
    status = STATUS.search(said)
    if status:
        code = int(status.group(1))
        raise ChannelFailed(
            f"HTTP {code} from {channel.get_service_display()}", permanent=_refused(code)
        )
    if "timed out" in said.lower() or "timeout" in said.lower():
        raise ChannelFailed(f"no answer within {settings.CHANNELS_TIMEOUT_S:g} s")
    raise ChannelFailed(f"{channel.get_service_display()} did not accept the message")
