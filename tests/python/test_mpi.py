"""MPI as a dependency that installs itself: the environment's own mpiexec launches tilecc, which
reports its ranks and (virtual) nodes, prints on rank 0 only, and refuses a bad
TILECC_RANKS_PER_NODE, and a run on several ranks (not distributed yet) with one sentence and
nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"


def mpiexec(ranks: int, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mpiexec"), "-n", str(ranks), str(BIN / "tilecc"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_mpiexec_comes_with_the_environment():
    assert (BIN / "mpiexec").exists()


@pytest.mark.parametrize(
    ("ranks", "per_node", "expected"),
    [(2, "", "2 rank(s), 1 node(s) of 2"), (4, "2", "4 rank(s), 2 virtual node(s) of 2")],
)
def test_info_reports_ranks_and_nodes_once(ranks, per_node, expected):
    run = mpiexec(ranks, "info", TILECC_RANKS_PER_NODE=per_node)
    text = " ".join(run.stdout.split())
    assert run.returncode == 0, run.stdout + run.stderr
    assert expected in text and "MPICH" in text
    assert text.count("tilecc info") == 1  # rank 0 only


def test_bad_ranks_per_node_is_one_sentence():
    run = mpiexec(2, "info", TILECC_RANKS_PER_NODE="3")
    text = " ".join(run.stdout.split())
    assert run.returncode != 0
    assert text.count("TILECC_RANKS_PER_NODE=3 does not divide the 2 ranks") == 1
    run = mpiexec(1, "info", TILECC_RANKS_PER_NODE="two")
    assert "must be a positive whole number" in " ".join(run.stdout.split())


def test_a_run_on_several_ranks_is_refused_and_writes_nothing(tmp_path):
    results = tmp_path / "r.json"
    run = mpiexec(2, "run", str(WATER), "--basis", "sto-3g", "--json", str(results))
    text = " ".join(run.stdout.split())
    assert run.returncode != 0
    assert text.count("launched on 2 MPI ranks") == 1 and "Traceback" not in text
    assert not results.exists()
