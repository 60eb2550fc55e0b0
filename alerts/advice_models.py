""" "The advice changed": the recommendation for a workload profile, tracked with hysteresis."""

from django.db import models

from advisor.models import WorkloadProfile
from providers.models import Endpoint


class AdviceState(models.Model):
    """What the advisor recommends for a profile, and a challenger seen in a row."""

    profile = models.OneToOneField(
        WorkloadProfile, on_delete=models.CASCADE, related_name="advice_state"
    )
    recommended = models.ForeignKey(
        Endpoint, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    table = models.JSONField(default=list, blank=True, help_text="The ranking it stood on.")
    challenger = models.ForeignKey(
        Endpoint, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    challenger_count = models.PositiveSmallIntegerField(default=0)
    evaluated_at = models.DateTimeField(null=True, blank=True)
    # An evaluation counts only on new data: the newest run it stood on.
    newest_run = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.profile}: {self.recommended}"


class AdviceChange(models.Model):
    """One change of recommendation: the outbox row its emails are sent from (once)."""

    profile = models.ForeignKey(
        WorkloadProfile, on_delete=models.CASCADE, related_name="advice_changes"
    )
    before = models.ForeignKey(
        Endpoint, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    after = models.ForeignKey(
        Endpoint, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    before_label = models.CharField(max_length=300, blank=True)
    after_label = models.CharField(max_length=300, blank=True)
    before_table = models.JSONField(default=list, blank=True)
    after_table = models.JSONField(default=list, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    notified_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.profile}: {self.before_label} → {self.after_label}"
