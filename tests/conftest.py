"""Test-session settings: ``@pytest.mark.once`` and ``@pytest.mark.simulation`` tests are
skipped when ``BED_SKIP_ONCE=1``, ``simulation`` ones also when ``BED_SKIP_SIMULATIONS=1``;
under CI (``CI`` set) hypothesis draws its examples from a fixed seed.

They are long and give the same result on every Python (the README's long simulations,
Monte Carlo checks of coverage, power and type-I error on fixed seeds, and the statistics'
comparisons with NumPy's resamples and sign patterns); CI runs them under one Python and skips
them under the others, so that no check is lost and the whole run stays short.  The
``simulation`` ones (coverage and error-rate loops, the README's long runs) reach no line the
others do not: CI runs them without coverage, where they take a third of the time they take
measured.  A plain ``python3 tests/run.py`` runs them all.
"""

import os

import pytest
from hypothesis import settings

# CI draws the same hypothesis examples every run (a red CI is then a defect found, not a new
# example's luck); a run by hand explores afresh.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(config, items):
    once = os.environ.get("BED_SKIP_ONCE") == "1"
    simulations = once or os.environ.get("BED_SKIP_SIMULATIONS") == "1"
    skip = pytest.mark.skip(reason="run under one Python only (BED_SKIP_ONCE=1 or "
                            "BED_SKIP_SIMULATIONS=1)")
    for item in items:
        if (once and item.get_closest_marker("once") is not None
                or simulations and item.get_closest_marker("simulation") is not None):
            item.add_marker(skip)
