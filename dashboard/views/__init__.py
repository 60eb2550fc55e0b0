"""Dashboard pages: one small module per page; all read through benchmarks.selectors."""
