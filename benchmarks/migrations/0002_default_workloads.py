"""Default workloads, vantage and schedule for every new install (docs/design.md §3, issue 3)."""

from django.db import migrations

WORKLOADS = [
    # slug, name, context_tokens, concurrency (0 = endpoint peak), repetitions
    ("base", "Base (standard prompt)", 0, 1, 5),
    ("long-context", "Long context (~30k tokens)", 30_000, 1, 5),
    ("parallel-10", "Parallel ×10", 0, 10, 5),
    ("peak", "Peak concurrency", 0, 0, 1),
]


def create_defaults(apps, schema_editor):
    Workload = apps.get_model("benchmarks", "Workload")
    Vantage = apps.get_model("benchmarks", "Vantage")
    Schedule = apps.get_model("benchmarks", "Schedule")
    for slug, name, context_tokens, concurrency, repetitions in WORKLOADS:
        Workload.objects.get_or_create(
            slug=slug,
            defaults={
                "name": name,
                "context_tokens": context_tokens,
                "concurrency": concurrency,
                "repetitions": repetitions,
            },
        )
    vantage, _ = Vantage.objects.get_or_create(
        slug="local", defaults={"label": "This machine", "queue": "local", "is_default": True}
    )
    if not Schedule.objects.exists():
        schedule = Schedule.objects.create(
            name="Default: 3 a day", times_of_day=["02:00", "10:00", "18:00"], vantage=vantage
        )
        schedule.workloads.set(Workload.objects.filter(slug__in=["base", "long-context"]))


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0001_initial")]
    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
