"""Every example in examples/ runs as a user runs it and prints what its docstring promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.py"))
#: What each example's output must hold (beyond a clean exit).
PROMISES = {
    "20-rhf_ccsd_t.py": "CCSD(T) total energy = -76.24104",
    "30-uhf_ccsd_t.py": "T1 diagnostic",
    "40-restart.py": "converged: True",
    "50-trace.py": "in total, seconds",
    "60-qcschema.py": "CCSD(T) total energy = -76.24104",
}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_runs(example: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert PROMISES.get(example.name, "") in run.stdout


def test_every_cc_example_has_a_promise() -> None:
    numbered = [e.name for e in EXAMPLES if not e.name.startswith(("00-", "10-"))]
    assert sorted(numbered) == sorted(PROMISES)
