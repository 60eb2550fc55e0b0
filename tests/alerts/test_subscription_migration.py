"""One subscription mechanism: the addresses a workload profile listed become Subscriptions to
"the advice changed" for that profile (migration alerts 0007), and reach the same people."""

import pytest

from tests.migrations import migrate, migrate_to_latest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEFORE = [("alerts", "0006_channels_and_one_subscription"), ("advisor", "0003_run_digest")]
AFTER = [("alerts", "0007_profile_subscribers_to_subscriptions"),
         ("advisor", "0004_remove_profile_subscribers")]  # fmt: skip


def test_it_turns_profile_subscribers_into_confirmed_advice_subscriptions():
    old = migrate(BEFORE)
    Profile = old.get_model("advisor", "WorkloadProfile")
    Profile.objects.create(
        slug="chat", name="Chat", subscribers="ops@example.com\nLead@Example.com"
    )
    Profile.objects.create(slug="rag", name="RAG", subscribers="lead@example.com, ")
    Profile.objects.create(slug="none", name="None", subscribers="")
    try:
        new = migrate(AFTER)
        Subscription = new.get_model("alerts", "Subscription")
        made = {
            s.email: (
                sorted(p.slug for p in s.profiles.all()),
                s.topics,
                s.confirmed_at is not None,
            )
            for s in Subscription.objects.all()
        }
        assert made == {
            "lead@example.com": (["chat", "rag"], ["advice"], True),
            "ops@example.com": (["chat"], ["advice"], True),
        }, "one subscription per address, to every profile that listed it, already confirmed"
        back = migrate(BEFORE)
        restored = dict(
            back.get_model("advisor", "WorkloadProfile")
            .objects.filter(slug__in=["chat", "rag", "none"])  # not the profiles migrations seed
            .values_list("slug", "subscribers")
        )
        assert restored == {"chat": "lead@example.com\nops@example.com", "rag": "lead@example.com",
                            "none": ""}  # fmt: skip
    finally:
        migrate_to_latest()
