"""The cloud platforms in the catalogue: Azure OpenAI, AWS Bedrock, Google Vertex AI.

Their base URLs hold a team's own resource, region or project, so each is built from the
variables the vendors' SDKs already use, and a platform is registered (and enabled) only when
those are set. Auth is read by the workers from the same environment: names only, never values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .catalogue import KnownEndpoint, KnownProvider

E = KnownEndpoint
Env = Mapping[str, str]


@dataclass(frozen=True)
class CloudPlatform:
    known: KnownProvider  # base_url and api_key_env are filled in by `resolve`
    enabled_by: str  # what register_providers prints when the platform is not set up
    resolve: Callable[[Env], tuple[str, str] | None]  # env -> (base_url, api_key_env)


def _get(env: Env, name: str) -> str:
    return env.get(name, "").strip()


def _azure(env: Env) -> tuple[str, str] | None:
    endpoint = _get(env, "AZURE_OPENAI_ENDPOINT").rstrip("/")
    if not endpoint:
        return None
    if _get(env, "AZURE_OPENAI_API_KEY"):
        return endpoint, "AZURE_OPENAI_API_KEY"
    entra = ("AZURE_CLIENT_ID", "AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT", "MSI_ENDPOINT")
    return (endpoint, "") if any(_get(env, name) for name in entra) else None


def _bedrock(env: Env) -> tuple[str, str] | None:
    region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION")
    if not region:
        return None
    base_url = f"https://bedrock-runtime.{region}.amazonaws.com"
    if _get(env, "AWS_BEARER_TOKEN_BEDROCK"):
        return base_url, "AWS_BEARER_TOKEN_BEDROCK"
    chain = (
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    )
    return (base_url, "") if any(_get(env, name) for name in chain) else None


def _vertex(env: Env) -> tuple[str, str] | None:
    project = _get(env, "GOOGLE_CLOUD_PROJECT")
    location = _get(env, "GOOGLE_CLOUD_LOCATION") or "global"
    if not project or not _get(env, "GOOGLE_APPLICATION_CREDENTIALS"):
        return None
    host = (
        "aiplatform.googleapis.com"
        if location == "global"
        else f"{location}-aiplatform.googleapis.com"
    )
    return f"https://{host}/v1/projects/{project}/locations/{location}", ""


CLOUD: tuple[CloudPlatform, ...] = (
    CloudPlatform(
        KnownProvider(
            "azure-openai",
            "Azure OpenAI",
            "azure_openai",
            "",
            endpoints=(
                E("gpt-4o-mini", "GPT-4o mini on Azure (deployment gpt-4o-mini)", "0.15", "0.60"),
                E("gpt-4.1", "GPT-4.1 on Azure (deployment gpt-4.1)", "2.00", "8.00"),
            ),
        ),
        "AZURE_OPENAI_ENDPOINT plus AZURE_OPENAI_API_KEY, or Entra ID (AZURE_CLIENT_ID/"
        "AZURE_TENANT_ID/AZURE_CLIENT_SECRET, workload or managed identity)",
        _azure,
    ),
    CloudPlatform(
        KnownProvider(
            "aws-bedrock",
            "AWS Bedrock",
            "bedrock_converse",
            "",
            endpoints=(
                E(
                    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                    "Claude Sonnet 4.5 on Bedrock (US inference profile)",
                    "3.00",
                    "15.00",
                ),
                E("us.amazon.nova-pro-v1:0", "Nova Pro on Bedrock", "0.80", "3.20"),
                E("us.meta.llama3-3-70b-instruct-v1:0", "Llama 3.3 70B on Bedrock", "0.72", "0.72"),
            ),
        ),
        "AWS_REGION plus AWS_BEARER_TOKEN_BEDROCK, or credentials for botocore's chain "
        "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN], AWS_PROFILE, a role)",
        _bedrock,
    ),
    CloudPlatform(
        KnownProvider(
            "vertex-gemini",
            "Google Vertex AI (Gemini)",
            "vertex_gemini",
            "",
            endpoints=(
                E("gemini-2.5-flash", "Gemini 2.5 Flash on Vertex AI", "0.30", "2.50"),
                E("gemini-2.5-pro", "Gemini 2.5 Pro on Vertex AI", "1.25", "10.00"),
            ),
        ),
        "GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION (default global) and "
        "GOOGLE_APPLICATION_CREDENTIALS (a service-account file or gcloud ADC)",
        _vertex,
    ),
    CloudPlatform(
        KnownProvider(
            "vertex-anthropic",
            "Google Vertex AI (Claude)",
            "vertex_anthropic",
            "",
            endpoints=(
                E("claude-sonnet-4-5@20250929", "Claude Sonnet 4.5 on Vertex AI", "3.00", "15.00"),
            ),
        ),
        "GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION (default global) and "
        "GOOGLE_APPLICATION_CREDENTIALS",
        _vertex,
    ),
)
