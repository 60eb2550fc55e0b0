"""The layout stays true: imports run one way, and the stamping transport stays private.

dashboard → alerts → advisor → benchmarks → providers → tokspeed: a module may import its own app
and the apps below it, never one above. The graph is read with ast (imports inside functions
count too), so a lazy import cannot hide an arrow that runs back up.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


# The longest a function may be: past this it is a list of steps that want names.
MAX_FUNCTION_LINES = 80


def project_sources() -> list[Path]:
    """Every Python file of the project but migrations, hidden folders and node_modules (the
    walk never enters them: the virtual environment is a folder of thousands)."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and name not in {"migrations", "node_modules"}
        ]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return sorted(found)


def test_it_keeps_every_function_within_80_lines():
    long = sorted(
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)"
        for path in project_sources()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES
    )

    assert project_sources(), "found no source to measure"
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_it_keeps_the_background_exports_apart_from_the_api_and_the_api_from_the_pages():
    """CSV rows (dashboard.csv_rows), run filters and the board helpers sit beside the API, so
    the background exports never import it, and the API never imports a page module."""
    crossing = sorted(
        f"{source} imports {target}"
        for source, targets in graph().items()
        for target in targets
        if (source.startswith("dashboard.exports") and target.startswith("dashboard.api"))
        or (source.startswith("dashboard.api") and target.startswith("dashboard.views"))
    )

    assert crossing == [], "\n".join(crossing)


def test_it_makes_every_task_and_send_use_the_tokspeed_celery_app():
    # The app is made on first use (tokspeed/__init__.py imports no Celery), so a module that
    # defines or sends a task imports it: Celery's current_app and shared_task would otherwise
    # fall back to a default app whose broker is amqp://localhost.
    allowed = {"celery.exceptions"}  # exception classes touch no app
    strays = sorted(
        f"{module_name(path)} imports {sorted(celery)} without tokspeed.celery"
        for path in app_sources()
        if module_name(path) != "tokspeed.celery"
        for imported in [imported_modules(path)]
        for celery in [{m for m in imported if m.split(".")[0] == "celery"} - allowed]
        if celery and "tokspeed.celery" not in imported
    )
    fallbacks = sorted(
        f"{module_name(path)} uses {name}"
        for path in app_sources()
        for name in ("current_app", "shared_task")
        if name in path.read_text()
    )

    assert strays == [] and fallbacks == [], "\n".join(strays + fallbacks)


def test_no_bench_script_hides_an_app() -> None:
    """`python bench/X.py` puts bench/ first on sys.path: a script named like an app (bench/
    advisor.py did) makes Django import the script instead of the app, and every bench fails."""
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    scripts = {path.stem for path in (ROOT / "bench").glob("*.py")}
    hidden = sorted(scripts & packages)
    assert not hidden, f"bench scripts named like a package: {hidden}"
