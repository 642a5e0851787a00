"""Test-session settings: ``@pytest.mark.once`` tests are skipped when ``BED_SKIP_ONCE=1``.

They are long and give the same result on every Python (the README's long simulations); CI
runs them under one Python and skips them under the others, so that no check is lost and the
whole run stays short.  A plain ``python3 tests/run.py`` runs them.
"""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("BED_SKIP_ONCE") != "1":
        return
    skip = pytest.mark.skip(reason="run under one Python only (BED_SKIP_ONCE=1)")
    for item in items:
        if item.get_closest_marker("once") is not None:
            item.add_marker(skip)
