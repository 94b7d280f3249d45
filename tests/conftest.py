"""Shared pytest configuration for the reinfors test suite.

Markers (declared in pyproject.toml): ``slow`` for long runs, ``differential`` for comparisons
against reinfors==0.4.0 in its side venv (they skip cleanly when it is absent).
"""
