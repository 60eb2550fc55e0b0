"""The regression detector's pure statistics: rules, baselines, arms, verdicts and hysteresis.

Nothing here touches Django, the ORM or the clock: every function takes runs and returns a
verdict, so the bench (`bench/detector.py`) runs the same code as the service. The layout test
(`tests/project/test_layout.py`) keeps it that way. The rules are told once, in `docs/alerts.md`.
"""
