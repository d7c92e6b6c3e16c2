"""Deferred blocks: the queued operations give what running them at once gives, every plan is
built before any operation runs, reads inside the block see the queued writes, a block that
raises runs nothing, and independent contractions run together, each charged its own work."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tilecc
from tilecc import antisymmetric_pairs
from tilecc.deferred import QueuedContraction, QueuedOperation, in_batches


def tensors(ctx: tilecc.Context) -> dict[str, tilecc.Tensor]:
    o = tilecc.Space.spatial(4, tile=2, kind="occupied", name="o")
    v = tilecc.Space.spatial(5, tile=2, kind="virtual", name="v")
    t = {
        "t2": tilecc.Tensor([o, o, v, v], antisymmetric_pairs(4), name="t2", context=ctx),
        "w": tilecc.Tensor([o, v, o, v], name="w", context=ctx),
        "f": tilecc.Tensor([v, v], name="f", context=ctx),
    }
    for seed, x in enumerate(t.values()):
        x.fill_random_(seed=seed)
    return t


def one_thread_with_output() -> tuple[tilecc.Context, dict[str, tilecc.Tensor], tilecc.Tensor]:
    """A 1-thread context, its operands, and an output x[kaic] for f[ad] * w[kdic]."""
    ctx = tilecc.Context(threads=1)
    t = tensors(ctx)
    return ctx, t, tilecc.Tensor.like(t["w"], name="x")


def update(t: dict[str, tilecc.Tensor]) -> tuple[tilecc.Tensor, tilecc.Tensor, float]:
    """A few dependent steps: an intermediate read as an operand, accumulation, an output that
    is also an operand, a permuted addition, a scalar and an in-place division."""
    t2, w, f = t["t2"], t["w"], t["f"]
    x = tilecc.Tensor.like(w, name="x")
    x["kaic"] = w["kaic"] + f["ad"] * w["kdic"]
    ring = tilecc.Tensor(t2.spaces, name="ring", context=t2.context)  # no symmetry
    ring["ijab"] = x["kaic"] * t2["kjcb"]
    r = tilecc.Tensor.like(t2, name="r")
    r["ijab"] = ring["ijab"] - ring["ijba"] - ring["jiab"] + ring["jiba"]
    r["ijab"] += r["ijcb"] * f["ac"] - r["ijca"] * f["bc"]  # reads its own output
    energy = float(r["ijab"] * t2["ijab"])
    x.scale_(0.5)
    return x, r, energy


def reference(t: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, float]:
    t2, w, f = t["t2"], t["w"], t["f"]
    x = w + np.einsum("ad,kdic->kaic", f, w)
    ring = np.einsum("kaic,kjcb->ijab", x, t2)
    r = ring - ring.transpose(0, 1, 3, 2) - ring.transpose(1, 0, 2, 3) + ring.transpose(1, 0, 3, 2)
    r = r + np.einsum("ijcb,ac->ijab", r, f) - np.einsum("ijca,bc->ijab", r, f)
    return 0.5 * x, r, float(np.sum(r * t2))


def test_a_deferred_block_gives_what_running_each_operation_at_once_gives():
    ctx = tilecc.Context(threads=2)
    t = tensors(ctx)
    dense = {k: x.to_dense() for k, x in t.items()}
    x_ref, r_ref, e_ref = reference(dense)
    with ctx.deferred():
        x, r, energy = update(t)
    np.testing.assert_allclose(x.to_dense(), x_ref, atol=1e-12)
    np.testing.assert_allclose(r.to_dense(), r_ref, atol=1e-11)
    assert energy == pytest.approx(e_ref, abs=1e-10)
    eager = update(tensors(tilecc.Context(threads=2)))
    np.testing.assert_array_equal(r.to_dense(), eager[1].to_dense())


def ring_block(ctx: tilecc.Context) -> tilecc.Tensor:
    """Two contractions into ring (one run together), then one that reads ring (a run after)."""
    t = tensors(ctx)
    t2, w = t["t2"], t["w"]
    ring = tilecc.Tensor(t2.spaces, name="ring", context=ctx)
    with ctx.deferred():
        ring["ijab"] = w["kaic"] * t2["kjcb"]
        ring["ijab"] -= w["kbic"] * t2["kjca"]
        ring["ijab"] += ring["ijcb"] * t["f"]["ac"]
        assert (ctx.stats.plans_built, ctx.stats.contractions) == (0, 0)
    return ring


def test_every_plan_is_built_before_any_operation_runs(tmp_path):
    ctx = tilecc.Context(threads=1, trace=True)
    ring_block(ctx)
    assert (ctx.stats.plans_built, ctx.stats.contractions) == (3, 3)
    ctx.write_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    inspections = [e for e in events if e.get("cat") == "inspector"]
    runs = [e for e in events if e.get("cat") == "run"]
    assert len(inspections) == 3 and [len(e["args"]["contractions"]) for e in runs] == [2, 1]
    assert max(e["ts"] + e["dur"] for e in inspections) <= min(e["ts"] for e in runs)


@pytest.mark.parametrize("policy", ["counter", "steal", "tce"])
def test_contractions_run_together_are_each_charged_their_own_work(tmp_path, policy):
    ctx = tilecc.Context(threads=2, policy=policy, trace=True)
    ring_block(ctx)
    records = ctx.contractions
    assert len(records) == 3 and all(r.calls == 1 and r.time.compute > 0 for r in records)
    # Each contraction's part of a run adds up to the run: the whole is every run's wall time.
    total = ctx.decomposition()
    assert total.total - total.inspector == pytest.approx(ctx.stats.seconds, rel=1e-9)
    assert sum(r.shared_calls for r in records) == pytest.approx(ctx.stats.shared_calls)
    # The report reads the same split back from the trace (written to a path given as text).
    ctx.write_trace(str(tmp_path / "trace.json"))
    report = tilecc.trace.read_trace(tmp_path / "trace.json").per_contraction
    assert set(report) == {r.expression for r in records}
    for r in records:
        assert report[r.expression].compute == pytest.approx(r.time.compute, rel=1e-3, abs=1e-6)
    runs = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]]
    runs = [e for e in runs if e.get("cat") == "run"]
    assert len(runs) == (3 if policy == "tce" else 2)  # NWChem's baseline runs one at a time


def test_plans_built_together_share_the_batch_wall_time(tmp_path):
    ctx = tilecc.Context(threads=2, trace=True)
    ring_block(ctx)
    records = ctx.contractions
    # The three plans were built on the two workers at once: the inspector's time is the batch's
    # wall time, and each contraction is charged its part of it.
    assert ctx.stats.inspector_seconds > 0
    assert sum(r.time.inspector for r in records) == pytest.approx(ctx.stats.inspector_seconds)
    ctx.write_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    inspections = [e for e in events if e.get("cat") == "inspector"]
    assert len(inspections) == 3 and {e["tid"] for e in inspections} <= {0, 1}
    charged = sum(e["args"]["charged"] for e in inspections)
    assert charged == pytest.approx(ctx.stats.inspector_seconds)
    report = tilecc.trace.read_trace(tmp_path / "trace.json").per_contraction
    for r in records:
        assert report[r.expression].inspector == pytest.approx(r.time.inspector)


def test_reading_a_queued_tensor_inside_the_block_runs_the_queue_first():
    ctx, t, x = one_thread_with_output()
    w, f = t["w"], t["f"]
    untouched = tilecc.Tensor.like(f, name="untouched")
    with ctx.deferred():
        x["kaic"] = f["ad"] * w["kdic"]
        untouched.fill_(2.0)  # not in the queue: runs at once, and the queue waits
        assert ctx.stats.contractions == 0
        expected = np.einsum("ad,kdic->kaic", f.to_dense(), w.to_dense())
        np.testing.assert_allclose(x.to_dense(), expected, atol=1e-12)
        assert ctx.stats.contractions == 1
        w.scale_(2.0)  # changes an operand of the next queued contraction, after it is queued
        x["kaic"] += f["ad"] * w["kdic"]
        f.scale_(0.0)  # must not reach the contraction queued before it
    np.testing.assert_allclose(x.to_dense(), 3.0 * expected, atol=1e-12)


def test_nested_blocks_run_the_queue_when_the_outermost_ends():
    ctx, t, x = one_thread_with_output()
    with ctx.deferred():
        with ctx.deferred():
            x["kaic"] = t["f"]["ad"] * t["w"]["kdic"]
        assert ctx.stats.contractions == 0
    assert ctx.stats.contractions == 1


def test_a_block_that_raises_runs_nothing_and_keeps_no_plan():
    ctx, t, x = one_thread_with_output()
    with pytest.raises(RuntimeError, match="stop"), ctx.deferred():
        x["kaic"] = t["f"]["ad"] * t["w"]["kdic"]
        raise RuntimeError("stop")
    assert not x.to_dense().any()
    assert (ctx.stats.plans_built, ctx.stats.contractions, ctx.contractions) == (0, 0, [])
    x["kaic"] = t["f"]["ad"] * t["w"]["kdic"]  # the context still works
    assert ctx.stats.contractions == 1


def test_a_bad_expression_is_refused_where_it_is_written():
    ctx, t, x = one_thread_with_output()
    with pytest.raises(ValueError, match="free labels"), ctx.deferred():
        x["kaic"] = t["f"]["ad"] * t["w"]["kdja"]


def test_reconfiguring_inside_a_block_is_refused():
    ctx = tilecc.Context(threads=1)
    with pytest.raises(ValueError, match="after the block ends"), ctx.deferred():
        ctx.reconfigure(policy="steal")
    assert ctx.policy == "counter"


def test_independent_contractions_are_batched_and_commuting_operations_run_ahead():
    x, y, z, a, b, c = (object() for _ in range(6))

    def contraction(out: object, left: object, right: object) -> QueuedContraction:
        return QueuedContraction(None, 1.0, out, left, right)

    def operation(*touched: object) -> QueuedOperation:
        return QueuedOperation(lambda: None, frozenset(id(t) for t in touched))

    c1, c2, c3 = contraction(x, a, b), contraction(x, a, c), contraction(z, x, b)
    c4 = contraction(b, y, c)
    op_y, op_a, op_b = operation(y), operation(a), operation(b)
    queue = [c1, op_y, c2, c3, op_a, c4, op_b]
    # c2 shares c1's output; c3 reads it; op_a touches nothing c3 does; c4 writes what c3 reads.
    steps = list(in_batches(queue, alone=lambda _: False))
    assert steps == [op_y, [c1, c2], op_a, [c3], [c4], op_b]
    steps = list(in_batches(queue, alone=lambda q: q is c2))
    assert steps == [op_y, [c1], [c2], op_a, [c3], [c4], op_b]
