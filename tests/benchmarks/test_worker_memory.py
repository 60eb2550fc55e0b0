"""A worker's pool process stays flat without recycling: what a task leaves behind in reference
cycles is collected after the task, and recycling can be turned off (0) to check it."""

from __future__ import annotations

import gc
import weakref

import pytest
from celery.signals import task_postrun

import benchmarks.tasks  # noqa: F401 - connects the after-task handler
from tests.celery_helpers import start_worker, workers
from tests.fault_helpers import redis_server


class Node:
    def __init__(self) -> None:
        self.me = self


def test_it_collects_what_a_task_left_in_reference_cycles_after_the_task() -> None:
    gc.disable()  # no collection by allocation count: only the after-task one may free it
    try:
        left = Node()
        gone = weakref.ref(left)
        del left
        assert gone() is not None  # a cycle: reference counting alone never frees it
        task_postrun.send(sender=None, task_id="t", task=None)
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_starts_a_worker_that_never_recycles_its_pool_processes() -> None:
    with (
        redis_server() as own_redis,
        workers(
            start_worker(
                name="w-flat",
                queues=["flat"],
                broker_url=own_redis.url,
                pool="prefork",
                TOKSPEED_WORKER_MAX_TASKS_PER_CHILD="0",
                TOKSPEED_WORKER_MAX_MEMORY_PER_CHILD_KB="0",
            )
        ) as (worker,),
    ):
        assert worker.process.poll() is None
    assert "maxtasksperchild must be" not in worker.output()
