"""What the read side has seen change: the newest finished run and the newest run row.

Readers derive ETag and Last-Modified from it and use it as the version of cached responses,
so a run finishing (or a run row being added) retires every cached view at once. Both are
single index lookups (run_finished and the primary key), whatever the length of the history.
"""

from datetime import datetime

from django.db.models import Max

from .models import Run


def newest_finished() -> tuple[datetime | None, str]:
    """(when the newest run finished, a tag that changes whenever a run finishes or is added)."""
    found = Run.objects.aggregate(at=Max("finished_at"), newest=Max("id"))
    return found["at"], run_tag(found["at"], found["newest"])


def run_tag(finished_at: datetime | None, newest_id: int | None) -> str:
    """The tag of newest_finished from its two figures (for a caller that reads them itself)."""
    return f"{finished_at.isoformat() if finished_at else ''}#{newest_id or 0}"
