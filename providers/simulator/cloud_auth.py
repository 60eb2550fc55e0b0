"""The simulator's cloud credentials: a fixed AWS test key it verifies SigV4 signatures
against, and the OAuth2 token endpoints of Google (service-account JWT grant) and Azure
(App Service managed identity) that issue the bearer tokens its Vertex and Azure faces accept.

Point a worker at them with environment variables only (no code path differs from production):
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY = TEST_ACCESS_KEY / TEST_SECRET_KEY; a service-account
file whose token_uri is {sim}/oauth2/token (GOOGLE_APPLICATION_CREDENTIALS); IDENTITY_ENDPOINT =
{sim}/msi/token with IDENTITY_HEADER set. POST /_sim/tokens/expire expires every token issued so
far, so a client's next request is answered 401 until it fetches a fresh one.
"""

from __future__ import annotations

import hmac
import os
import time
from urllib.parse import urlsplit

from aiohttp import web
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

TEST_ACCESS_KEY = "AKIATOKSPEEDSIMULATOR"
TEST_SECRET_KEY = "tokspeed-simulator-test-secret-key"  # noqa: S105 - a public test credential
TOKEN_LIFETIME_S = 3600


class TokenIssuer:
    """Tokens issued by the simulator's OAuth2 endpoints, with their expiry (Unix seconds)."""

    def __init__(self) -> None:
        self.tokens: dict[str, float] = {}

    def issue(self, prefix: str) -> tuple[str, float]:
        token = f"{prefix}.{os.urandom(12).hex()}"
        expires_at = time.time() + TOKEN_LIFETIME_S
        self.tokens[token] = expires_at
        return token, expires_at

    def check(self, token: str) -> str | None:
        """None for a live token; else the error: auth_invalid or auth_expired."""
        expires_at = self.tokens.get(token)
        if expires_at is None:
            return "auth_invalid"
        return "auth_expired" if time.time() >= expires_at else None

    def expire_all(self) -> None:
        self.tokens = dict.fromkeys(self.tokens, 0.0)


TOKENS = web.AppKey("tokens", TokenIssuer)


def bearer(request: web.Request) -> str | None:
    auth = request.headers.get("authorization", "")
    return auth[7:].strip() if auth[:7].lower() == "bearer " else None


def verify_sigv4(request: web.Request, body: bytes) -> str | None:
    """None when the request carries a valid SigV4 signature of the test credential."""
    auth = request.headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "auth_missing"
    try:
        fields = dict(
            part.strip().split("=", 1) for part in auth.removeprefix("AWS4-HMAC-SHA256 ").split(",")
        )
        access_key, _date, region, service, _terminal = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        signature = fields["Signature"]
        timestamp = request.headers["x-amz-date"]
    except (KeyError, ValueError):
        return "auth_invalid"
    if access_key != TEST_ACCESS_KEY:
        return "auth_invalid"
    url = f"http://{request.host}{request.raw_path}"
    headers = {name: request.headers.get(name, "") for name in signed if name != "host"}
    aws_request = AWSRequest(method=request.method, url=url, data=body, headers=headers)
    aws_request.context["timestamp"] = timestamp
    token = request.headers.get("x-amz-security-token")
    signer = SigV4Auth(Credentials(TEST_ACCESS_KEY, TEST_SECRET_KEY, token), service, region)
    canonical = signer.canonical_request(aws_request)
    expected = signer.signature(signer.string_to_sign(aws_request, canonical), aws_request)
    if urlsplit(url).hostname is None or not hmac.compare_digest(expected, signature):
        return "auth_invalid"
    return None


async def google_token(request: web.Request) -> web.Response:
    """Google's token endpoint for the service-account JWT bearer grant (RFC 7523)."""
    form = await request.post()
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
        return web.json_response({"error": "unsupported_grant_type"}, status=400)
    if str(form.get("assertion", "")).count(".") != 2:
        return web.json_response({"error": "invalid_grant"}, status=400)
    token, _ = request.app[TOKENS].issue("ya29.sim")
    body = {"access_token": token, "expires_in": TOKEN_LIFETIME_S, "token_type": "Bearer"}
    return web.json_response(body)


async def azure_msi_token(request: web.Request) -> web.Response:
    """Azure App Service's managed identity endpoint (IDENTITY_ENDPOINT, api-version 2019-08-01)."""
    if not request.headers.get("x-identity-header"):
        return web.json_response({"error": "missing X-IDENTITY-HEADER"}, status=400)
    resource = request.query.get("resource", "")
    token, expires_at = request.app[TOKENS].issue("eyJ0.entra-sim")
    body = {
        "access_token": token,
        "expires_on": str(int(expires_at)),
        "resource": resource,
        "token_type": "Bearer",
    }
    return web.json_response(body)


async def expire_tokens(request: web.Request) -> web.Response:
    request.app[TOKENS].expire_all()
    return web.json_response({"expired": len(request.app[TOKENS].tokens)})


def add_auth_routes(app: web.Application) -> None:
    app[TOKENS] = TokenIssuer()
    app.router.add_post("/oauth2/token", google_token)
    app.router.add_get("/msi/token", azure_msi_token)
    app.router.add_post("/_sim/tokens/expire", expire_tokens)
