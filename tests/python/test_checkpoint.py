"""Checkpoint and restart: atomic writes, restarts at another tile size converge to the same
energy, a run killed at any moment can be resumed, foreign checkpoints are refused."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tilecc.cc import checkpoint as ckpt
from tilecc.testing import run_cli

WATER = str(Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz")
TIGHT = ["--conv-tol", "1e-12", "--conv-tol-normt", "1e-9"]


def tilecc(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *args)


def energy(path: Path) -> float:
    return float(json.loads(path.read_text())["e_tot"])


def test_restart_at_another_tile_size_reaches_the_same_energy(tmp_path):
    straight, resumed, state = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "cc.ckpt"
    assert tilecc(WATER, "--basis", "6-31g", *TIGHT, "--json", str(straight)).returncode == 0
    first = tilecc(
        WATER,
        "--basis",
        "6-31g",
        *TIGHT,
        "--max-iter",
        "3",
        "--tile",
        "3",
        "--checkpoint",
        str(state),
    )
    assert first.returncode == 3 and state.is_file()
    second = tilecc(
        WATER,
        "--basis",
        "6-31g",
        *TIGHT,
        "--tile",
        "7",
        "--threads",
        "1",
        "--checkpoint",
        str(state),
        "--restart",
        "--json",
        str(resumed),
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert energy(resumed) == pytest.approx(energy(straight), abs=1e-10)


def test_killed_run_resumes(tmp_path):
    straight, resumed, state = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "cc.ckpt"
    assert tilecc(WATER, "--basis", "cc-pvdz", *TIGHT, "--json", str(straight)).returncode == 0
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tilecc.cli",
            "run",
            WATER,
            "--basis",
            "cc-pvdz",
            *TIGHT,
            "--tile",
            "2",
            "--checkpoint",
            str(state),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not state.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert state.is_file()
    run = tilecc(
        WATER,
        "--basis",
        "cc-pvdz",
        *TIGHT,
        "--checkpoint",
        str(state),
        "--restart",
        "--json",
        str(resumed),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert energy(resumed) == pytest.approx(energy(straight), abs=1e-10)


def test_foreign_checkpoint_is_refused(tmp_path):
    state = tmp_path / "cc.ckpt"
    tilecc(WATER, "--basis", "sto-3g", "--max-iter", "1", "--checkpoint", str(state))
    for args, what in [
        (["--basis", "6-31g"], "basis 'sto-3g' instead of '6-31g'"),
        (["--basis", "sto-3g", "--method", "ccd"], "method 'ccsd' instead of 'ccd'"),
        (["--basis", "sto-3g", "--charge", "1", "--spin", "1"], "charge 0"),
    ]:
        run = tilecc(WATER, *args, "--checkpoint", str(state), "--restart")
        assert run.returncode == 2
        assert "belongs to another calculation" in run.stdout and what in run.stdout


def test_restart_without_a_checkpoint(tmp_path):
    run = tilecc(WATER, "--basis", "sto-3g", "--restart")
    assert run.returncode == 2 and "give --checkpoint PATH too" in run.stdout


def test_restart_before_the_first_checkpoint_starts_from_the_beginning(tmp_path):
    """A resubmitted job script whose first run died before its first checkpoint still runs."""
    state, results = tmp_path / "x", tmp_path / "r.json"
    run = tilecc(
        WATER, "--basis", "sto-3g", "--restart", "--checkpoint", str(state), "--json", str(results)
    )
    assert run.returncode == 0, run.stdout
    assert "starting from the beginning" in run.stdout
    assert state.is_file() and json.loads(results.read_text())["converged"]


def test_a_failed_write_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "cc.ckpt"
    ident = {"format": 1, "method": "ccsd"}
    good = ckpt.State(1, -0.1, [np.ones((2, 3)), np.ones((2, 2, 3, 3))], [], [], 4)
    ckpt.save(path, ident, good)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(path, ident, ckpt.State(2, -0.2, [np.zeros((2, 3))], [], [], 4))
    monkeypatch.undo()
    back = ckpt.load(path, ident)
    assert back.cycle == 1 and back.e_corr == -0.1
    assert not list(tmp_path.glob(".cc.ckpt.*.tmp"))
