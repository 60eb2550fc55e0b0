"""QuickSelect (dashboard/widgets.py) writes what Django's Select writes (blank lines aside),
and the runs page's filter bar keeps its choices and the one chosen."""

import re

import pytest
from django import forms
from django.contrib.auth.models import User

from dashboard.widgets import QuickSelect
from tests import dashboard_data as data

CHOICES = [("", "Any"), ("a&b", 'Tom & "Jerry" <x>'), ("2", "two"), ("it's", "it's")]


def lines(html: str) -> list[str]:
    return [line for line in str(html).splitlines() if line.strip()]


@pytest.mark.parametrize("value", [None, "", "a&b", "2", ["it's"], "absent"])
@pytest.mark.parametrize(
    "attrs", [None, {"id": "id_x"}, {"id": "id_x", "required": True, "disabled": False}]
)
def test_it_writes_the_markup_django_select_writes(value, attrs):
    quick = QuickSelect(attrs={"class": "a<b"}, choices=CHOICES)
    django_select = forms.Select(attrs={"class": "a<b"}, choices=CHOICES)
    assert lines(quick.render("pick&", value, attrs)) == lines(
        django_select.render("pick&", value, attrs)
    )


@pytest.mark.django_db
def test_it_lists_every_endpoint_and_keeps_the_chosen_one_on_the_runs_page(client):
    data.default_workloads()
    data.vantage()
    client.force_login(User.objects.create_user("ana"))
    for index in range(5):
        data.endpoint(data.provider(f"p{index}"), f"ep-{index}")
    html = client.get("/runs/?endpoint=ep-3").content.decode()
    select = html.split('<select name="endpoint" id="id_endpoint">', 1)[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', select) == ["", *(f"ep-{i}" for i in range(5))]
    assert re.findall(r'<option value="([^"]*)" selected>', select) == ["ep-3"]
