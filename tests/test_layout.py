"""The layout stays true: imports run one way, and the stamping transport stays private.

dashboard → alerts → advisor → benchmarks → providers → tokspeed: a module may import its own app
and the apps below it, never one above. The graph is read with ast (imports inside functions
count too), so a lazy import cannot hide an arrow that runs back up.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Highest first. tokspeed's URL conf and WSGI entry wire the apps together by dotted strings.
LAYERS = ["dashboard", "alerts", "advisor", "benchmarks", "providers", "tokspeed"]
TRANSPORT = "benchmarks.measure.http"
MEASURE = "benchmarks.measure"
# The detector's statistics stay pure: no Django, no ORM, no project module but these.
DETECTION = "alerts.detection"
DETECTION_MAY_IMPORT = (DETECTION, "benchmarks.buckets")
FRAMEWORKS = ("django", "rest_framework", "celery", "kombu", "psycopg")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, relative imports resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            # `from pkg import sub` imports the submodule when there is one.
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                if _exists(candidate):
                    found.add(candidate)
    return found


def _exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def app_sources() -> list[Path]:
    return [
        path
        for app in LAYERS
        if (ROOT / app).is_dir()
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def graph() -> dict[str, set[str]]:
    return {
        module_name(path): {m for m in imported_modules(path) if m.split(".")[0] in LAYERS}
        for path in app_sources()
    }


def layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_it_finds_the_apps_it_guards():
    modules = graph()

    assert {m.split(".")[0] for m in modules} >= {"dashboard", "alerts", "benchmarks", "providers"}
    assert "benchmarks.measure.http.connection" in modules


def test_it_allows_no_import_that_runs_back_up():
    upward = sorted(
        f"{source} imports {target}"
        for source, targets in graph().items()
        for target in targets
        if layer(target) < layer(source)
    )

    assert upward == [], "imports that run back up:\n" + "\n".join(upward)


def test_it_keeps_the_stamping_transport_inside_the_measuring_client():
    reaching_in = sorted(
        f"{source} imports {target}"
        for source, targets in graph().items()
        for target in targets
        if target.startswith(TRANSPORT) and not source.startswith(MEASURE)
    )

    assert reaching_in == [], "\n".join(reaching_in)


def test_it_has_no_circle_of_imports():
    modules = graph()
    # A package's __init__ re-exporting its submodules is not a loop of meaning: drop those edges.
    edges = {
        source: {
            t for t in targets if t in modules and t != source and not source.startswith(t + ".")
        }
        for source, targets in modules.items()
    }
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                circles.append(" → ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])

    assert circles == [], "circles:\n" + "\n".join(circles)


def test_it_keeps_the_detectors_statistics_free_of_django_and_the_database():
    impure = sorted(
        f"{module_name(path)} imports {target}"
        for path in sorted((ROOT / "alerts" / "detection").rglob("*.py"))
        for target in imported_modules(path)
        if target.split(".")[0] in FRAMEWORKS
        or (target.split(".")[0] in LAYERS and not target.startswith(DETECTION_MAY_IMPORT))
    )

    assert (ROOT / "alerts" / "detection" / "detector.py").is_file()
    assert impure == [], "the detection package reaches outside its statistics:\n" + "\n".join(
        impure
    )
