"""Alert, AlertEvent and related rows (DESIGN.md §2, §7)."""
