"""``tilecc plan``: a job's memory, time per iteration and in-core or out-of-core verdict, found
without running CC; the predicted peak against the measured peak RSS of the real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tilecc
from tilecc.testing import run_cli, run_results

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"
JOB = ["--basis", "cc-pvdz", "--threads", "1"]


@pytest.fixture(scope="module")
def planned_and_run(tmp_path_factory):
    where = tmp_path_factory.mktemp("plan")
    plan, run = where / "plan.json", where / "run.json"
    proc = run_cli("plan", str(WATER), *JOB, "--json", str(plan))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = " ".join(proc.stdout.split())
    assert "peak memory" in text and "in core" in text
    proc = run_cli("run", str(WATER), *JOB, "--json", str(run))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(plan.read_text()), run_results(run)


def test_the_plan_predicts_the_runs_peak_memory(planned_and_run):
    plan, run = planned_and_run
    assert plan["in_core"] and plan["predicted_io_bytes"] == 0
    assert plan["iteration_seconds"] > 0 and plan["contractions"] > 0
    assert plan["ao_integrals_bytes"] == 0  # the SCF's own AO integrals serve the batches
    measured = run["peak_rss_bytes"]
    assert abs(plan["peak_memory_bytes"] - measured) <= 0.2 * measured
    # The tensors the plan counts are the ones the run held at most.
    held = run["memory"]["high_water_bytes"]
    assert abs(plan["tensors_peak_bytes"] + plan["diis_bytes"] - held) <= 0.1 * held


def test_a_budget_below_the_peak_plans_out_of_core_with_its_io(tmp_path, planned_and_run):
    plan, _ = planned_and_run
    allocated = plan["tensors_peak_bytes"] + plan["diis_bytes"] + plan["integrals_batch_bytes"]
    budget = allocated // 2
    out = tmp_path / "plan.json"
    proc = run_cli("plan", str(WATER), *JOB, "--memory-budget", str(budget), "--json", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    small = json.loads(out.read_text())
    assert not small["in_core"] and small["predicted_io_bytes"] > 0
    assert small["memory_budget_bytes"] == budget


def test_the_plan_counts_the_integrals_file_the_run_writes(tmp_path, monkeypatch):
    # Integrals through a file: the plan says how large (water/cc-pVDZ, frozen core: 23 active
    # orbitals, 276 pairs, 8 * 276^2 bytes) and transforms nothing; the run writes that file.
    monkeypatch.setenv("TILECC_INTEGRALS", "file")
    plan, run = tmp_path / "plan.json", tmp_path / "run.json"
    assert run_cli("plan", str(WATER), *JOB, "--json", str(plan)).returncode == 0
    assert run_cli("run", str(WATER), *JOB, "--json", str(run)).returncode == 0
    assert json.loads(plan.read_text())["integral_file_bytes"] == 8 * 276**2
    assert run_results(run)["io"]["integral_file_bytes"] == 8 * 276**2


def test_a_planning_tensor_has_no_blocks():
    ctx = tilecc.Context(threads=1, store="none")
    v = tilecc.Space.spatial(8, tile=4)
    t = tilecc.Tensor([v, v], context=ctx)
    assert ctx.runtime.memory["used_bytes"] == t.stored_elements * 8  # counted, not allocated
    c = tilecc.Tensor([v, v], context=ctx)
    c["pq"] += t["pr"] * t["rq"]  # planned, not run
    assert ctx.planned_runs and not ctx.stats.contractions
    with pytest.raises(ValueError, match="has no blocks"):
        t._core.block(0)


def test_the_plan_counts_the_triples_inputs_the_run_holds(tmp_path):
    # With (T), the plan counts the kernel's repacked inputs, found from the spaces alone: the
    # bytes the run's kernel held, exactly, for both references' kernels; without (T), none.
    for extra in ([], ["--charge", "1", "--spin", "1"]):
        job = [str(WATER), "--basis", "6-31g", "--threads", "1", "--method", "ccsd(t)", *extra]
        plan, run = tmp_path / "plan.json", tmp_path / "run.json"
        assert run_cli("plan", *job, "--json", str(plan)).returncode == 0
        assert run_cli("run", *job, "--json", str(run)).returncode == 0
        predicted = json.loads(plan.read_text())
        held = run_results(run)["ranks"][0]["triples_input_bytes"]
        assert predicted["triples_input_bytes"] == held > 0
        assert predicted["triples_scratch_bytes"] > 0
    plan = tmp_path / "ccsd.json"
    assert run_cli("plan", str(WATER), *JOB, "--json", str(plan)).returncode == 0
    assert json.loads(plan.read_text())["triples_input_bytes"] == 0
