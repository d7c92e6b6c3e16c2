"""Out of core (paper 004, section 6): the stage schedules' I/O on a small instance of the size of
the paper's Figs. 3–4, exact; the disk store's measured bytes equal to a schedule's own count;
contractions and CC energies identical in core and out of core under every schedule, within
the memory budget; scratch files removed (or kept); bad budgets and scratch directories refused
with one sentence."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pyscf import gto, scf

import tilecc
from tilecc.staging import SCHEDULES, BlockHypergraph, lru_io, staging
from tilecc.staging.figures import FIGURE_MEMORY, figure_instance
from tilecc.testing import run_cli, run_results

EXAMPLES = Path(__file__).parents[2] / "examples" / "molecules"


def test_the_schedules_io_on_the_figure_instance_is_exact():
    h, memory = figure_instance(), FIGURE_MEMORY
    assert h.lower_bound() == (6, 0)
    # Worked out by hand: LRU misses 13 times going through the tasks in order (the clusters
    # interleave); GetNext reads each task's 2 blocks; two-level reads cluster {2, 5, 8} alone
    # (3) and the other two in one read-once stage sharing blocks 0 and 1 (4).
    assert lru_io(h, memory) == (13, 0)
    expected = {"getnext": 18, "one-level": 9, "two-level": 7}
    for name, reads in expected.items():
        s = staging(h, memory, name)
        assert s.io(h) == (reads, 0), name
        assert s.peak(h) <= memory
    # One-level: the paper's three stages of three blocks (blocks 0 and 1 read again);
    # two-level keeps blocks 0 and 1 through two of them, read once.
    one_level = staging(h, memory, "one-level")
    assert sorted(sorted(step.tasks) for s in one_level.stages for step in s.steps) == [
        [0, 3, 6], [1, 4, 7], [2, 5, 8]
    ]  # fmt: skip
    two_level = staging(h, memory, "two-level")
    assert sorted(len(s.shared) for s in two_level.stages) == [0, 2]
    with pytest.raises(ValueError, match=r"no read-once schedule .* within 3 bytes"):
        staging(h, memory, "read-once")
    with pytest.raises(ValueError, match="give a budget of at least 1 bytes"):
        staging(h, 0, "two-level")


def contraction_case(ctx: tilecc.Context, rng: np.random.Generator):
    o = tilecc.Space.spatial(8, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(16, tile=4, kind="virtual", name="v")
    dense = [rng.standard_normal((8, 8, 16, 16)) for _ in range(2)]
    t, w = (tilecc.Tensor([o, o, v, v], context=ctx) for _ in range(2))
    t.from_dense_(dense[0])
    w.from_dense_(dense[1])
    return t, w, tilecc.Tensor([o, o, o, o], context=ctx), dense


def moved_from_cold(ctx: tilecc.Context, t, w, c) -> tuple[dict, dict]:
    """c += t . w from nothing in memory to everything written back: ctx.io before and after."""
    ctx.runtime.flush_scratch()
    before = ctx.io
    c["ijkl"] += t["ijab"] * w["klab"]
    c.context.settle(c)
    ctx.runtime.flush_scratch()
    return before, ctx.io


@pytest.mark.parametrize("schedule", [name for name in SCHEDULES if name != "read-once"])
def test_a_contraction_through_disk_moves_what_its_schedule_says(tmp_path, schedule):
    """From a cold start (nothing of the tensors in memory) to a flushed end, the disk store
    reads and writes exactly the bytes the schedule counts; the result is numpy's; the blocks in
    memory never exceed the budget; the scratch files go with the tensors."""
    budget = 200_000
    ctx = tilecc.Context(
        threads=2, store="disk", memory_budget=budget, staging=schedule, scratch=str(tmp_path)
    )
    t, w, c, dense = contraction_case(ctx, np.random.default_rng(3))
    before, after = moved_from_cold(ctx, t, w, c)
    read = after["bytes_read"] - before["bytes_read"]
    written = after["bytes_written"] - before["bytes_written"]
    planned = next(p for p in ctx.runtime.contractions() if p.built)
    h = BlockHypergraph.of_plan(planned.plan)
    bound = sum(h.lower_bound())
    assert after["lower_bound_bytes"] - before["lower_bound_bytes"] == bound
    if schedule != "lru":
        assert (read, written) == staging(h, budget, schedule).io(h)
        # Between steps, a courier read the next one's blocks while this one's tasks ran.
        assert 0 < after["read_ahead_bytes"] - before["read_ahead_bytes"] < read
    assert read + written >= bound
    assert after["resident_high_water_bytes"] <= budget
    expected = np.einsum("ijab,klab->ijkl", *dense)
    np.testing.assert_allclose(c.to_dense(), expected, atol=1e-11)
    assert list(tmp_path.iterdir())  # the tensors' files, while they live
    del t, w, c, ctx
    assert not list(tmp_path.iterdir())


def test_two_level_moves_less_than_one_level_the_cache_and_getnext(tmp_path):
    moved = {}
    for schedule in ("getnext", "lru", "one-level", "two-level"):
        ctx = tilecc.Context(threads=1, store="disk", memory_budget=60_000, staging=schedule)
        before, after = moved_from_cold(ctx, *contraction_case(ctx, np.random.default_rng(3))[:3])
        moved[schedule] = sum(after[k] - before[k] for k in ("bytes_read", "bytes_written"))
    assert moved["two-level"] < moved["one-level"] < moved["lru"] < moved["getnext"]


@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_ccsd_energies_are_the_in_core_ones_under_every_schedule(symmetric_water, schedule):
    water = symmetric_water
    in_core = tilecc.CCSD(water, threads=2, tile=4).run()
    budget = in_core.context.runtime.memory["high_water_bytes"] // 4
    if schedule == "read-once":
        budget = in_core.context.runtime.memory["high_water_bytes"]  # where it exists
    out = tilecc.CCSD(
        water, threads=2, tile=4, store="disk", memory_budget=budget, staging=schedule
    ).run()
    assert out.e_corr == pytest.approx(in_core.e_corr, abs=1e-10)
    assert out.context.io["resident_high_water_bytes"] <= budget
    assert out.context.io["bytes_read"] > 0


def test_a_budget_below_one_task_names_the_smallest_that_works(symmetric_water):
    with pytest.raises(ValueError, match=r"give a budget of at least \d+ bytes"):
        tilecc.CCSD(symmetric_water, threads=1, store="disk", memory_budget=1_000).run()


def test_bad_scratch_directories_are_one_sentence(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError, match="does not exist or is not a directory"):
        tilecc.Context(threads=1, store="disk", scratch=str(missing))
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(ValueError, match="is not writable"):
            tilecc.Context(threads=1, store="disk", scratch=str(locked))
    finally:
        locked.chmod(0o700)


def test_a_full_scratch_disk_is_refused_before_the_run(tmp_path):
    """A file-size limit stands in for a full disk: the tensor's space is reserved when it is
    made, so the job stops then, with one sentence, rather than at a write mid-run."""
    script = textwrap.dedent(
        f"""
        import resource, signal
        import tilecc
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        ctx = tilecc.Context(threads=1, store="disk", scratch={str(tmp_path)!r})
        v = tilecc.Space.spatial(64, tile=16)
        try:
            tilecc.Tensor([v, v, v], context=ctx)
        except ValueError as e:
            print(e)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "has no room for a tensor of" in proc.stdout
    assert "give --scratch another directory" in proc.stdout
    assert not list(tmp_path.iterdir())  # nothing half-made left behind


