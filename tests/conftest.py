"""Shared pytest settings for tests/.

The marker ``fast_path`` names a test of one of the fast path's own
shortcuts (``backward_arrays``, the inline common cases of ``apply`` and
``_walk``): ``make test`` runs the engine's tests a second time on the
reference path (``MINICHAIN_REFERENCE_MODE=1``, issue 32), where such a
shortcut is never taken, so these tests are skipped there, saying why.
"""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fast_path: tests a shortcut of the fast path itself "
        "(skipped when MINICHAIN_REFERENCE_MODE=1)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("MINICHAIN_REFERENCE_MODE", "").strip() != "1":
        return
    skip = pytest.mark.skip(reason="tests a fast-path shortcut; the "
                            "reference path (MINICHAIN_REFERENCE_MODE=1) "
                            "takes none")
    for item in items:
        if item.get_closest_marker("fast_path"):
            item.add_marker(skip)
