"""What to tell someone when there is nothing to show yet (and how to fix it)."""

from benchmarks.models import Run
from providers.models import Endpoint


def empty_state(*, has_data: bool) -> str | None:
    """ "no_endpoints", "no_runs", "no_data_in_filters", or None when there is data to show."""
    if has_data:
        return None
    if not Endpoint.objects.exists():
        return "no_endpoints"
    if not Run.objects.exists():
        return "no_runs"
    return "no_data_in_filters"
