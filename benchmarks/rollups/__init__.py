"""Rollups: per endpoint × workload × concurrency × vantage × UTC day × time-of-day bucket,
mergeable quantile sketches of run medians plus counts and error tallies (long windows)."""
