"""The documentation stays a front door and a site: README.md short, each app README shorter, the
MkDocs site builds with --strict (a broken link, a missing anchor or a page left out of the nav
fails), loads nothing from the network, and the READMEs' relative links lead somewhere."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 150
APP_README_MAX_LINES = 80
# [text](target) in Markdown, and the src of an <img>; absolute URLs and anchors are skipped.
LINK = re.compile(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"")


def app_readmes() -> list[Path]:
    """Every README one level down: the apps' (alerts/, advisor/, …) and tokspeed/'s."""
    return sorted(p for p in ROOT.glob("*/README.md") if not p.parent.name.startswith("."))


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_it_keeps_readme_a_front_door_of_at_most_150_lines():
    lines = line_count(ROOT / "README.md")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move the detail to a page "
        "under docs/ and link it"
    )


def test_it_keeps_readme_the_two_commands_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in ("make run", "make test"):
        assert f"\n{command}\n```" in readme, f"README.md lost its `{command}` command block"
    assert "\nmake test\n" in ci, ".ci/run no longer runs README's test command, `make test`"


def test_it_keeps_each_app_readme_at_most_80_lines():
    readmes = app_readmes()
    assert {p.parent.name for p in readmes} >= {"alerts", "advisor", "benchmarks", "dashboard"}, (
        f"app READMEs found: {[str(p.relative_to(ROOT)) for p in readmes]}"
    )
    too_long = {
        str(p.relative_to(ROOT)): line_count(p)
        for p in readmes
        if line_count(p) > APP_README_MAX_LINES
    }
    assert not too_long, (
        f"app READMEs over {APP_README_MAX_LINES} lines: {too_long}; rules go to docs/, tuning "
        "rounds to dated files under bench/results/"
    )


def test_it_links_only_to_files_that_exist_from_the_readmes_and_bench_results():
    sources = [ROOT / "README.md", *app_readmes(), *sorted((ROOT / "bench/results").glob("*.md"))]
    broken = []
    for source in sources:
        for match in LINK.finditer(source.read_text(encoding="utf-8")):
            target = (match.group(1) or match.group(2)).split("#", 1)[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            if not (source.parent / target).exists():
                broken.append(f"{source.relative_to(ROOT)} -> {target}")
    assert not broken, f"relative links to files that do not exist: {broken}"


def mkdocs_missing() -> bool:
    return (
        importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None
    )


@pytest.mark.skipif(
    mkdocs_missing(),
    reason="mkdocs and mkdocs-material are not installed (pip install -r requirements-dev.txt)",
)
def test_it_builds_the_docs_site_strictly_with_nothing_loaded_from_the_network(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"
    for page in ("index", "getting-started/index", "concepts/index", "alerts/index"):
        assert (site / f"{page}.html").exists(), f"the site has no {page}.html"
    alerts = (site / "alerts/index.html").read_text(encoding="utf-8")
    assert "ALERTS_RECOVERY_ODDS" in alerts, "the alerts page does not tell the rules"
    loads = re.compile(r"<(?:script|link|img)[^>]+(?:src|href)=\"(?:https?:)?//[^\"]+\"")
    fetched = sorted(
        {
            f"{html.relative_to(site)}: {m.group(0)}"
            for html in site.rglob("*.html")
            for m in loads.finditer(html.read_text(encoding="utf-8"))
        }
    )
    assert not fetched, f"pages load from the network (fonts, scripts, images): {fetched[:5]}"


def anchors(page: Path) -> set[str]:
    """The ids MkDocs gives a page's headings (its default slugify)."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", h.lower()).strip()) for h in headings}


def test_it_tells_in_the_readme_how_to_add_a_channel_scrape_metrics_and_import_grafana():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    needed = ("add-a-channel", "scrape-metrics-with-prometheus", "import-the-grafana-dashboard")
    linked = set(re.findall(r"\]\(docs/channels\.md#([\w-]+)\)", readme))
    assert set(needed) <= linked, f"README.md does not link docs/channels.md#{set(needed) - linked}"
    missing = linked - anchors(ROOT / "docs/channels.md")
    assert not missing, f"README.md links docs/channels.md anchors that do not exist: {missing}"
    assert "contrib/grafana/tokspeed.json" in readme and "TOKSPEED_METRICS_TOKEN" in readme
