"""Helpers of the integration tests: real managers, databases, and waiting for a condition."""
