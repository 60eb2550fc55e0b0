"""SigV4 signing for Bedrock with botocore's signer and credential chain.

botocore resolves credentials the way the AWS CLI does: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
/ AWS_SESSION_TOKEN, then AWS_PROFILE and the shared config/credentials files (incl. assumed
roles and SSO), then container and instance roles. Refreshable credentials (roles) are refreshed
by botocore itself before they expire. Only the signature headers leave this module.
"""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.session import Session

from .base import RequestSpec

SERVICE = "bedrock"
DEFAULT_REGION = "us-east-1"
# botocore logs where it found credentials at INFO; tokspeed logs nothing about credentials.
logging.getLogger("botocore.credentials").setLevel(logging.WARNING)
_HOST_REGION = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")


class NoAwsCredentials(Exception):
    """botocore's chain found no credentials in this worker's environment."""

    def __init__(self) -> None:
        super().__init__(
            "No AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
            "AWS_SESSION_TOKEN), or AWS_PROFILE, or run on a host with an instance/task role; "
            "or give the provider a Bedrock API key variable (AWS_BEARER_TOKEN_BEDROCK)."
        )


def region_of(base_url: str) -> str:
    """The signing region: from a bedrock-runtime.{region}.amazonaws.com URL, else AWS_REGION."""
    match = _HOST_REGION.match(urlsplit(base_url).hostname or "")
    if match:
        return match.group(1)
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


class SigV4Credential:
    """Signs each prepared request (host, content-type, x-amz-date, session token, body hash)."""

    def __init__(self, region: str, credentials: Credentials | None = None) -> None:
        self.region = region
        self._credentials = credentials

    def _resolved(self) -> Credentials:
        if self._credentials is None:
            found = Session().get_credentials()
            if found is None:
                raise NoAwsCredentials()
            self._credentials = found
        return self._credentials

    def headers(self, spec: RequestSpec) -> dict[str, str]:
        frozen = self._resolved().get_frozen_credentials()  # refreshes a role's keys if due
        signed_names = {"content-type"}
        request = AWSRequest(
            method=spec.method,
            url=spec.url,
            data=spec.content or b"",
            headers={k: v for k, v in spec.headers.items() if k.lower() in signed_names},
        )
        SigV4Auth(frozen, SERVICE, self.region).add_auth(request)
        return {
            name.lower(): value
            for name, value in request.headers.items()
            if name.lower() in ("authorization", "x-amz-date", "x-amz-security-token")
        }

    def invalidate(self) -> None:
        self._credentials = None  # re-run the chain: rotated keys or a new profile are picked up
