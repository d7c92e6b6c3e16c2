"""What an iteration does besides its contractions, for the simulation: the Python that builds
and dispatches its expressions, the dispatch of its element-wise operations and contraction
batches into the engine, and the element-wise operations' streams over the tensors' blocks.

The Python is timed on a second pass of the iteration on the job's planning context (the plans
then exist: what it times is the expression layer alone, as every iteration of a run pays it, and
every rank of a distributed run alike), which also lists the element-wise operations and counts
the batches. What a run pays beyond the planning pass to dispatch one operation or one batch is
measured on this machine once per process (dispatch_overheads), on tensors too small to compute.
Each element-wise operation streams the blocks of the tensors it touches: on P ranks each rank
its own (owner computes) over its workers, priced as a copy of that many elements by the
calibrated permutation model, and ends with the barrier that makes its writes visible. Where a
node runs more ranks and workers than it has cores, all of it slows as the tasks do.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

from tilecc.placement import Ranks
from tilecc.simulate.engine import collective_seconds
from tilecc.simulate.platform import Platform


@functools.cache
def dispatch_overheads(threads: int) -> tuple[float, float]:
    """Seconds a run pays, beyond the planning pass, for one element-wise operation and for one
    batch of contractions (its engine call and its records) on ``threads`` workers: 4 x 4
    tensors, too small to compute, timed on a real context and on a planning one (best of
    three rounds of 50)."""
    from tilecc import Context, Space, Tensor

    def timed(store: str) -> tuple[float, float]:
        ctx = Context(threads=threads, store=store)
        s = Space.spatial(4, tile=4)
        a, b, c = (Tensor([s, s], context=ctx) for _ in range(3))
        c["ij"] = a["ik"] * b["kj"]  # the plan, built once
        ops = batches = math.inf
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(50):
                c["ij"] = a["ij"] + b["ji"]  # three operations: c zeroed, a and b^T added
            ops = min(ops, time.perf_counter() - start)
            engine = ctx.stats.seconds
            start = time.perf_counter()
            for _ in range(50):
                c["ij"] += a["ik"] * b["kj"]  # one batch
            batches = min(batches, time.perf_counter() - start - (ctx.stats.seconds - engine))
        return ops, batches

    real, planned = timed("memory"), timed("none")
    return max(0.0, real[0] - planned[0]) / 150, max(0.0, real[1] - planned[1]) / 50


@dataclass(frozen=True)
class HostWork:
    python_seconds: float
    elementwise: list[int]  # per element-wise operation, the elements of the tensors it touches
    batches: int  # contraction batches the iteration runs
    model: Any  # the calibrated cost model, which prices the streams
    #: Per element-wise operation and per batch, what a run pays to dispatch it (seconds);
    #: None: measured on this machine (dispatch_overheads).
    dispatch: tuple[float, float] | None = None

    @classmethod
    def of_iteration(cls, cc: Any, problem: Any, amplitudes: list[Any]) -> HostWork:
        """Time a second planning pass of ``cc``'s iteration (energy and update; its plans are
        built) and list its element-wise operations and batches."""
        ctx = cc.context
        first, batches = len(ctx.planned_operations), ctx.planned_batches
        start = time.perf_counter()
        cc.energy(amplitudes, problem)
        with ctx.deferred():
            new = cc.update(amplitudes, problem)
        for t in new:
            ctx.settle(t)
        seconds = time.perf_counter() - start
        return cls(
            seconds,
            list(ctx.planned_operations[first:]),
            ctx.planned_batches - batches,
            ctx.cost_model,
        )

    def seconds(self, platform: Platform, ranks: Ranks, threads: int) -> float:
        """The host's seconds of one iteration on ``ranks`` of ``threads`` workers."""
        slowdown = platform.slowdown(ranks.per_node * threads)
        streams = sum(
            self.model.permute_seconds([max(1, math.ceil(e / ranks.size))], [0])
            for e in self.elementwise
        )
        per_op, per_batch = self.dispatch or dispatch_overheads(threads)
        dispatch = len(self.elementwise) * per_op + self.batches * per_batch
        work = (self.python_seconds + dispatch + streams / threads) * slowdown
        return work + len(self.elementwise) * collective_seconds(platform, ranks, 0)
