"""What an iteration does besides its contractions, for the simulation: the Python that builds
and dispatches its expressions, and its element-wise operations (copies, permuted sums, scaling,
the denominators) over the tensors' blocks.

Both come from the job's planning context. The Python is timed on a second pass of the iteration
there (the plans then exist: what it times is the expression layer alone, as every iteration of a
run pays it, and every rank of a distributed run alike). Each element-wise operation streams the
blocks of the tensors it touches; on P ranks each rank streams its own (owner computes) over its
workers, priced as a copy of that many elements by the calibrated permutation model, and ends
with the barrier that makes its writes visible. Where a node runs more ranks and workers than it
has cores, all of it slows as the tasks do.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from tilecc.placement import Ranks
from tilecc.simulate.platform import Platform


@dataclass(frozen=True)
class HostWork:
    python_seconds: float
    elementwise: list[int]  # per element-wise operation, the elements of the tensors it touches
    model: Any  # the calibrated cost model, which prices the streams

    @classmethod
    def of_iteration(cls, cc: Any, problem: Any, amplitudes: list[Any]) -> HostWork:
        """Time a second planning pass of ``cc``'s iteration (energy and update; its plans are
        built) and list its element-wise operations."""
        ctx = cc.context
        first = len(ctx.planned_operations)
        start = time.perf_counter()
        cc.energy(amplitudes, problem)
        with ctx.deferred():
            new = cc.update(amplitudes, problem)
        for t in new:
            ctx.settle(t)
        seconds = time.perf_counter() - start
        return cls(seconds, list(ctx.planned_operations[first:]), ctx.cost_model)

    def seconds(self, platform: Platform, ranks: Ranks, threads: int) -> float:
        """The host's seconds of one iteration on ``ranks`` of ``threads`` workers."""
        slowdown = platform.slowdown(ranks.per_node * threads)
        streams = sum(
            self.model.permute_seconds([max(1, math.ceil(e / ranks.size))], [0])
            for e in self.elementwise
        )
        barrier = 0.0
        if ranks.size > 1:
            latency, _ = platform.transfer_seconds(0, ranks.nodes > 1)
            barrier = 2 * math.ceil(math.log2(ranks.size)) * latency
        # Ranks beyond the node's cores share them: the Python and the streams slow alike.
        work = (self.python_seconds + streams / threads) * slowdown
        return work + len(self.elementwise) * barrier
