"""Base-URL validation: http(s) only, and no private or loopback targets unless allowed."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

# Said wherever a loopback or private target is refused (registration and every connect).
PRIVATE_HINT = "set TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=1 to benchmark local servers"


def is_private(address: str) -> bool:
    """True unless `address` (an IP; zone ids like fe80::1%eth0 allowed) is publicly routable.

    An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
    The one rule for both the save-time check here and the measuring transport's connect-time
    check (benchmarks/measure/http/network.py)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global


def validate_base_url(url: str) -> None:
    """Refuse anything but http(s), and hosts resolving to private/loopback addresses.

    Local servers (vLLM, llama.cpp, the simulator) are allowed by
    TOKSPEED_ALLOW_PRIVATE_ENDPOINTS, on by default only in the embedded DEBUG setup.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        raise ValidationError("Base URL must start with http:// or https://.")
    if not parts.hostname:
        raise ValidationError("Base URL has no host name.")
    if parts.username or parts.password:
        raise ValidationError("Put credentials in the key variable, not in the URL.")
    if settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValidationError(f"Host {parts.hostname!r} does not resolve.") from exc
    if any(is_private(info[4][0]) for info in infos):
        raise ValidationError(
            f"Host {parts.hostname!r} resolves to a private or loopback address; {PRIVATE_HINT}."
        )


def validate_time_zone(name: str) -> None:
    """An IANA time zone name (America/New_York) that zoneinfo knows; blank is allowed (none).

    The demand time zone of a provider or endpoint (docs/alerts.md, "Local-time demand"), and
    the zone a schedule's times of day are in (docs/alerts.md, "Schedules in local time")."""
    if not name:
        return
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    bad = ValidationError(
        f"{name[:80]!r} is not a time zone: give an IANA name such as America/New_York or "
        "Europe/Berlin (blank: none)."
    )
    if name != name.strip() or "\x00" in name or name.startswith(("/", ".")) or ".." in name:
        raise bad
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise bad from None
