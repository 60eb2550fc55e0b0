"""The dashboard's one table of its own: the API throttle's counters when there is no Redis."""

from django.db import models


class ThrottleCount(models.Model):
    """Requests one client made in one fixed throttle window (dashboard.api.throttling).

    `key` names the client, the scope and the window; a row is counted up by one statement
    (an upsert) and deleted once its window has ended.
    """

    key = models.CharField(primary_key=True, max_length=255)
    count = models.PositiveIntegerField()
    expires = models.FloatField(db_index=True, help_text="When the window ends (Unix seconds).")

    class Meta:
        db_table = "tokspeed_throttle"

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"
