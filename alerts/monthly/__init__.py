"""The monthly report (docs/dashboard.md, "The monthly report"): each endpoint's calendar month
against the month before, the winners per workload and per time of day, the month's alerts and
changes of advice. Its figures are the leaderboard's (benchmarks.selectors.leaderboard with the
month as an explicit window), never derived again; months are in the install's TIME_ZONE.
"""
