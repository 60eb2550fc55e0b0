"""The agent-loop page's table rows, built in Python, are the markup its template's loop wrote."""

from django.template import Context, Template

from dashboard.views.agent_loop_html import loop_rows_html

# The loop dashboard/agent_loop.html ran over its projections before its rows were built in
# Python.
TEMPLATE_LOOP = """{% load dashboard_format %}  {% for p in projections %}
    <tr data-slug="{{ p.slug }}"><td class="name"><a href="{% url 'dashboard:endpoint' p.slug %}">{{ p.label }}</a><span class="sub">{{ p.provider }}{% if p.simulated %} <span class="badge sim">simulated</span>{% endif %}</span></td>
      <td class="num strong wall">{{ p.wall_s|seconds }}</td><td class="num cost">{{ p.cost_usd|usd_small }}{% if p.input_tokens_per_call %}<span class="spread">{{ p.input_tokens_per_call|tokens }} in + {{ tokens_per_call }} out per call</span>{% endif %}</td><td class="num">{{ p.wall_best_s|seconds }}–{{ p.wall_worst_s|seconds }}</td>
      <td><span class="verdict v-{{ p.verdict|slugify }}">{{ p.verdict }}</span></td>
      <td class="num">{{ p.waiting_s|seconds }}</td><td class="num">{{ p.decoding_s|seconds }}</td><td class="num">{{ p.tool_total_s|seconds }}</td>
      <td class="num">{{ p.per_call_s|seconds }}</td><td class="num">{{ p.ttft_ms|ms }}</td><td class="num">{{ p.decode_tps|tps }}{% saturation_mark p.saturated_runs p.runs %}</td></tr>
  {% endfor %}
"""  # noqa: E501


def _projection(slug: str, **fields) -> dict:
    return {
        "slug": slug,
        "label": slug.title(),
        "provider": "Acme",
        "simulated": False,
        "ttft_ms": 412.0,
        "decode_tps": 71.25,
        "runs": 12,
        "saturated_runs": 0,
        "per_call_s": 0.84,
        "waiting_s": 8.24,
        "decoding_s": 224.6,
        "tool_total_s": 0.0,
        "wall_s": 232.84,
        "wall_best_s": 201.5,
        "wall_worst_s": None,
        "verdict": "background job",
        "input_tokens_per_call": 1_003.4,
        "cost_usd": 0.0312,
        **fields,
    }


PROJECTIONS = [
    _projection("plain"),
    _projection("quick", wall_s=0.42, wall_best_s=0.3, wall_worst_s=0.61, verdict="immediate"),
    _projection(
        "odd-names",
        label="Model <b>&amp; \"co\" 'x'",
        provider="Tom & Jerry's <GPU>",
        simulated=True,
        verdict="holds attention",
        input_tokens_per_call=31_500.0,
    ),
    _projection("saturated", saturated_runs=3, runs=7, cost_usd=None, input_tokens_per_call=None),
    _projection("one-run", saturated_runs=1, runs=1, tool_total_s=20.0, cost_usd=1.5),
]


def test_the_rows_are_the_markup_the_template_wrote():
    for tokens_per_call in (800, 12_000):
        context = Context({"projections": PROJECTIONS, "tokens_per_call": tokens_per_call})
        expected = Template(TEMPLATE_LOOP).render(context)
        built = "  " + loop_rows_html(PROJECTIONS, tokens_per_call) + "\n"
        assert built == expected
    assert "Tom &amp; Jerry&#x27;s &lt;GPU&gt;" in built and "v-holds-attention" in built


def test_no_projections_no_rows():
    assert loop_rows_html([], 800) == ""
