"""Settings from the environment: a bad boolean stops start-up naming the variable; reading
settings creates no file or folder (the launcher and Celery's broker set-up do that)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def import_settings(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOKSPEED_")}
    clean.pop("SECRET_KEY", None)
    clean |= {"TOKSPEED_VAR_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": ""} | env
    return subprocess.run(
        [sys.executable, "-c", "import tokspeed.settings"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_stops_start_up_on_a_boolean_that_is_not_one(tmp_path):
    result = import_settings(tmp_path, TOKSPEED_PUBLIC_DASHBOARD="ture")
    assert result.returncode != 0
    assert "TOKSPEED_PUBLIC_DASHBOARD='ture' is not a boolean" in result.stderr


def test_it_reads_the_usual_spellings_of_booleans(tmp_path):
    for value in ("1", "true", "Yes", "on", "0", "false", "NO", "off", ""):
        assert import_settings(tmp_path, DEBUG=value).returncode == 0, value


def test_it_creates_no_files_when_settings_are_read(tmp_path):
    result = import_settings(tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # no var/, no secret, no broker folders


def test_it_makes_the_broker_folders_when_celery_sets_up(tmp_path):
    code = "from tokspeed.celery import app; app.conf.broker_url"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOKSPEED_")}
    clean |= {
        "TOKSPEED_VAR_DIR": str(tmp_path / "var"),
        "TOKSPEED_BROKER_DIR": str(tmp_path / "broker"),
        "DJANGO_SETTINGS_MODULE": "tokspeed.settings",
        "SECRET_KEY": "x" * 50,
    }
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, check=True, timeout=60)
    assert sorted(p.name for p in (tmp_path / "broker").iterdir()) == [
        "control",
        "processed",
        "queue",
    ]
    assert not (tmp_path / "var").exists()


def test_it_reads_settings_without_loading_celery(tmp_path):
    # The beat schedule is cron lines in settings: `speedtest` and the web never load Celery
    # for them (tests/measure/test_startup.py checks a whole speedtest start-up).
    probe = "import json, sys, tokspeed.settings; print(json.dumps(sorted(sys.modules)))"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOKSPEED_")}
    clean |= {"TOKSPEED_VAR_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": ""}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=clean, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    packages = {name.split(".")[0] for name in json.loads(result.stdout)}
    assert packages.isdisjoint({"celery", "kombu"}), packages & {"celery", "kombu"}


def test_it_gives_beat_every_settings_entry_as_a_crontab():
    from celery.schedules import crontab
    from django.conf import settings

    from tokspeed.celery import app

    beat = app.conf.beat_schedule
    assert sorted(beat) == sorted(settings.CELERY_BEAT_SCHEDULE)
    assert all(isinstance(entry["schedule"], crontab) for entry in beat.values())
    assert {name: entry["task"] for name, entry in beat.items()} == {
        name: entry["task"] for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
    }
    tick = beat["tick"]["schedule"]
    assert tick.minute == set(range(60)) and tick.hour == set(range(24))  # every minute
    assert beat["tick"]["options"] == {"expires": 55}
