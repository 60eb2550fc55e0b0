"""Validation of schedule settings (times of day, or an interval)."""

import json
from datetime import time

from django.core.exceptions import ValidationError

from providers.effort import effort_problem
from providers.prompt import tool_from_dict

MIN_INTERVAL_MINUTES = 1


def parse_time_of_day(value: object) -> time:
    """One "HH:MM" string (in the schedule's time zone) → a time; a clear ValidationError for
    anything else."""
    if not isinstance(value, str):
        raise ValidationError(f'Times of day are "HH:MM" strings, not {value!r}.')
    hours, sep, minutes = value.strip().partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit() or len(minutes) != 2:
        raise ValidationError(f'"{value}" is not a time of day: use "HH:MM", e.g. "02:00".')
    hour, minute = int(hours), int(minutes)
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise ValidationError(f'"{value}" is not a time of day: hours 00–23, minutes 00–59.')
    return time(hour, minute)


def parse_times_of_day(values: object) -> list[time]:
    """A list of "HH:MM" strings → sorted, distinct times."""
    if not isinstance(values, list):
        raise ValidationError('Times of day must be a list of "HH:MM" strings, e.g. ["02:00"].')
    return sorted({parse_time_of_day(value) for value in values})


def validate_schedule_timing(times_of_day: object, interval_minutes: int | None) -> None:
    """A schedule fires at times of day or every N minutes: exactly one of the two."""
    has_times = bool(times_of_day)
    if has_times and interval_minutes:
        raise ValidationError("Give times of day or an interval, not both.")
    if not has_times and not interval_minutes:
        raise ValidationError("Give times of day or an interval in minutes.")
    if has_times:
        parse_times_of_day(times_of_day)
    elif interval_minutes < MIN_INTERVAL_MINUTES:
        raise ValidationError(f"The interval must be at least {MIN_INTERVAL_MINUTES} minute.")


# ~4 bytes of text per token, for prompts, padding and replies alike.
BYTES_PER_TOKEN = 4


def workload_ceiling_errors(
    *,
    concurrency: int,
    repetitions: int,
    prompt: str,
    context_tokens: int,
    max_output_tokens: int,
) -> list[str]:
    """Why a run of this shape would exhaust a worker; [] when it fits the ceiling.

    Checked as products, not one limit at a time: requests held at once (concurrency), requests
    per run (concurrency × repetitions), and bytes held at once = concurrency × (prompt +
    context padding + reply) at ~4 bytes per token. The ceilings are settings (docs/operations.md).
    """
    from django.conf import settings

    errors = []
    if concurrency > settings.TOKSPEED_MAX_CONCURRENCY:
        errors.append(
            f"Concurrency {concurrency:,} is above the ceiling of "
            f"{settings.TOKSPEED_MAX_CONCURRENCY:,} requests at once."
        )
    requests = concurrency * repetitions
    if requests > settings.TOKSPEED_MAX_REQUESTS_PER_RUN:
        errors.append(
            f"{concurrency:,} concurrent × {repetitions:,} rounds = {requests:,} requests per run, "
            f"above the ceiling of {settings.TOKSPEED_MAX_REQUESTS_PER_RUN:,}."
        )
    per_request = len(prompt.encode()) + (context_tokens + max_output_tokens) * BYTES_PER_TOKEN
    held = concurrency * per_request
    if held > settings.TOKSPEED_MAX_INFLIGHT_BYTES:
        errors.append(
            f"{concurrency:,} concurrent requests × {per_request / 2**20:,.1f} MiB each "
            f"(prompt, {context_tokens:,} context tokens, {max_output_tokens:,} output tokens) "
            f"= {held / 2**20:,.0f} MiB held at once, above the ceiling of "
            f"{settings.TOKSPEED_MAX_INFLIGHT_BYTES / 2**20:,.0f} MiB."
        )
    return errors


MAX_SUITE_PROMPTS = 200
MAX_TOOLS = 128


def validate_prompt_suite(value: object) -> None:
    """A prompt suite: a list of non-empty strings (empty list: the workload's one prompt)."""
    if not isinstance(value, list):
        raise ValidationError("A prompt suite is a list of prompts (strings).")
    if len(value) > MAX_SUITE_PROMPTS:
        raise ValidationError(f"At most {MAX_SUITE_PROMPTS} prompts in a suite.")
    for index, prompt in enumerate(value, start=1):
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValidationError(f"Prompt {index} of the suite is not a non-empty string.")
        if "\x00" in prompt:
            raise ValidationError(f"Prompt {index} of the suite contains a NUL character.")


def validate_tools(value: object) -> None:
    """Tool schemas: [{"name", "description", "parameters": {JSON Schema}}], names distinct."""
    if not isinstance(value, list):
        raise ValidationError('Tools are a list of {"name", "description", "parameters"}.')
    if len(value) > MAX_TOOLS:
        raise ValidationError(f"At most {MAX_TOOLS} tools.")
    if "\\u0000" in json.dumps(value):
        raise ValidationError("Tools must not contain NUL characters.")
    names = set()
    for index, raw in enumerate(value, start=1):
        try:
            tool = tool_from_dict(raw)
        except ValueError as exc:
            raise ValidationError(f"Tool {index}: {exc}.") from None
        if tool.name in names:
            raise ValidationError(f"Tool {index}: the name {tool.name!r} is used twice.")
        names.add(tool.name)


def validate_reasoning_effort(value: str) -> None:
    """A workload's reasoning effort: a value some adapter can send (providers.effort)."""
    problem = effort_problem(value)
    if problem:
        raise ValidationError(problem)
