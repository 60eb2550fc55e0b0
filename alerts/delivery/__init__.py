"""Telling people: the outbox, emails, recipients, subscriptions and their signed tokens."""
