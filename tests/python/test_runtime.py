"""The inspector–executor runtime: policies give identical energies, the TCE baseline pays one
counter fetch per loop tuple, refinement schedules with measured times, the time decomposition
adds up, traces and reports are what they claim, and every bad runtime option is refused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from pyscf import gto, scf

import tilecc
from tilecc import _core, wisdom
from tilecc.cc import GCCSD, RCCSD
from tilecc.testing import run_cli, run_results
from tilecc.trace import PHASES, read_trace

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"
POLICIES = ("tce", "counter", "static-block", "static-lpt", "buckets", "steal")


@pytest.fixture(scope="module")
def water():
    mol = gto.M(atom=str(WATER), basis="6-31g", symmetry=True, verbose=0)
    return scf.RHF(mol).run(conv_tol=1e-12)


@pytest.fixture(scope="module")
def water_cation():
    mol = gto.M(atom=str(WATER), basis="6-31g", charge=1, spin=1, symmetry=True, verbose=0)
    return scf.UHF(mol).run(conv_tol=1e-12)


def ccsd(kind, mf, **options):
    solver = kind(mf, tile=3, conv_tol=1e-11, conv_tol_normt=1e-8, **options)
    return solver.run()


def test_energies_do_not_depend_on_policy_threads_or_quantum(water):
    reference = ccsd(RCCSD, water, threads=1).e_corr
    for policy in POLICIES:
        for threads, quantum in ((1, 1), (2, 1), (2, 3)):
            e = ccsd(RCCSD, water, threads=threads, policy=policy, quantum=quantum).e_corr
            assert abs(e - reference) < 1e-10, (policy, threads, quantum)


def test_spin_orbital_energies_do_not_depend_on_policy(water_cation):
    reference = ccsd(GCCSD, water_cation, threads=1).e_corr
    for policy in ("tce", "buckets", "steal"):
        e = ccsd(GCCSD, water_cation, threads=2, policy=policy, group_size=1).e_corr
        assert abs(e - reference) < 1e-10, policy


def test_a_slowed_worker_changes_nothing_but_time(water, monkeypatch):
    reference = ccsd(RCCSD, water, threads=2, policy="static-lpt").e_corr
    monkeypatch.setenv("TILECC_SLOW_WORKER", "1:2")
    for policy in ("static-lpt", "steal"):
        solver = ccsd(RCCSD, water, threads=2, policy=policy)
        assert solver.context.executor.slow_worker == (1, 2.0)
        assert abs(solver.e_corr - reference) < 1e-10


def planned(policy: str, threads: int = 2, **options):
    """A context and the plan of a ladder contraction on random spin-orbital tensors."""
    ctx = tilecc.Context(threads=threads, policy=policy, **options)
    o = tilecc.Space.spin_orbitals(irreps=[0, 1, 2, 3] * 2, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spin_orbitals(irreps=[0, 1, 2, 3] * 4, tile=3, kind="virtual", name="v")
    sym = tilecc.antisymmetric_pairs(4)
    t2 = tilecc.Tensor([o, o, v, v], symmetry=sym, name="t2", context=ctx)
    w = tilecc.Tensor([v, v, v, v], symmetry=sym, name="w", context=ctx)
    t2.fill_random_(seed=1)
    w.fill_random_(seed=2)
    r2 = tilecc.Tensor.like(t2, name="r2")
    term = 0.5 * t2["ijcd"] * w["abcd"]
    return ctx, r2, term, tilecc.plan_for(r2["ijab"], term)


def test_tce_pays_a_counter_fetch_for_every_loop_tuple():
    ctx, r2, term, plan = planned("tce")
    _, _, _, inspector = planned("counter")
    assert plan.layout == "tce" and inspector.layout == "inspector"
    # Same work, but TCE keeps the null tuples the inspector dropped and never stacks blocks.
    assert plan.executed_flops == inspector.executed_flops
    assert plan.loop_tuples > plan.num_tasks >= inspector.num_tasks
    r2["ijab"] += term
    run = ctx.stats
    # Exactly one fetch per loop tuple, plus each worker's fetch that found the loop done.
    assert run.shared_calls == plan.loop_tuples + ctx.threads


def test_refinement_schedules_with_the_measured_times():
    ctx, r2, term, plan = planned("static-lpt")
    schedule = ctx.schedule(plan)
    assert list(schedule.costs(True)) == list(schedule.estimated_seconds)  # nothing measured yet
    r2["ijab"] += term
    measured = list(schedule.measured_seconds)
    assert len(measured) == plan.num_tasks and all(t > 0 for t in measured)
    assert list(schedule.costs(True)) == measured
    assert list(schedule.costs(False)) == list(schedule.estimated_seconds)
    error = schedule.model_error()
    assert error.tasks == plan.num_tasks and 0 <= error.median <= error.p90
    summary = schedule.summary()
    assert "model error per task median" in summary and "policy static-lpt" in summary
    assert "dense flops" in summary and "MiB/worker" in summary and "inspector" in summary
    assert len(ctx.contractions[0].imbalance) == 1


def test_each_run_is_predicted_with_the_correction_learned_before_it():
    ctx, r2, term, plan = planned("counter", threads=1)
    schedule = ctx.schedule(plan)
    modelled = np.asarray(plan.modelled_seconds)
    np.testing.assert_array_equal(schedule.estimated_seconds, modelled)  # nothing learned yet
    r2["ijab"] += term
    learned = ctx.model_correction
    assert learned != (1.0, 0.0) and learned[0] > 0 and learned[1] >= 0
    # The next run is scheduled with the corrected predictions, then learned from in turn; the
    # plan itself never changes.
    r2["ijab"] += term
    np.testing.assert_allclose(schedule.estimated_seconds, learned[0] * modelled + learned[1])
    np.testing.assert_array_equal(plan.modelled_seconds, modelled)
    measured = np.asarray(schedule.measured_seconds)
    for corrected, predicted in ((True, schedule.estimated_seconds), (False, modelled)):
        errors = np.abs(np.asarray(predicted) - measured) / measured
        assert ctx.model_error(corrected=corrected)[0] == pytest.approx(np.median(errors))
    assert ctx.model_correction != learned
    ctx.reconfigure(threads=1)
    assert ctx.model_correction == (1.0, 0.0)


def test_one_plan_serves_two_schedules():
    # A sealed plan shared by two schedules: each keeps its own measured times and correction.
    ctx, r2, term, plan = planned("counter", threads=1)
    a, b = term.factors
    first, second = _core.Schedule(plan), _core.Schedule(plan)
    _core.contract_batch([(first, 0.5, a.tensor._core, b.tensor._core, r2._core)], ctx.executor)
    assert len(first.measured_seconds) == plan.num_tasks and not second.measured_seconds
    correction = _core.ModelCorrection()
    correction.scale, correction.overhead = 2.0, 1e-6
    second.correct(correction)
    np.testing.assert_allclose(
        second.estimated_seconds, 2.0 * np.asarray(plan.modelled_seconds) + 1e-6
    )
    assert list(first.estimated_seconds) == list(plan.modelled_seconds)


def test_phases_add_up_to_workers_times_wall():
    ctx, r2, term, plan = planned("steal", threads=2)
    a, b = term.factors
    planned_contraction = next(p for p in ctx.runtime.contractions() if p.built)
    item = (planned_contraction, 0.5, a.tensor._core, b.tensor._core, r2._core)
    batch = ctx.runtime.run([item])
    run = batch.run
    assert set(run.phases) == set(PHASES)
    assert sum(run.phases.values()) == pytest.approx(2 * run.seconds, rel=1e-9)
    assert len(run.task_seconds) == plan.num_tasks
    # The work of the run's one contraction is all the run's work.
    (own,) = batch.items
    for phase in ("permute", "gemm", "accumulate"):
        assert own.phases[phase] == pytest.approx(run.phases[phase], rel=1e-9)
    assert own.phases["schedule"] == own.phases["wait"] == 0.0
    assert own.model_error.tasks == plan.num_tasks
    assert list(own.task_seconds) == list(planned_contraction.schedule.measured_seconds)


def test_trace_has_a_row_per_worker_and_a_slice_per_phase(tmp_path):
    ctx, r2, term, plan = planned("counter", threads=2, trace=True)
    for _ in range(2):
        r2["ijab"] += term
    path = tmp_path / "trace.json"
    ctx.write_trace(path)
    data = json.loads(path.read_text())
    slices = [e for e in data["traceEvents"] if e.get("cat") == "phase"]
    assert {e["tid"] for e in slices} <= {0, 1}
    assert {e["name"] for e in slices} <= set(PHASES)
    # Every task of both runs has its gemm slice.
    for run in (0, 1):
        tasks = {e["args"]["task"] for e in slices if e["args"]["run"] == run}
        assert tasks >= set(range(plan.num_tasks))
    summary = read_trace(path)
    total, expected = summary.total, ctx.decomposition()
    for name, value in expected.as_dict().items():
        assert getattr(total, name) == pytest.approx(value, abs=1e-5), name


def test_cli_trace_and_report(tmp_path):
    trace, png, out = tmp_path / "t.json", tmp_path / "t.png", tmp_path / "r.json"
    run = run_cli(
        "run", str(WATER), "--basis", "sto-3g", "--method", "ccsd", "--threads", "2",
        "--policy", "buckets", "--no-refine", "--trace", str(trace), "--json", str(out),
        "--timings",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "where the time went" in run.stdout
    runtime = run_results(out)["runtime"]
    assert runtime["policy"] == "buckets" and runtime["refine"] is False
    assert {"compute", "permute", "scheduling", "idle", "inspector"} <= set(runtime["total"])
    report = run_cli("report", str(trace), "--png", str(png))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "time decomposition" in report.stdout and "worker" in report.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (("--policy", "fifo"), "valid ones are: buckets, counter, static-block"),
        (("--quantum", "0"), "--quantum"),
        (("--group-size", "0"), "--group-size"),
    ],
)
def test_cli_refuses_bad_runtime_options(args, message):
    run = run_cli("run", str(WATER), "--basis", "sto-3g", *args)
    assert run.returncode == 2
    assert message in run.stdout + run.stderr


def test_report_refuses_what_is_not_a_trace(tmp_path):
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    run = run_cli("report", str(bogus))
    assert run.returncode == 2 and "is not a tilecc trace" in run.stdout


def test_context_refuses_bad_options(monkeypatch):
    # (unknown policies and quanta: test_bad_input.test_bad_runtime_options)
    with pytest.raises(ValueError, match="group_size"):
        tilecc.Context(threads=1, policy="buckets", group_size=0)
    for spec in ("fast", "0:", "x:2", "0:0.5", "-1:3"):
        monkeypatch.setenv("TILECC_SLOW_WORKER", spec)
        with pytest.raises(ValueError, match="TILECC_SLOW_WORKER must be WORKER:FACTOR"):
            tilecc.Context(threads=2)


@pytest.fixture
def fresh_wisdom(tmp_path, monkeypatch):
    path = tmp_path / "wisdom.json"
    monkeypatch.setenv("TILECC_WISDOM", str(path))
    wisdom.forget()
    yield path
    wisdom.forget()


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"format": "someone-else", "entries": {}}', "[1, 2, 3]", "\x00\xff"],
)
def test_a_file_that_is_not_wisdom_is_ignored_and_never_overwritten(fresh_wisdom, content):
    """$TILECC_WISDOM may name a user's own file by mistake: it is reported, read around, and
    left exactly as it was."""
    fresh_wisdom.write_text(content)
    with pytest.warns(RuntimeWarning, match="ignoring the wisdom file") as caught:
        model = wisdom.cost_model()
    assert model.gemm_seconds(64, 64, 64) > 0
    assert any("left as it is" in str(w.message) for w in caught)
    assert fresh_wisdom.read_text() == content


def test_wisdom_of_another_version_is_rebuilt(fresh_wisdom):
    fresh_wisdom.write_text(json.dumps({"format": wisdom.FORMAT, "version": -1, "entries": {}}))
    with pytest.warns(RuntimeWarning, match="ignoring the wisdom file .* version -1"):
        wisdom.cost_model()
    rebuilt = json.loads(fresh_wisdom.read_text())
    assert rebuilt["version"] == wisdom.VERSION and wisdom.machine_key() in rebuilt["entries"]


def test_invalid_wisdom_entry_is_recalibrated(fresh_wisdom):
    fresh_wisdom.write_text(
        json.dumps(
            {
                "format": wisdom.FORMAT,
                "version": wisdom.VERSION,
                "entries": {wisdom.machine_key(): {"gemm": [float("nan")] * 8, "permute": []}},
            }
        )
    )
    with pytest.warns(RuntimeWarning, match="invalid entry"):
        wisdom.cost_model()
    entry = json.loads(fresh_wisdom.read_text())["entries"][wisdom.machine_key()]
    assert all(np.isfinite(entry["gemm"])) and len(entry["permute"]) == 5


def test_wisdom_of_an_older_model_is_ignored_and_rebuilt(fresh_wisdom):
    # Version 1 held quadratics in log sizes: ten GEMM and six permutation coefficients.
    entry = {"gemm": [33.0] + [0.0] * 9, "permute": [30.0, 29.0, 28.0, 0.0, 0.0, 0.0]}
    old = {"format": wisdom.FORMAT, "version": 1, "entries": {wisdom.machine_key(): entry}}
    fresh_wisdom.write_text(json.dumps(old))
    with pytest.warns(RuntimeWarning, match="version 1"):
        model = wisdom.cost_model()
    assert len(model.gemm) == 8
    rebuilt = json.loads(fresh_wisdom.read_text())
    assert rebuilt["version"] == wisdom.VERSION
    assert 0.0 <= rebuilt["entries"][wisdom.machine_key()]["gemm_error"] < 1.0


def test_cost_model_fit_recovers_the_rates_that_made_the_timings():
    rng = np.random.default_rng(5)
    shapes = rng.integers(1, 300, size=(60, 3)).astype(float)
    rates = np.array([2e-7, 7e-11, 1e-9, 1e-9, 1.3e-9, 4e-9, 0.0, 1e-9])
    fitted, error = wisdom.fit_seconds(wisdom.gemm_work(shapes), wisdom.gemm_work(shapes) @ rates)
    np.testing.assert_allclose(fitted, rates, rtol=1e-6, atol=1e-15)
    assert error < 1e-9
    model = _core.CostModel()
    model.gemm = list(rates)
    m, n, k = 17, 40, 3
    expected = rates @ [1, m * n * k, m * k, k * n, m * n, m, n, k]
    assert model.gemm_seconds(m, n, k) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "extents, axes, kind, loops",
    [
        ([3, 5, 7, 11], [0, 1, 2, 3], 0, 1),  # unchanged: one copy
        ([1, 4, 1, 5], [2, 1, 0, 3], 0, 1),  # extent-1 axes dropped, the rest fuse: a copy
        ([3, 5, 7, 11], [1, 0, 2, 3], 1, 3 * 5),  # axes 2, 3 fuse: 15 runs of 77
        ([3, 5, 7, 11], [0, 1, 3, 2], 2, 3 * 5 * 11),  # 7 < 16: one row per (i, j, l)
        ([40, 20], [1, 0], 2, 20 * 3),  # 40 destination columns: 3 tiles of 16 per row
    ],
)
def test_permutations_are_priced_by_the_kernels_loops(extents, axes, kind, loops):
    assert _core.permute_shape(extents, axes) == (kind, int(np.prod(extents)), loops)
    model = _core.CostModel()
    model.permute = [1e-7, 1e-9, 2e-9, 4e-9, 5e-9]
    expected = 1e-7 + model.permute[1 + kind] * np.prod(extents) + 5e-9 * loops
    assert model.permute_seconds(extents, axes) == pytest.approx(expected, rel=1e-12)


def test_wisdom_is_calibrated_once_and_then_trusted(fresh_wisdom, monkeypatch):
    first = wisdom.cost_model()
    wisdom.forget()

    def no_calibration() -> dict:
        raise AssertionError("calibrated again although the wisdom file has an entry")

    monkeypatch.setattr(wisdom, "calibrate", no_calibration)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = wisdom.cost_model()
    assert list(again.gemm) == list(first.gemm)
    # The model ranks work sensibly: more flops, more time; a transpose costs more than a copy.
    assert again.gemm_seconds(128, 128, 128) > again.gemm_seconds(16, 16, 16)
    assert again.permute_seconds([16, 16, 16, 16], [3, 2, 1, 0]) > again.permute_seconds(
        [16, 16, 16, 16], [0, 1, 2, 3]
    )


def test_a_job_holds_numpys_blas_to_one_thread_and_gives_its_threads_back(water):
    # numpy's OpenBLAS threads spin after multi-threaded calls on the cores the workers need (see
    # Context.holding_cores); a CC job keeps them at one thread while it runs, and only then.
    from threadpoolctl import threadpool_info, threadpool_limits

    def numpys_blas_threads() -> set[int]:
        return {
            lib["num_threads"]
            for lib in threadpool_info()
            if lib["user_api"] == "blas" and "numpy" in lib["filepath"]
        }

    assert numpys_blas_threads(), "numpy's BLAS should be visible to threadpoolctl"
    with threadpool_limits(limits=2, user_api="blas"):
        seen: list[set[int]] = []
        solver = RCCSD(water, threads=2, callback=lambda _: seen.append(numpys_blas_threads()))
        solver.run()
        assert seen and all(threads == {1} for threads in seen)
        assert numpys_blas_threads() == {2}
        solver.ccsd_t()
        assert numpys_blas_threads() == {2}


def test_solvers_share_a_context():
    from pyscf import gto, scf

    mol = gto.M(atom="O 0 0 0; H 0 0.757 -0.469; H 0 -0.757 -0.469", basis="6-31g", verbose=0)
    mf = scf.RHF(mol).run()
    ctx = tilecc.Context(threads=2, policy="static-lpt")
    first = tilecc.cc.RCCSD(mf, frozen=1, context=ctx).run()
    built = ctx.stats.plans_built
    second = tilecc.cc.RCCSD(mf, frozen=1, context=ctx).run()
    assert first.context is second.context is ctx
    assert (second.threads, second.policy) == (2, "static-lpt")
    # Each solver's tensors have shapes of their own (its problem's spaces), so it builds its
    # plans once, on the shared runtime, and its iterations reuse them.
    assert ctx.stats.plans_built == 2 * built
    assert second.e_corr == pytest.approx(first.e_corr, abs=1e-12)
    with pytest.raises(ValueError, match=r"threads=1 given with a context"):
        tilecc.cc.RCCSD(mf, context=ctx, threads=1)
