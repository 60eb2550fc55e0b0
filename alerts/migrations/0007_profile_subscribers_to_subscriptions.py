"""One subscription mechanism: the addresses a workload profile listed (one per line) become
Subscriptions to "the advice changed" for that profile. They were entered by staff and emailed
without a confirmation link before, so they start confirmed; one address listed by several
profiles becomes one subscription to all of them."""

from django.db import migrations
from django.utils import timezone


def addresses(text: str) -> set[str]:
    return {line.strip().lower() for line in text.replace(",", "\n").splitlines() if line.strip()}


def forward(apps, schema_editor):
    Profile = apps.get_model("advisor", "WorkloadProfile")
    Subscription = apps.get_model("alerts", "Subscription")
    profiles_of: dict[str, list] = {}
    for profile in Profile.objects.exclude(subscribers="").order_by("id"):
        for email in sorted(addresses(profile.subscribers)):
            profiles_of.setdefault(email, []).append(profile)
    now = timezone.now()
    for email, profiles in profiles_of.items():
        subscription = Subscription.objects.create(
            email=email, topics=["advice"], confirmed_at=now, user=None
        )
        subscription.profiles.set(profiles)


def backward(apps, schema_editor):
    Profile = apps.get_model("advisor", "WorkloadProfile")
    Subscription = apps.get_model("alerts", "Subscription")
    for profile in Profile.objects.all():
        # In Python, not `topics__contains`: JSON containment is PostgreSQL's, not SQLite's.
        theirs = Subscription.objects.filter(profiles=profile)
        emails = [s.email for s in theirs if "advice" in s.topics]
        profile.subscribers = "\n".join(sorted(emails))
        profile.save(update_fields=["subscribers"])
    migrated = Subscription.objects.filter(user__isnull=True)
    Subscription.objects.filter(id__in=[s.id for s in migrated if s.topics == ["advice"]]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0003_run_digest"),
        ("alerts", "0006_channels_and_one_subscription"),
    ]

    operations = [migrations.RunPython(forward, backward)]
