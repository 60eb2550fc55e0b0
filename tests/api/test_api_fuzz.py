"""Schema-driven fuzz of the REST API: generated requests, valid and invalid, never get a 500.

schemathesis reads /api/v1/schema/ and hypothesis generates requests for every operation (path,
query and body; with the negative mode, ones that break the schema), sent through the WSGI app
as a staff user so write paths run too. Examples are bounded: the whole file runs in well under
a minute.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode, checks
from schemathesis.specs.openapi import checks as openapi_checks

from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

EXAMPLES = 8
CHECKS = [
    checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.negative_data_rejection,
]
# The WSGI app as a server runs it, without wsgi.py's start-up check (settings for tests hold
# their own SECRET_KEY; a fresh clone has no var/secret_key).
application = get_wsgi_application()
# The schema view needs no database: it can be read while tests are collected.
SCHEMA = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]
# Negative cases break the query or the body; an operation with neither (a GET or DELETE of one
# object) has nothing to break beyond its path value, which positive cases already vary.
CASES = [(operation, GenerationMode.POSITIVE) for operation in OPERATIONS] + [
    (operation, GenerationMode.NEGATIVE)
    for operation in OPERATIONS
    if len(operation.query) or len(operation.body)
]


@pytest.fixture
def keep_connection():
    """Calling the WSGI app directly sends request_finished, whose handler would close the
    connection holding the test's transaction; Django's test client disconnects it too."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def staff_token(django_user_model, allow_private) -> str:
    user = django_user_model.objects.create_user("fuzz", is_staff=True)
    # Something to find: a provider, an endpoint, runs and samples to page through.
    endpoint = make_endpoint(make_provider("acme"), "acme-fast")
    for hours in (1, 9, 17):
        make_sample(make_run(endpoint, hours_ago(hours)), 0)
    return Token.objects.create(user=user).key


def test_it_has_every_resource_in_the_schema():
    labels = {operation.label for operation in OPERATIONS}
    assert "POST /api/v1/runs/" in labels and "GET /api/v1/leaderboard/" in labels
    assert len(labels) >= 30


@pytest.mark.parametrize(
    ("operation", "mode"), CASES, ids=[f"{op.label} {mode.value}" for op, mode in CASES]
)
def test_it_never_answers_500_to_generated_requests(
    operation, mode, staff_token, keep_connection, fresh_throttles
):
    headers = {"Authorization": f"Token {staff_token}"}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    fuzz()
