"""Read-side queries shared by the dashboard pages and the REST API (one selector behind both)."""
