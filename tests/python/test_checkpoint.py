"""Checkpoint and restart: atomic writes, restarts at another tile size converge to the same
energy, a run killed at any moment can be resumed, foreign checkpoints are refused."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tilecc import Space, Tensor, antisymmetric_pairs
from tilecc.cc import checkpoint as ckpt
from tilecc.testing import run_cli, run_results

WATER = str(Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz")
TIGHT = ["--conv-tol", "1e-12", "--conv-tol-normt", "1e-9"]


def tilecc(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *args)


def energy(path: Path) -> float:
    return float(run_results(path)["e_tot"])


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
    # The restart continues on the checkpoint's own orbitals, without an SCF of its own.
    assert "read from the checkpoint" in " ".join(second.stdout.split())
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
    assert "starting from the beginning" in " ".join(run.stdout.split())  # however it wraps
    assert state.is_file() and run_results(results)["converged"]


def small_state(cycle: int, e_corr: float, value: float) -> ckpt.State:
    """A state with a t1 and an antisymmetric t2 over two irreps, filled with ``value``."""
    o = Space([0, 1, 0], tile=1, kind="occupied", name="o")
    v = Space([1, 0, 0, 1], tile=1, kind="virtual", name="v")
    t1 = Tensor([o, v], name="t1")
    t2 = Tensor([o, o, v, v], antisymmetric_pairs(), name="t2")
    for t in (t1, t2):
        t.fill_(value)
    scf = ckpt.SCFSolution(np.eye(3), np.array([2.0, 2.0, 0.0]), np.arange(3.0), -1.0)
    return ckpt.State(cycle, e_corr, scf, [t1, t2], [], [], False)


def test_a_failed_write_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    import h5py

    path = tmp_path / "cc.ckpt"
    ident = {"format": ckpt.FORMAT, "method": "ccsd"}
    good = small_state(1, -0.1, 1.0)
    ckpt.save(path, ident, good)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(h5py.Group, "create_dataset", broken)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(path, ident, small_state(2, -0.2, 2.0))
    monkeypatch.undo()
    fresh = small_state(0, 0.0, 0.0)
    back = ckpt.load(path, ident, fresh.amplitudes)
    assert back.cycle == 1 and back.e_corr == -0.1
    for mine, theirs in zip(fresh.amplitudes, good.amplitudes, strict=True):
        assert np.array_equal(mine.to_dense(), theirs.to_dense())
    assert not list(tmp_path.glob(".cc.ckpt.*.tmp"))


def test_ctrl_c_during_a_write_arrives_after_the_checkpoint_is_whole(tmp_path, monkeypatch):
    # Ctrl-C in the middle of writing the HDF5 file: held until the file is whole and renamed
    # over, then delivered; no HDF5 object is left over a closed file.
    import h5py

    path = tmp_path / "cc.ckpt"
    ident = {"format": ckpt.FORMAT, "method": "ccsd"}
    create = h5py.Group.create_dataset

    def interrupted(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return create(*args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ckpt.save(path, ident, small_state(4, -0.4, 4.0))
    monkeypatch.undo()
    fresh = small_state(0, 0.0, 0.0)
    back = ckpt.load(path, ident, fresh.amplitudes)
    assert back.cycle == 4 and back.e_corr == -0.4
    assert not list(tmp_path.glob(".cc.ckpt.*.tmp"))


def test_checkpoint_holds_the_scf_and_segment_blocks_read_back_at_any_tiling(tmp_path):
    """Stored: one block per spin and irrep segment of each index, canonical and non-zero only
    (fewer numbers than the dense t2), and the SCF solution; read back into another tiling."""
    import h5py

    path = tmp_path / "cc.ckpt"
    state = small_state(3, -0.3, 0.0)
    for n, t in enumerate(state.amplitudes):
        t.fill_random_(n + 1)
    ckpt.save(path, {"format": ckpt.FORMAT}, state)
    with h5py.File(path, "r") as h5:
        t2 = h5["amplitudes/1"]
        assert len(t2["values"]) == state.amplitudes[1].retiled(None).stored_elements
        assert len(t2["values"]) < state.amplitudes[1].dense_elements
        assert np.array_equal(h5["scf/mo_occ"][()], [2.0, 2.0, 0.0])
    assert ckpt.read_scf(path, {"format": ckpt.FORMAT}).e_tot == -1.0
    coarse = [t.retiled(2) for t in small_state(0, 0.0, 0.0).amplitudes]
    ckpt.load(path, {"format": ckpt.FORMAT}, coarse)
    for mine, theirs in zip(coarse, state.amplitudes, strict=True):
        assert np.abs(mine.to_dense() - theirs.to_dense()).max() < 1e-15


def test_damaged_checkpoint_is_one_sentence(tmp_path):
    path = tmp_path / "cc.ckpt"
    ckpt.save(path, {"format": ckpt.FORMAT}, small_state(1, -0.1, 1.0))
    data = bytearray(path.read_bytes())
    for cut in (len(data) // 2, 100):
        path.write_bytes(bytes(data[:cut]))
        with pytest.raises(ValueError, match=r"cannot restart: .* (not a tilecc|damaged)"):
            ckpt.load(path, {"format": ckpt.FORMAT}, small_state(0, 0.0, 0.0).amplitudes)
