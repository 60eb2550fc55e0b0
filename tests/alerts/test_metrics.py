"""/metrics: what tokspeed measured, in the Prometheus format, scraped by a real Prometheus
(Debian's package) on loopback and read back with PromQL; behind a bearer token or the login."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from alerts.models import Alert
from benchmarks.models import Run
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.stats import summarize
from tests.alerts.test_alert_emails import T0, make_series, regress
from tests.sqlite_script import run_on_sqlite

TOKEN = "scrape-me-0123456789"  # noqa: S105 (a test's own token)
NOW = T0 + timedelta(hours=28)
PROMETHEUS = shutil.which("prometheus")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def grafana_board() -> dict:
    return json.loads(
        (Path(__file__).resolve().parents[2] / "contrib/grafana/tokspeed.json").read_text()
    )


def grafana_queries() -> list[str]:
    """The board's PromQL: every panel's, and its variables' label_values() as plain selectors,
    with $vantage / $workload matching any value (Grafana's "All")."""
    board = grafana_board()
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    exprs += [
        re.sub(r"label_values\((\w+),.*\)", r"\1", v["definition"])
        for v in board["templating"]["list"]
        if v["type"] == "query"
    ]
    return [re.sub(r"\$(vantage|workload)\b", ".+", e) for e in exprs]


def prom_query(base: str, query: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': query})}"
    with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (loopback)
        return json.load(answer)["data"]["result"]


@pytest.mark.django_db
def test_it_refuses_metrics_without_the_token_or_a_login(client, admin_client):
    with override_settings(TOKSPEED_METRICS_TOKEN=TOKEN):
        refused = client.get("/metrics")
        assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
        wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
        assert wrong.status_code == 401
        ok = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert ok.status_code == 200 and b"tokspeed_outbox_backlog 0.0" in ok.content
    assert admin_client.get("/metrics").status_code == 200, "a logged-in user may read it"


@pytest.mark.django_db
def test_it_exposes_bounded_labels_only():
    from django.test import Client

    with time_machine.travel(NOW, tick=False):
        regress(make_series())
        with override_settings(TOKSPEED_METRICS_TOKEN=TOKEN):
            text = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content
        board = leaderboard(BoardFilters(workload="w", vantage="eu", window_hours=72))
    samples = [
        sample
        for family in text_string_to_metric_families(text.decode())
        for sample in family.samples
    ]
    labels = {name for sample in samples for name in sample.labels}
    assert labels <= {"provider", "endpoint", "workload", "vantage", "kind", "severity", "state"}
    latest = Run.objects.filter(endpoint__slug="acme-llama").order_by("-slot").first()
    (decode,) = [s for s in samples if s.name == "tokspeed_latest_decode_p50_tps"]
    assert decode.labels == {"provider": "acme", "endpoint": "acme-llama", "workload": "w",
                             "vantage": "eu"}  # fmt: skip
    assert decode.value == latest.decode_tps_p50, "the latest run's median decode speed, as stored"
    (row,) = [r for r in board if r.slug == "acme-llama"]
    (median,) = [s for s in samples if s.name == "tokspeed_decode_median_72h_tps"]
    assert median.value == row.decode_tps_p50, "the 72 h median is the leaderboard's"
    (opened,) = [s for s in samples if s.name == "tokspeed_open_alerts"]
    assert opened.value == 1 and opened.labels["kind"] == "regression"


@pytest.mark.slow
@pytest.mark.skipif(
    PROMETHEUS is None, reason="prometheus is not installed (apt-get install -y prometheus)"
)
@pytest.mark.django_db(transaction=True)
def test_it_is_scraped_by_a_real_prometheus(live_server, tmp_path: Path):
    with time_machine.travel(NOW, tick=True):
        regress(make_series())
        latest = Run.objects.order_by("-slot").first()
        # The percentiles a finished run keeps (benchmarks/finish.py), which the p90 panels read.
        latest.summary = {**latest.summary, **summarize(list(latest.samples.all()))}
        latest.save(update_fields=["summary"])
        port = free_port()
        target = live_server.url.removeprefix("http://")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 2s, scrape_timeout: 2s}\n"
            "scrape_configs:\n"
            "  - job_name: tokspeed\n"
            "    metrics_path: /metrics\n"
            f"    authorization: {{type: Bearer, credentials: {TOKEN}}}\n"
            f"    static_configs: [{{targets: ['{target}']}}]\n"
        )
        with override_settings(TOKSPEED_METRICS_TOKEN=TOKEN):
            server = subprocess.Popen(  # noqa: S603 (a fixed binary, loopback only)
                [
                    PROMETHEUS,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                base = f"http://127.0.0.1:{port}"
                query = 'tokspeed_latest_decode_p50_tps{endpoint="acme-llama"}'
                result = []
                for _ in range(180):  # a loaded machine: Prometheus starts and scrapes slowly
                    try:
                        result = prom_query(base, query)
                    except OSError:
                        result = []
                    if result:
                        break
                    time.sleep(0.5)
                assert result, "Prometheus never scraped tokspeed's /metrics"
                alerts = prom_query(base, 'sum(tokspeed_open_alerts{endpoint="acme-llama"})')
                # Every query of the Grafana board, its variables set to match all, parses and
                # (but for beat's tick, which no beat ran to leave) returns a series. A rate()
                # needs two scrapes in its range: on a loaded machine a scrape may time out, so
                # the board is read again until it answers or half a minute has passed.
                for _ in range(60):
                    answered = {e: prom_query(base, e) for e in grafana_queries()}
                    if all(series for e, series in answered.items() if "beat" not in e):
                        break
                    time.sleep(0.5)
            finally:
                server.terminate()
                server.wait(10)
    empty = [e for e, series in answered.items() if not series and "beat" not in e]
    assert answered and not empty, f"Grafana queries that return nothing: {empty}"
    (p90,) = answered['tokspeed_latest_decode_p90_tps{vantage=~".+",workload=~".+"}']
    assert float(p90["value"][1]) == pytest.approx(latest.summary["decode_tps"]["p90"], rel=1e-9)
    latest = Run.objects.filter(endpoint__slug="acme-llama").order_by("-slot").first()
    measured = latest.decode_tps_p50
    assert float(result[0]["value"][1]) == pytest.approx(measured, rel=1e-9)
    assert result[0]["metric"]["vantage"] == "eu" and result[0]["metric"]["workload"] == "w"
    assert float(alerts[0]["value"][1]) == Alert.objects.filter(status="open").count() == 1


@pytest.mark.django_db
def test_it_ships_a_grafana_dashboard_that_reads_only_metrics_tokspeed_exposes(admin_client):
    board = grafana_board()
    used = {name for expr in grafana_queries() for name in re.findall(r"tokspeed_[a-z0-9_]+", expr)}
    with time_machine.travel(NOW, tick=False):
        regress(make_series())
        text = admin_client.get("/metrics").content.decode()
    exposed = {family.name for family in text_string_to_metric_families(text)}
    assert used and used <= exposed, (
        f"the dashboard asks for metrics /metrics lacks: {used - exposed}"
    )
    titles = {p["title"] for p in board["panels"]}
    assert "Leaderboard (72 h medians)" in titles and any("latest run" in t for t in titles)


@pytest.mark.django_db
def test_it_labels_an_alert_without_a_workload_empty_not_none():
    from django.test import Client

    from alerts.models import Kind, Metric

    with time_machine.travel(NOW, tick=False):
        regress(make_series())
        run = Run.objects.filter(endpoint__slug="acme-llama").first()
        Alert.objects.create(  # an outage of the endpoint: no workload
            kind=Kind.OUTAGE, metric=Metric.AVAILABILITY, endpoint=run.endpoint, vantage=run.vantage
        )
        with override_settings(TOKSPEED_METRICS_TOKEN=TOKEN):
            text = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content
    opened = [
        sample
        for family in text_string_to_metric_families(text.decode())
        for sample in family.samples
        if sample.name == "tokspeed_open_alerts" and sample.labels["kind"] == "outage"
    ]
    assert [s.value for s in opened] == [1]
    assert "None" not in opened[0].labels.values(), opened[0].labels


_SQLITE_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
call_command("seed_history", endpoints=2, days=2, workloads=1, slots=3, samples_per_run=3)
from benchmarks.models import Run
newest = Run.objects.filter(endpoint__slug="synthetic-001").order_by("-slot", "-id").first()
print("NEWEST", newest.decode_tps_p50)
answer = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer %s", HTTP_HOST="localhost")
print("STATUS", answer.status_code)
print(answer.content.decode())
"""


@pytest.mark.slow
def test_it_serves_metrics_on_sqlite_the_make_run_database(tmp_path):
    secret = "a-test-secret-" + "x" * 40  # noqa: S105 (a test's own)
    done = run_on_sqlite(
        _SQLITE_SCRIPT % TOKEN, tmp_path, TOKSPEED_METRICS_TOKEN=TOKEN, SECRET_KEY=secret
    )
    assert "STATUS 200" in done.stdout, done.stdout[-2000:]
    newest = float(done.stdout.split("NEWEST ")[1].split()[0])
    families = text_string_to_metric_families(done.stdout.split("STATUS 200", 1)[1])
    decode = [
        s.value
        for family in families
        for s in family.samples
        if s.name == "tokspeed_latest_decode_p50_tps" and s.labels["endpoint"] == "synthetic-001"
    ]
    assert decode == [pytest.approx(newest)], "the newest run's median decode, as stored"
