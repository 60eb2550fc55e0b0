"""A run served below the lane it asked for (Run.downgraded, docs/workloads.md "Lanes") is not
that lane's speed: the alert series leaves it out, so a priority lane starved to standard opens
no regression, while the same slow runs served in their lane do."""

from datetime import timedelta

import pytest
import time_machine

from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert
from alerts.testing import daily_slots, store_history
from benchmarks.models import Run
from tests.alerts.test_alert_emails import T0, make_series

pytestmark = pytest.mark.django_db


@time_machine.travel(T0 + timedelta(hours=28), tick=False)
@pytest.mark.parametrize(("downgraded", "opens"), [(True, False), (False, True)])
def test_it_keeps_runs_served_below_their_lane_out_of_the_alert_series(downgraded, opens):
    series = make_series()
    series["endpoint"].lane = "priority"
    series["endpoint"].save(update_fields=["lane"])
    steady = {"decode": lambda s: 150.0, "ttft": lambda s: 300.0}
    store_history(**series, slots=daily_slots(end=T0, days=15), **steady)
    slow = store_history(
        **series,
        slots=[T0 + timedelta(hours=25 + k) for k in range(3)],
        decode=lambda s: 60.0,
        ttft=lambda s: 900.0,
        seed=1,
    )
    Run.objects.filter(id__in=[run.id for run in slow]).update(
        lane="priority", downgraded=downgraded
    )
    outcomes = [evaluate_after_run(run.id) for run in slow]
    assert any(outcome.opened for outcome in outcomes) is opens
    assert Alert.objects.filter(endpoint=series["endpoint"]).exists() is opens
