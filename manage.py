#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
    from django.core.management import execute_from_command_line

    from tokspeed.state import settle_secret

    settle_secret()  # DEBUG: make or read the per-install secret, as `manage.py up` does

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
