"""/api/v1/advice/: the advisor's answer as JSON, or as a router feed (format=litellm|…)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor import feeds
from advisor.advice import advise
from advisor.serving import cached

from ...advice_query import FORBIDDEN, NUMBERS, PARAMS, Question, parse
from ..money import rounded_money
from ..params import StrictQueryMixin

MAX_AGE_S = 60
# `results` lists the first LIMIT ranked endpoints unless `limit` says otherwise (`limit=all`:
# every one). A catalogue of hundreds of endpoints made the whole list most of a cold answer's
# cost, and a router follows the first few; `count` says how many are ranked.
LIMIT = 50
MAX_LIMIT = 1000
ALL = "all"


class JsonOnly(DefaultContentNegotiation):
    """`format` names a feed here, not a renderer: always JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def limit_of(query: Any) -> int | None:
    """The `limit` asked for: a whole number 1–MAX_LIMIT, `all` (None: every ranked endpoint),
    LIMIT when absent; a 400 naming it otherwise."""
    raw = str(query.get("limit", "")).strip()
    if not raw:
        return LIMIT
    if raw == ALL:
        return None
    if raw.isdecimal() and 1 <= int(raw) <= MAX_LIMIT:  # isdigit() would let "²" through
        return int(raw)
    raise ValidationError({"limit": [f"Give a whole number from 1 to {MAX_LIMIT}, or {ALL}."]})


def answer(question: Question, limit: int | None) -> Any:
    advice = advise(
        question.shape,
        profile=question.profile,
        current=question.current,
        vantage=question.vantage,
        workload=question.workload,
        shown=limit,
    )
    if question.format:
        return rounded_money(feeds.render(advice, question.format))
    return rounded_money(advice.as_dict(limit=limit))


def respond(request: Request, payload: Any, etag: str) -> Response:
    cache_control = f"max-age={MAX_AGE_S}, private"
    if etag in {tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")}:
        response = Response(status=304)
    else:
        response = Response(payload)
    response["ETag"] = etag
    response["Cache-Control"] = cache_control
    return response


PARAMETERS = [
    OpenApiParameter("profile", str, description="A saved workload profile's slug."),
    OpenApiParameter(
        "workload",
        str,
        description="A custom workload's slug: advice from its own runs (users who may read "
        "its prompts only).",
    ),
    *[
        OpenApiParameter(name, float if kind is float else int, description=f"{low:g}–{high:g}")
        for name, (kind, low, high) in NUMBERS.items()
    ],
    OpenApiParameter("models", str, description="Accepted model names, comma-separated."),
    OpenApiParameter("current", str, description="Endpoint slug you route to today."),
    OpenApiParameter("vantage", str, description="Vantage slug; default vantage if absent."),
    OpenApiParameter(
        "format", str, enum=["json", *feeds.FORMATS], description="A router feed instead."
    ),
    OpenApiParameter(
        "limit",
        str,
        description=f"How many ranked endpoints `results` lists, 1–{MAX_LIMIT} or `{ALL}` "
        f"(default {LIMIT}); `count` is how many are ranked. Router feeds list every one.",
    ),
]


class AdviceView(StrictQueryMixin, APIView):
    query_params_allowed = (*PARAMS, "limit")
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonOnly

    @extend_schema(
        parameters=PARAMETERS,
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT), 304: None},
        summary="Routing advice for a workload",
        description="Endpoints the workload accepts, ranked by projected p90 task time (inside "
        "the latency budget and price ceiling first), with p50/p90 task time, cost per task, "
        "availability, ties (overlapping p25–p75 spreads), the recommendation and its reason, "
        "per-bucket winners, savings against `current`, the data basis and warnings. `results` "
        f"lists the first {LIMIT} ranked endpoints (`limit`, `limit=all`), `count` how many are "
        "ranked; everything else stands on every one of them. Each lane "
        "of a model is a candidate of its own (`lane`); `lanes` says whether each fast lane "
        "pays for itself against its standard lane in the workload's budget. "
        "`format=litellm` answers a LiteLLM Router model_list, `openrouter` a provider "
        "preference object, `list` the endpoint slugs in order. Answers carry an ETag "
        "(If-None-Match gives 304) and Cache-Control: poll every minute.",
    )
    def get(self, request: Request) -> Response:
        question = parse(request.query_params)
        limit = limit_of(request.query_params)  # checked for a feed too; a feed lists all
        if question.format:
            limit = None
        if not question.allowed(request.user):
            raise PermissionDenied(FORBIDDEN)
        payload, etag = cached(
            {**question.key(), "format": question.format, "limit": limit},
            lambda: answer(question, limit),
        )
        return respond(request, payload, etag)
