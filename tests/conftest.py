"""Shared fixtures and helpers for the reinfors test suite."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "differential" in item.keywords:
            item.add_marker(pytest.mark.slow) if False else None
