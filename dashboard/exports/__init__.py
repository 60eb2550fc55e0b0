"""Background exports: compressed files of runs or samples, built by a worker, linked, emailed."""
