"""tokspeed's REST API (/api/v1/): thin DRF views over the models and the dashboard's selectors."""
