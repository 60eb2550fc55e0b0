"""The Celery side: a real worker evaluates runs by the task name the runner sends, and the
email goes out from that worker through real SMTP."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from alerts.models import Alert, Evaluation, Notification
from alerts.testing import daily_slots, store_history
from tests.alerts.test_alert_emails import BASE_URL, T0, make_series, smtp_sink
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options, wait_for, worker
from tokspeed.celery import app as current_app

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_evaluates_and_emails_from_a_real_worker(tmp_path: Path) -> None:
    series = make_series()
    store_history(
        **series, slots=daily_slots(end=T0, days=8), decode=lambda s: 70.0, ttft=lambda s: 600.0
    )
    runs = store_history(
        **series,
        slots=[T0 + timedelta(hours=h) for h in (25, 26, 27)],
        decode=lambda s: 49.0,
        ttft=lambda s: 600.0,
        seed=1,
    )
    with (
        smtp_sink() as smtp,
        broker(FILESYSTEM_URL, filesystem_options(tmp_path)),
        worker(
            name="w-alerts",
            queues=["tokspeed"],
            broker_url=FILESYSTEM_URL,
            broker_dir=tmp_path,
            DJANGO_SETTINGS_MODULE="tokspeed.test_settings",
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=str(smtp.port),
            ALERT_EMAILS="oncall@team.example",
            TOKSPEED_BASE_URL=BASE_URL,
            ALERTS_EPISODE_HOURS="0",  # the slow runs are an hour apart (conftest.py)
        ) as alerts_worker,
    ):
        for run in runs:  # as benchmarks/finish.py does when a run ends
            current_app.send_task("alerts.evaluate_after_run", args=[run.id], queue="tokspeed")
            wait_for(
                lambda run=run: Evaluation.objects.filter(run=run).exists(),
                timeout=60,
                message=lambda: alerts_worker.output()[-3000:],
            )
        alert = Alert.objects.get()
        wait_for(lambda: smtp.messages, timeout=60, message=lambda: alerts_worker.output()[-3000:])
    assert Evaluation.objects.count() == 3 and Alert.objects.count() == 1
    assert [m["To"] for m in smtp.messages] == ["oncall@team.example"]
    assert (
        f"{BASE_URL}/alerts/{alert.id}/acknowledge/"
        in smtp.messages[0].get_body(("plain",)).get_content()
    )
    assert Notification.objects.get().sent_at is not None
