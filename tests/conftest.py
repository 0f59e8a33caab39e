"""Shared test setup."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def learner_mode(monkeypatch):
    """Checks report instead of raising, as in a learner's notebook, unless a test opts in.

    Tests that need grading mode set ``ATTNLAB_REQUIRE_CORRECT=1`` with ``monkeypatch``.
    """
    monkeypatch.delenv("ATTNLAB_REQUIRE_CORRECT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
