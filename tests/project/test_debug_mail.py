"""Under `make run` alert emails go to files; /debug/mail/ lists them (DEBUG only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.mail import send_mail
from django.test import Client, override_settings

from tokspeed.launcher import Launcher

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"


def demo_mail(folder: Path, *, debug: bool) -> override_settings:
    """Settings as `make run` sets them: emails to files in `folder`, a public dashboard."""
    return override_settings(
        DEBUG=debug, EMAIL_BACKEND=FILE_BACKEND, EMAIL_FILE_PATH=str(folder),
        TOKSPEED_PUBLIC_DASHBOARD=True,
    )  # fmt: skip


@pytest.mark.django_db
def test_it_lists_the_emails_the_demo_wrote_to_files(client: Client, tmp_path: Path) -> None:
    with demo_mail(tmp_path, debug=True):
        send_mail("Decode speed of m @ Acme is 30 % slower", "Details:\nhttp://x/alerts/1/",
                  "tokspeed@localhost", ["oncall@example.com"])  # fmt: skip
        send_mail("Acme is answering again", "ok", "tokspeed@localhost", ["b@example.com"])
        html = client.get("/debug/mail/").content.decode()

    assert "Decode speed of m @ Acme is 30 % slower" in html and "oncall@example.com" in html
    assert "Acme is answering again" in html and "http://x/alerts/1/" in html
    assert str(tmp_path) in html


@pytest.mark.django_db
def test_it_has_no_mail_page_outside_debug(client: Client, tmp_path: Path) -> None:
    with demo_mail(tmp_path, debug=False):
        assert client.get("/debug/mail/").status_code == 404


def test_it_sends_demo_mail_to_files_unless_smtp_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EMAIL_HOST", raising=False)
    monkeypatch.delenv("EMAIL_BACKEND", raising=False)
    launcher = Launcher(mail_dir=tmp_path / "mail")
    env = launcher.env()
    assert env["EMAIL_BACKEND"] == FILE_BACKEND and env["EMAIL_FILE_PATH"] == str(tmp_path / "mail")

    monkeypatch.setenv("EMAIL_HOST", "smtp.example.com")  # the user's own server wins
    assert "EMAIL_FILE_PATH" not in Launcher(mail_dir=tmp_path / "mail").env()


def test_it_puts_the_simulator_on_9100_or_the_next_free_port() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        taken.listen()
        chosen = Launcher(simulator_port=port).simulator_listen_port()
        assert port < chosen < port + 100  # the next free one after the taken port
    assert Launcher().simulator_port == 9100
