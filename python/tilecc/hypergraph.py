"""A plan's task–block hypergraph, what stage schedules and placements are computed from (paper
004, sections 5 and 6): a vertex
per task weighted by its predicted cost, a net per block weighted by its bytes, pinning the tasks
that read or write the block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Operand codes of a net's block: a and b are read, c (the output) is read and written.
OPERANDS = "abc"


@dataclass(frozen=True)
class BlockHypergraph:
    """Tasks 0..n-1 and nets (blocks); ``pins[e]`` holds the tasks that touch net e."""

    task_weights: np.ndarray  # per task, predicted seconds (or any cost)
    nets: list[tuple[str, int]]  # per net: operand ("a", "b", "c") and slot
    net_bytes: np.ndarray  # per net
    pins: list[np.ndarray]  # per net, ascending task ids

    @classmethod
    def of_plan(cls, plan: Any) -> BlockHypergraph:
        """The hypergraph of a contraction plan (include/tilecc/hypergraph.hpp)."""
        weights, nets, offsets, pins = plan.hypergraph()
        pins = np.asarray(pins, dtype=np.int64)
        return cls(
            np.asarray(weights, dtype=float),
            [(tensor, int(slot)) for tensor, slot, _ in nets],
            np.array([bytes_ for _, _, bytes_ in nets], dtype=np.int64),
            [pins[offsets[e] : offsets[e + 1]] for e in range(len(nets))],
        )

    @property
    def tasks(self) -> int:
        return len(self.task_weights)

    def written(self, net: int) -> bool:
        """Whether the net's block is an output block (written back after it is held)."""
        return self.nets[net][0] == "c"

    def nets_of(self) -> list[list[int]]:
        """Per task, the nets it touches."""
        touched: list[list[int]] = [[] for _ in range(self.tasks)]
        for e, pins in enumerate(self.pins):
            for t in pins:
                touched[t].append(e)
        return touched

    def operands(self) -> BlockHypergraph:
        """The same hypergraph with its output blocks touched by no task: what the tasks get
        (the outputs' traffic is accumulates, not gets)."""
        pins = [pins[:0] if self.written(e) else pins for e, pins in enumerate(self.pins)]
        return BlockHypergraph(self.task_weights, self.nets, self.net_bytes, pins)

    def restricted(self, tasks: list[int]) -> BlockHypergraph:
        """The hypergraph of some of the tasks, numbered 0.. in the order given; the nets keep
        their numbers (a net no kept task touches has no pins)."""
        local = np.full(self.tasks, -1, dtype=np.int64)
        local[np.asarray(tasks, dtype=np.int64)] = np.arange(len(tasks))
        return BlockHypergraph(
            self.task_weights[np.asarray(tasks, dtype=np.int64)],
            self.nets,
            self.net_bytes,
            [np.sort(local[p][local[p] >= 0]) for p in self.pins],
        )

    def lower_bound(self) -> tuple[int, int]:
        """(bytes read, bytes written) when every block is read once and every output block
        written once: the least I/O any schedule can do (the read-once bound)."""
        read = int(self.net_bytes.sum())
        written = int(sum(b for e, b in enumerate(self.net_bytes) if self.written(e)))
        return read, written
