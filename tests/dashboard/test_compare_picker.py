"""The compare page's endpoint picker (dashboard.compare_picker): every live endpoint once, in
its model family, its text escaped, the chosen ones checked and the unmeasured ones marked."""

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client):
    data.default_workloads()
    data.vantage()
    client.force_login(User.objects.create_user("ana"))
    return client


def labels(html: str) -> dict[str, str]:
    """Each picker checkbox's slug → its whole <label> element."""
    picker = html.split('id="picker"', 1)[1].split('id="picker-none"', 1)[0]
    found = re.findall(r"(<label data-search=.*?</label>)", picker)
    return {re.search(r'name="e" value="([^"]+)"', label)[1]: label for label in found}


def test_it_lists_every_live_endpoint_with_its_marks_and_escapes_its_names(
    user_client, monkeypatch
):
    monkeypatch.delenv("TOKSPEED_TEST_PICKER_KEY", raising=False)
    odd = data.provider("odd", name='Odd & "Co" <b>')
    data.endpoint(odd, "odd-one", display_name="Model <i>X</i> via Odd", model="x&y")
    data.endpoint(data.provider("sim", simulated=True), "sim-one", display_name="Model <i>X</i>")
    keyless = data.provider("keyless", api_key_env="TOKSPEED_TEST_PICKER_KEY")
    data.endpoint(keyless, "keyless-one", display_name="Other")
    data.endpoint(data.provider("off", enabled=False), "off-one", display_name="Other")
    data.endpoint(data.provider("on"), "paused-one", display_name="Other", enabled=False)
    gone = data.endpoint(data.provider("gone"), "gone-one", display_name="Other")
    gone.archived_at = datetime(2026, 1, 1, tzinfo=UTC)
    gone.save()

    html = user_client.get("/compare/?e=odd-one&e=off-one").content.decode()

    groups = re.findall(r'<fieldset class="picker-group" data-model="([^"]+)"', html)
    # "Other" is served by more providers, but none of them is measured: the family people can
    # compare comes first.
    assert groups == ["Model &lt;i&gt;X&lt;/i&gt;", "Other"]
    assert '<legend>Other <span class="muted">· 3 providers</span></legend>' in html
    found = labels(html)
    assert sorted(found) == ["keyless-one", "odd-one", "off-one", "paused-one", "sim-one"]
    assert found["odd-one"] == (
        '<label data-search="model &lt;i&gt;x&lt;/i&gt; model &lt;i&gt;x&lt;/i&gt; via odd '
        'x&amp;y odd &amp; &quot;co&quot; &lt;b&gt;"><input type="checkbox" name="e" '
        'value="odd-one" checked> Odd &amp; &quot;Co&quot; &lt;b&gt; '
        '<span class="muted">Model &lt;i&gt;X&lt;/i&gt; via Odd</span></label>'
    )
    assert " checked>" in found["off-one"] and " checked>" not in found["paused-one"]
    assert '<span class="badge sim">simulated</span>' in found["sim-one"]
    assert "simulated" not in found["odd-one"] and "not measured" not in found["sim-one"]
    assert 'title="TOKSPEED_TEST_PICKER_KEY is not set">not measured' in found["keyless-one"]
    for slug in ("off-one", "paused-one"):
        assert 'title="disabled in the admin">not measured' in found[slug]


def test_it_reads_the_picker_in_the_same_number_of_queries_however_many_endpoints(
    user_client, django_assert_num_queries
):
    data.endpoint(data.provider("first"), "first-one")
    with CaptureQueriesContext(connection) as few:
        assert user_client.get("/compare/").status_code == 200
    for index in range(6):
        data.endpoint(data.provider(f"extra-{index}"), f"extra-{index}")
    with django_assert_num_queries(len(few.captured_queries)):
        html = user_client.get("/compare/").content.decode()
    assert len(labels(html)) == 7


def test_it_lists_the_most_widely_served_measurable_family_first(user_client):
    for name in ("a", "b"):
        data.endpoint(data.provider(f"two-{name}"), f"two-{name}", display_name="Zeta")
    data.endpoint(data.provider("one"), "one-only", display_name="Alpha")
    for name in ("a", "b", "c"):
        provider = data.provider(f"off-{name}", enabled=False)
        data.endpoint(provider, f"off-{name}", display_name="Beta")

    html = user_client.get("/compare/").content.decode()

    groups = re.findall(r'<fieldset class="picker-group" data-model="([^"]+)"', html)
    assert groups == ["Zeta", "Alpha", "Beta"]