def test_the_cli_runs_out_of_core_and_reports_its_io(tmp_path):
    results = tmp_path / "out.json"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    common = ["run", str(EXAMPLES / "water.xyz"), "--basis", "6-31g", "--threads", "1"]
    proc = run_cli(
        *common,
        "--store", "disk", "--memory-budget", "200kB", "--staging", "two-level",
        "--scratch", str(scratch), "--keep-scratch", "--json", str(results),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    io = run_results(results)["io"]
    assert io["schedule"] == "two-level"
    # Summed over the job's contractions, each one's read-once bound; blocks that stay in memory
    # from one contraction to the next are not read again, so a job may move less.
    assert io["bytes_read"] > 0 and io["lower_bound_bytes"] > 0
    assert io["resident_high_water_bytes"] <= 200_000
    assert list(scratch.iterdir())  # kept
    bad = run_cli(*common, "--store", "disk", "--staging", "fifo")
    assert bad.returncode == 2
    assert "unknown staging 'fifo'; valid ones are: lru, getnext" in " ".join(bad.stdout.split())


def test_a_job_over_its_budget_goes_out_of_core_by_itself(tmp_path):
    """No --store given: the plan finds the job over its budget, says so in one line, and the
    job runs through the disk store to the in-core energy."""
    common = ["run", str(EXAMPLES / "water.xyz"), "--basis", "6-31g", "--threads", "1"]
    energies = {}
    for name, extra in (("in", []), ("out", ["--memory-budget", "300kB"])):
        out = tmp_path / f"{name}.json"
        proc = run_cli(*common, *extra, "--json", str(out))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        text = " ".join(proc.stdout.split())
        assert ("runs out of core (--store disk, two-level staging)" in text) == (name == "out")
        results = run_results(out)
        energies[name] = results["e_corr"]
        if name == "out":
            assert results["io"]["schedule"] == "two-level" and results["io"]["bytes_read"] > 0
    assert energies["out"] == pytest.approx(energies["in"], abs=1e-10)


def test_a_budget_holds_pyscf_to_it_too():
    """PySCF keeps the SCF's AO integrals only when they fit in the budget beside the process."""
    from tilecc.host.molecule import limit_memory

    held = {}
    for budget in (2**30, 100_000):
        mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692",
                    basis="cc-pvdz", verbose=0)  # fmt: skip
        limit_memory(mol, budget)
        held[budget] = scf.RHF(mol).run()._eri is not None
    assert held == {2**30: True, 100_000: False}


def test_a_scratch_directory_that_vanishes_mid_run_ends_the_job_with_one_sentence(tmp_path):
    """The tensors' open files live on; the next one to be made cannot be, and the job ends
    with one sentence and exit 2, its last checkpoint whole."""
    import subprocess
    import sys
    import time

    import h5py

    scratch, checkpoint = tmp_path / "scratch", tmp_path / "n2.h5"
    scratch.mkdir()
    n2 = tmp_path / "n2.xyz"
    n2.write_text("2\n\nN 0 0 0\nN 0 0 1.0977\n")
    job = subprocess.Popen(
        [sys.executable, "-m", "tilecc.cli", "run", str(n2), "--basis", "cc-pvdz", "--threads",
         "1", "--store", "disk", "--scratch", str(scratch), "--checkpoint", str(checkpoint),
         "--conv-tol", "1e-12", "--conv-tol-normt", "1e-10"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert job.poll() is None, "the job ended before its first checkpoint"
    scratch.rename(tmp_path / "gone")  # the path vanishes at once
    output, _ = job.communicate(timeout=120)
    text = " ".join(output.split())
    assert job.returncode == 2, text[-1000:]
    assert text.count(f"cannot create a scratch file in {scratch}") == 1
    assert "give --scratch a writable directory" in text and "Traceback" not in text
    with h5py.File(checkpoint, "r") as h5:
        assert h5.attrs["cycle"] >= 1
