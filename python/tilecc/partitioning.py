"""Partitioning a plan's task–block hypergraph with Mt-KaHyPar: what the stage schedules (out of
core) and the task placements (across ranks) of paper 004 are both computed with.

The tasks are the vertices, weighted by what the parts must balance; every block shared by two or
more of them is a net weighted by its bytes. A block that must stay where it is (its owner rank,
for a placement) joins its net as a weightless vertex fixed to that part, so that the
connectivity−1 metric counts exactly the parts other than the owner's that touch it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tilecc.hypergraph import BlockHypergraph

#: What the weights of a partitioning problem are scaled to sum to, at most (well inside 2^31).
WEIGHT_TOTAL = 10**8


def scaled(values: np.ndarray) -> np.ndarray:
    """Positive whole weights in proportion to ``values`` (at least 1 each), summing to at most
    about WEIGHT_TOTAL."""
    if values.size == 0:
        return values.astype(int)
    total = max(float(values.sum()), 1e-300)
    return np.maximum(1, np.floor(values * (WEIGHT_TOTAL / total))).astype(int)


@functools.cache
def _partitioner() -> Any:
    import mtkahypar

    mtkahypar.set_seed(0)
    return mtkahypar.initialize(1, False)


def partition(
    h: BlockHypergraph,
    tasks: Sequence[int],
    k: int,
    weights: np.ndarray,
    cut_net: bool,
    epsilon: float,
    fixed: Mapping[int, int] | None = None,
) -> list[list[int]]:
    """`tasks` in k parts, balancing `weights` (per task of h) to within `epsilon`, minimising the
    cut-net or the connectivity−1 metric over the nets the tasks share; the empty parts dropped.
    With ``fixed`` (even empty), the parts keep their numbers instead (part p of the result is
    part p, empty or not), and it maps nets to the part their block stays in: such a net counts
    its part as touched, whatever tasks go there. Deterministic: one thread, one seed."""
    import mtkahypar

    numbered = fixed is not None
    fixed = fixed or {}
    local = {t: i for i, t in enumerate(tasks)}
    edges: list[list[int]] = []
    edge_bytes: list[float] = []
    anchors: list[int] = []  # per block vertex, the part it is fixed to
    for e, pins in enumerate(h.pins):
        inside = [local[t] for t in pins if t in local]
        if e in fixed and inside:
            # The block's own vertex, fixed to its part: weightless next to the tasks.
            inside.append(len(tasks) + len(anchors))
            anchors.append(fixed[e])
        if len(inside) > 1:
            edges.append(inside)
            edge_bytes.append(float(h.net_bytes[e]))
    # Mt-KaHyPar's weights are 32-bit integers, their sums included: both are scaled to sum to
    # at most WEIGHT_TOTAL.
    edge_weights = scaled(np.asarray(edge_bytes)).tolist()
    vertex_weights = scaled(np.asarray([weights[t] for t in tasks], dtype=float)).tolist()
    vertex_weights += [1] * len(anchors)
    partitioner = _partitioner()
    context = partitioner.context_from_preset(mtkahypar.PresetType.DEFAULT)
    context.logging = False
    objective = mtkahypar.Objective.CUT if cut_net else mtkahypar.Objective.KM1
    context.set_partitioning_parameters(k, epsilon, objective)
    graph = partitioner.create_hypergraph(
        context, len(vertex_weights), len(edges), edges, vertex_weights, edge_weights
    )
    if anchors:
        graph.add_fixed_vertices([-1] * len(tasks) + anchors, k)
    parted = graph.partition(context)
    parts: list[list[int]] = [[] for _ in range(k)]
    for t in tasks:
        parts[parted.block_id(local[t])].append(t)
    return parts if numbered else [p for p in parts if p]
