"""What one contraction of an iteration is to a simulation: its tasks' predicted seconds (the
calibrated cost model's, as the runtime schedules them), the blocks each reads and writes with
their bytes, and how many times an iteration runs it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc.hypergraph import BlockHypergraph


@dataclass(frozen=True)
class Work:
    expression: str
    runs: int
    hypergraph: BlockHypergraph
    reads: list[np.ndarray]  # per task, the nets (blocks) it reads
    writes: list[np.ndarray]  # per task, the nets it writes

    @classmethod
    def of_plan(cls, plan: Any, runs: int) -> Work:
        h = BlockHypergraph.of_plan(plan)
        reads: list[list[int]] = [[] for _ in range(h.tasks)]
        writes: list[list[int]] = [[] for _ in range(h.tasks)]
        for e, pins in enumerate(h.pins):
            for t in pins.tolist():
                (writes if h.written(e) else reads)[t].append(e)
        return cls(
            plan.expression,
            runs,
            h,
            [np.asarray(r, dtype=np.int64) for r in reads],
            [np.asarray(w, dtype=np.int64) for w in writes],
        )

    @property
    def task_seconds(self) -> np.ndarray:
        return self.hypergraph.task_weights
