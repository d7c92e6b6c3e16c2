"""Stage schedules from hypergraph partitioning (paper 004, sections 6.1–6.3, tilecc.partitioning):

- one-level: bisect the tasks (connectivity−1, balancing their cost) until each part's blocks fit
  in memory; a stage per part, holding all of its blocks;
- read-once: k parts (cut-net, balancing the bytes each task brings) such that the cut blocks and
  any one part's own blocks fit together; the cut blocks are held throughout and each part's own
  blocks only while it runs, so every block is read once;
- two-level: read-once where it fits, else bisect and try each half again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tilecc.hypergraph import BlockHypergraph
from tilecc.partitioning import partition
from tilecc.staging.stages import Stage, Step, held_by, one_step_stage

#: The most parts a read-once partition is searched for (the paper's limit).
MAX_READ_ONCE_PARTS = 127
#: Allowed imbalance of the parts' weights: up to 2:1 between two parts, so that a cluster of
#: tasks sharing blocks need not be cut to even the parts out (whether the parts fit in memory is
#: checked on the result, not left to the balance).
EPSILON = 1 / 3


def task_bytes(h: BlockHypergraph, tasks: Sequence[int]) -> np.ndarray:
    """Per task of h, the bytes of its blocks shared out among the tasks of `tasks` that touch
    them (the net-cost weights read-once balances)."""
    inside = set(tasks)
    weights = np.zeros(h.tasks)
    for e, pins in enumerate(h.pins):
        mine = [t for t in pins if t in inside]
        for t in mine:
            weights[t] += h.net_bytes[e] / len(mine)
    return weights


def memory(h: BlockHypergraph, tasks: Sequence[int], nets_of: list[list[int]]) -> int:
    return int(sum(h.net_bytes[e] for e in held_by(list(tasks), nets_of)))


def bisect(h: BlockHypergraph, tasks: list[int], weights: np.ndarray) -> list[list[int]]:
    """Two parts of `tasks` by connectivity−1 balancing `weights`; split in order if the
    partitioner leaves one empty (tasks that share nothing), so that recursion always ends."""
    halves = partition(h, tasks, 2, weights, False, EPSILON)
    return halves if len(halves) == 2 else [tasks[: len(tasks) // 2], tasks[len(tasks) // 2 :]]


def one_level(h: BlockHypergraph, limit: int) -> list[Stage]:
    nets_of = h.nets_of()

    def stages(tasks: list[int]) -> list[Stage]:
        if memory(h, tasks, nets_of) <= limit or len(tasks) == 1:
            return [one_step_stage(tasks, nets_of)]
        return [stage for half in bisect(h, tasks, h.task_weights) for stage in stages(half)]

    return stages(list(range(h.tasks)))


def read_once(
    h: BlockHypergraph, tasks: list[int], limit: int, nets_of: list[list[int]]
) -> Stage | None:
    """A read-once stage of `tasks` within `limit` bytes, or None when the search finds none."""
    total = memory(h, tasks, nets_of)
    if total <= limit:
        return one_step_stage(tasks, nets_of)
    weights = task_bytes(h, tasks)
    for k in range(max(2, math.ceil(total / limit)), min(MAX_READ_ONCE_PARTS, len(tasks)) + 1):
        parts = partition(h, tasks, k, weights, True, EPSILON)
        part_of = {t: p for p, part in enumerate(parts) for t in part}
        shared = tuple(
            e
            for e in held_by(tasks, nets_of)
            if len({part_of[t] for t in h.pins[e] if t in part_of}) > 1
        )
        shared_bytes = int(sum(h.net_bytes[e] for e in shared))
        if shared_bytes > limit:
            # More parts tend to cut more blocks, so the search ends at the first cut that does
            # not fit (the paper searches on to 127 parts, at a partitioner call each).
            return None
        cut = set(shared)
        steps = [
            Step(tuple(part), tuple(e for e in held_by(part, nets_of) if e not in cut))
            for part in parts
        ]
        if all(shared_bytes + int(sum(h.net_bytes[e] for e in s.nets)) <= limit for s in steps):
            return Stage(shared, tuple(steps))
    return None


def read_once_only(h: BlockHypergraph, limit: int) -> list[Stage]:
    nets_of = h.nets_of()
    stage = read_once(h, list(range(h.tasks)), limit, nets_of)
    if stage is None:
        raise ValueError(
            f"no read-once schedule of this contraction holds its shared blocks within "
            f"{limit} bytes; choose the two-level schedule or a larger memory budget."
        )
    return [stage]


def two_level(h: BlockHypergraph, limit: int) -> list[Stage]:
    nets_of = h.nets_of()

    def stages(tasks: list[int]) -> list[Stage]:
        stage = read_once(h, tasks, limit, nets_of) if len(tasks) > 1 else None
        if stage is not None or len(tasks) == 1:
            return [stage or one_step_stage(tasks, nets_of)]
        return [s for half in bisect(h, tasks, task_bytes(h, tasks)) for s in stages(half)]

    return stages(list(range(h.tasks)))
