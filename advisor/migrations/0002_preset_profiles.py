"""The four preset workload profiles of issue 14 (a team edits or copies them)."""

from django.db import migrations

PRESETS = [
    {
        "slug": "chat-turn",
        "name": "Chat turn",
        "description": "One reply to a user in a chat: a short prompt with history, read as it "
        "streams; it must hold attention.",
        "input_tokens": 2_000,
        "cached_share": 0.5,
        "output_tokens": 400,
        "calls": 1,
        "budget_s": 10.0,
    },
    {
        "slug": "rag-30k",
        "name": "RAG answer over 30K context",
        "description": "Retrieved documents (~30,000 tokens) above a question; one answer.",
        "input_tokens": 30_000,
        "output_tokens": 500,
        "calls": 1,
        "budget_s": 10.0,
    },
    {
        "slug": "coding-agent-20",
        "name": "20-step coding agent",
        "description": "20 serial calls over a growing repository context (mostly cached), "
        "800 tokens each, 2 s of tools between calls; a background job.",
        "input_tokens": 8_000,
        "cached_share": 0.75,
        "output_tokens": 800,
        "calls": 20,
        "tool_s": 2.0,
        "budget_s": 300.0,
    },
    {
        "slug": "batch-summarisation",
        "name": "Batch summarisation",
        "description": "A nightly batch: 10 documents in flight at once, each summarised in one "
        "call; throughput and price matter more than seconds.",
        "input_tokens": 4_000,
        "output_tokens": 400,
        "calls": 1,
        "concurrency": 10,
        "budget_s": 120.0,
    },
]


def create_presets(apps, schema_editor):
    WorkloadProfile = apps.get_model("advisor", "WorkloadProfile")
    for preset in PRESETS:
        fields = dict(preset)
        slug = fields.pop("slug")
        WorkloadProfile.objects.get_or_create(slug=slug, defaults={**fields, "preset": True})


def remove_presets(apps, schema_editor):
    WorkloadProfile = apps.get_model("advisor", "WorkloadProfile")
    WorkloadProfile.objects.filter(slug__in=[p["slug"] for p in PRESETS], preset=True).delete()


class Migration(migrations.Migration):
    dependencies = [("advisor", "0001_workload_profiles")]
    operations = [migrations.RunPython(create_presets, remove_presets)]
