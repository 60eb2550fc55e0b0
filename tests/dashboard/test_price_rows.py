"""The price page's table rows, built in Python, are the markup its template's loop wrote."""

from django.template import Context, Template

from dashboard.views.price_html import price_rows_html

# The loop dashboard/price.html ran over its points before its rows were built in Python.
TEMPLATE_LOOP = """{% load dashboard_format %}  {% for p in points %}
    <tr data-slug="{{ p.slug }}"><td class="name"><a href="{% url 'dashboard:endpoint' p.slug %}">{{ p.label }}</a><span class="sub">{{ p.provider }}{% if p.simulated %} <span class="badge sim">simulated</span>{% endif %}</span></td>
      <td class="num" data-label="Out /1M">{{ p.price_out|usd }}</td><td class="num" data-label="In /1M">{{ p.price_in|usd }}</td><td class="num" data-label="Per request">{{ p.cost|usd_small }}</td>
      <td class="num" data-label="TTFT p50">{{ p.ttft_p50_ms|ms }}</td><td class="num" data-label="Decode tok/s">{{ p.decode_tps_p50|tps }}{% saturation_mark p.saturated_runs p.runs %}</td>
      <td class="frontier">{% if p.slug in frontier %}<span class="status s-ok">on the frontier</span>{% endif %}</td></tr>
  {% endfor %}
"""  # noqa: E501


def _point(slug: str, **fields) -> dict:
    return {
        "slug": slug,
        "label": slug.title(),
        "provider": "Acme",
        "simulated": False,
        "price_out": 2.0,
        "price_in": 0.5,
        "decode_tps_p50": 71.25,
        "ttft_p50_ms": 412.0,
        "cost": 0.00041,
        "runs": 12,
        "saturated_runs": 0,
        **fields,
    }


POINTS = [
    _point("plain"),
    _point("on-frontier", price_out=0.075, price_in=0.02, cost=1.5, decode_tps_p50=1204.0),
    _point(
        "odd-names",
        label="Model <b>&amp; \"co\" 'x'",
        provider="Tom & Jerry's <GPU>",
        simulated=True,
    ),
    _point("saturated", saturated_runs=3, runs=7, ttft_p50_ms=12_400.0, decode_tps_p50=99.97),
    _point("one-run", saturated_runs=1, runs=1, cost=0.0, price_in=0.0),
    _point(
        "unknown",
        price_out=None,
        price_in=None,
        cost=None,
        ttft_p50_ms=None,
        decode_tps_p50=None,
        runs=0,
    ),
]


def test_the_rows_are_the_markup_the_template_wrote():
    frontier = ["on-frontier", "saturated"]
    expected = Template(TEMPLATE_LOOP).render(Context({"points": POINTS, "frontier": frontier}))
    built = "  " + price_rows_html(POINTS, set(frontier)) + "\n"
    assert built == expected
    assert "Tom &amp; Jerry&#x27;s &lt;GPU&gt;" in built and "client saturated in 3 of 7" in built


def test_no_points_no_rows():
    assert price_rows_html([], set()) == ""
