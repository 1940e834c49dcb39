"""Shared plans: records several services hold, derived from the World (one module per domain)."""
