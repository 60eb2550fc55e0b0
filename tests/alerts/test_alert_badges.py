"""Alerts on dashboard pages: leaderboard badges, the endpoint page's banner and change points,
and the leaderboard API's `alerts` per row."""

import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from alerts.models import Alert, ChangePoint
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


def make_alert(
    ep,
    *,
    metric="decode_tps",
    kind="regression",
    severity="major",
    status="open",
    shift=0.18,
    workload=None,
) -> Alert:
    """An active alert as the detector stores it (shift worse-oriented; medians to match)."""
    baseline = 72.0 if metric == "decode_tps" else 600.0
    recent = baseline * (1 - shift) if metric == "decode_tps" else baseline * (1 + shift)
    return Alert.objects.create(
        kind=kind,
        metric=metric,
        endpoint=ep,
        workload=workload or data.workload(),
        vantage=data.vantage(),
        status=status,
        severity=severity,
        shift=shift if kind == "regression" else None,
        baseline_median=baseline,
        recent_median=recent,
        error_rate=0.6 if kind == "outage" else None,
        error_categories={"overloaded": 3} if kind == "outage" else {},
        first_bad_at=timezone.now() - timedelta(hours=20),
    )


def make_change_point(ep, at, *, metric="decode_tps", before=72.0, after=55.0, workload=None):
    return ChangePoint.objects.create(
        endpoint=ep,
        workload=workload or data.workload(),
        vantage=data.vantage(),
        metric=metric,
        at=at,
        before_median=before,
        after_median=after,
        change=after / before - 1,
    )


def decode_badge(shift: float) -> str:
    return f"▼ decode −{round(shift * 100)}\u00a0%"


@pytest.fixture
def user_client(client):
    client.force_login(User.objects.create_user("ana"))
    return client


def board_row(html: str, slug: str) -> str:
    return html.split(f'<tr data-slug="{slug}"', 1)[1].split("</tr>", 1)[0]


def test_it_badges_only_endpoints_with_an_active_alert_and_links_to_it(user_client):
    eps = data.demo(slots=3, with_samples=False)
    major = make_alert(eps["gpu-llama-70b"], shift=0.18)
    acked = make_alert(
        eps["frontier-large"], metric="ttft_ms", severity="minor", status="acknowledged", shift=0.3
    )
    resolved = make_alert(eps["wafer-llama-70b"], status="resolved")

    html = user_client.get("/").content.decode()
    gpu = board_row(html, "gpu-llama-70b")
    assert f'href="/alerts/{major.id}/"' in gpu
    assert decode_badge(major.shift) in gpu and "alert-badge major" in gpu
    frontier = board_row(html, "frontier-large")
    assert f'href="/alerts/{acked.id}/"' in frontier and "alert-badge minor ack" in frontier
    assert f"▲ TTFT +{round(acked.shift * 100)}\u00a0%" in frontier
    for slug in ("wafer-llama-70b", "sim-gpu"):
        assert "alert-badge" not in board_row(html, slug)
    assert f"/alerts/{resolved.id}/" not in html
    assert "2 active" in html  # the column header counts them


def test_it_shows_two_badges_then_a_link_to_the_rest(user_client):
    eps = data.demo(slots=3, with_samples=False)
    ep = eps["sim-gpu"]
    make_alert(ep, kind="outage", metric="availability")
    make_alert(ep, metric="ttft_ms", severity="minor")
    make_alert(ep, severity="minor", workload=data.workload("long-context"))
    row = board_row(user_client.get("/").content.decode(), "sim-gpu")
    assert row.count('class="alert-badge') == 2
    assert ">outage</a>" in row  # the major one first
    assert 'href="/alerts/?endpoint=sim-gpu"' in row and ">+1</a>" in row


@pytest.mark.parametrize("path", ["/", "/api/v1/leaderboard/"])
def test_it_reads_every_rows_alerts_in_one_query(user_client, path, django_assert_num_queries):
    eps = data.demo(slots=3, with_samples=False)
    make_alert(eps["gpu-llama-70b"])
    with CaptureQueriesContext(connection) as few:
        assert user_client.get(path).status_code == 200
    for index in range(6):
        extra = data.endpoint(data.provider(f"extra-{index}"), f"extra-{index}")
        data.series(extra, ttft_ms=[400, 410, 420], decode_tps=[90, 95, 99])
        make_alert(extra, severity="minor")
        make_alert(extra, metric="ttft_ms")
    with django_assert_num_queries(len(few.captured_queries)):
        response = user_client.get(path)
    assert response.status_code == 200
    body = response.content.decode()
    shown = body.count('class="alert-badge') if path == "/" else body.count('"severity"')
    assert shown == 1 + 6 * 2


def test_it_lists_active_alerts_per_row_in_the_api(user_client):
    eps = data.demo(slots=3, with_samples=False)
    alert = make_alert(eps["gpu-llama-70b"], status="acknowledged", severity="minor")
    rows = {r["slug"]: r for r in user_client.get("/api/v1/leaderboard/").json()["rows"]}
    assert rows["wafer-llama-70b"]["alerts"] == []
    (shown,) = rows["gpu-llama-70b"]["alerts"]
    assert shown["id"] == alert.id and shown["status"] == "acknowledged"
    assert (shown["kind"], shown["metric"], shown["severity"]) == (
        "regression",
        "decode_tps",
        "minor",
    )
    assert shown["workload"] == "base" and shown["shift"] == pytest.approx(alert.shift)


def embedded(html: str, element_id: str):
    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    return json.loads(found.group(1))


def test_it_lists_the_endpoints_alerts_and_embeds_its_change_points(user_client):
    eps = data.demo(slots=6, with_samples=False)
    ep = eps["gpu-llama-70b"]
    alert = make_alert(ep, shift=0.27)
    make_alert(eps["wafer-llama-70b"], metric="ttft_ms")  # another endpoint's: not listed
    slots = data.recent_slots(6)
    decode = make_change_point(ep, slots[3])
    ttft = make_change_point(ep, slots[4], metric="ttft_ms", before=600.0, after=780.0)
    make_change_point(ep, slots[2], workload=data.workload("long-context"))  # other series
    make_change_point(ep, slots[0] - timedelta(days=30))  # before the window
    make_change_point(eps["sim-gpu"], slots[3])  # another endpoint

    html = user_client.get("/endpoints/gpu-llama-70b/").content.decode()
    banner = html.split('id="endpoint-alerts"', 1)[1].split("</section>", 1)[0]
    assert f'href="/alerts/{alert.id}/"' in banner and decode_badge(alert.shift) in banner
    assert "Decode speed is 27 % slower" in banner
    assert f"since {alert.first_bad_at:%d %b %H:%M} UTC" in banner
    assert banner.count("<li ") == 1
    points = embedded(html, "change-points")
    assert [(p["at"], p["metric"], p["change"]) for p in points] == [
        (decode.at.isoformat(), "decode_tps", pytest.approx(decode.change)),
        (ttft.at.isoformat(), "ttft_ms", pytest.approx(ttft.change)),
    ]

    quiet = user_client.get("/endpoints/sim-gpu/").content.decode()
    assert 'id="endpoint-alerts"' not in quiet
