"""Request and response shapes of the REST API, one module per resource family."""
