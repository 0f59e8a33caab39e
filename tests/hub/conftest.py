"""Hub tests: decide whether a hub can run here.

The hub needs node and npm (configurable-http-proxy comes from npm). Where they are missing the
hub tests are skipped with the reason, except in CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import os

import hubrun  # beside this file: pytest puts a conftest's folder on sys.path
import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1"}


@pytest.fixture(scope="session")
def proxy():
    """configurable-http-proxy (installed into our cache folder on first use)."""
    try:
        return hubrun.proxy_command()
    except FileNotFoundError as error:
        if in_ci():
            pytest.fail(f"{error}: CI must install nodejs and npm")
        pytest.skip(f"{error} (apt-get install nodejs npm)")
