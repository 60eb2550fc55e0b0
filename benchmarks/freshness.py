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
    at = found["at"]
    return at, f"{at.isoformat() if at else ''}#{found['newest'] or 0}"
