"""Test configuration: hypothesis profiles, the slow-test switch, shared molecules."""

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


@pytest.fixture(scope="session")
def symmetric_water():
    """RHF of water/6-31G in C2v, the small molecule several test files share."""
    from pyscf import gto, scf

    mol = gto.M(
        atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692",
        basis="6-31g",
        symmetry=True,
        verbose=0,
    )
    return scf.RHF(mol).run()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
