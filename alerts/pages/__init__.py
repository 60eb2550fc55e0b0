"""What the alert pages and the API read: presenters and selectors over the alert models."""
