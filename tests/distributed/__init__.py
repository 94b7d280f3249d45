"""Helpers shared by the Ray tests (tests/test_distributed*.py)."""
