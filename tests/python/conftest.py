"""Test configuration: hypothesis profiles and the slow-test switch."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# The cost model's wisdom goes to a fresh file per test session, never the user's cache (tests that
# exercise the wisdom file itself point TILECC_WISDOM elsewhere).
os.environ.setdefault(
    "TILECC_WISDOM", os.path.join(tempfile.mkdtemp(prefix="tilecc-tests-"), "wisdom.json")
)

# CI runs a fixed, derandomised set of examples; locally hypothesis explores (and prints the seed
# of any failure, replayable with --hypothesis-seed).
settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
