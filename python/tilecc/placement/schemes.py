"""The placements of paper 004, section 5, of one plan's tasks on ranks:

- ``hash``: blocks on their hash owners (the mpi store's), tasks split by LPT of their predicted
  cost (the static policies' rank shares): balanced, blind to locality;
- ``random``: blocks on their hash owners, each task on a rank drawn from one seeded sequence
  (the same on every rank): balances the number of tasks, not their cost;
- ``owner``: each task on the owner of its (first) output block: the output stays local;
- ``hypergraph``: Mt-KaHyPar on the task–block hypergraph (connectivity−1: each block counted
  once per rank other than its owner that uses it), balancing the tasks' cost to within
  EPSILON. Blocks that already have owners stay there (fixed vertices); free blocks go to the
  rank that uses them most. On nodes of several ranks the partition has two levels, nodes first,
  so that inter-node bytes are cut first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilecc import _core
from tilecc.hypergraph import BlockHypergraph
from tilecc.partitioning import partition
from tilecc.placement.traffic import Placement, Ranks

#: The hypergraph placement's allowed load imbalance (heaviest part over the mean, less one).
EPSILON = 0.03
#: The seed of the random placement: every rank draws the same sequence.
SEED = 2024


def hash_owners(h: BlockHypergraph, ranks: Ranks) -> np.ndarray:
    """Per net, the rank the mpi store keeps its block on (a hash of the block's slot)."""
    slots = np.array([slot for _, slot in h.nets], dtype=np.int64)
    by_slot = np.asarray(_core.hash_owners(int(slots.max(initial=-1)) + 1, ranks.size))
    return by_slot[slots] if slots.size else slots.astype(int)


def busiest_rank(h: BlockHypergraph, task_rank: np.ndarray, ranks: Ranks) -> np.ndarray:
    """Per net, the rank that runs most of the tasks touching its block (the lowest on ties;
    rank 0 for a block no task touches)."""
    owner = np.zeros(len(h.nets), dtype=int)
    for e, pins in enumerate(h.pins):
        if len(pins):
            owner[e] = int(np.bincount(task_rank[pins], minlength=ranks.size).argmax())
    return owner


def _hash(h: BlockHypergraph, ranks: Ranks, owners: np.ndarray | None) -> Placement:
    task_rank = np.asarray(_core.lpt_bins(h.task_weights.tolist(), ranks.size), dtype=int)
    return Placement("hash", task_rank, _given_or_hashed(h, ranks, owners))


def _random(h: BlockHypergraph, ranks: Ranks, owners: np.ndarray | None) -> Placement:
    task_rank = np.random.default_rng(SEED).integers(0, ranks.size, h.tasks)
    return Placement("random", task_rank, _given_or_hashed(h, ranks, owners))


def _owner(h: BlockHypergraph, ranks: Ranks, owners: np.ndarray | None) -> Placement:
    owner = _given_or_hashed(h, ranks, owners)
    task_rank = np.zeros(h.tasks, dtype=int)
    marked = np.zeros(h.tasks, dtype=bool)
    for e, pins in enumerate(h.pins):
        if h.written(e):
            fresh = pins[~marked[pins]]
            task_rank[fresh] = owner[e]
            marked[fresh] = True
    return Placement("owner", task_rank, owner)


def _hypergraph(h: BlockHypergraph, ranks: Ranks, owners: np.ndarray | None) -> Placement:
    task_rank = np.zeros(h.tasks, dtype=int)
    # Nodes first (each node's ranks as one part), then the ranks within each node.
    fixed_nodes = {}
    if owners is not None:
        fixed_nodes = {e: ranks.node_of(int(r)) for e, r in enumerate(owners)}
    for node, tasks in enumerate(_parts(h, list(range(h.tasks)), ranks.nodes, fixed_nodes)):
        first = node * ranks.per_node
        fixed = {}
        if owners is not None:
            fixed = {e: int(r) - first for e, r in enumerate(owners) if r // ranks.per_node == node}
        for local, part in enumerate(_parts(h, tasks, ranks.per_node, fixed)):
            task_rank[np.asarray(part, dtype=int)] = first + local
    owner = owners if owners is not None else busiest_rank(h, task_rank, ranks)
    return Placement("hypergraph", task_rank, np.asarray(owner, dtype=int))


def _parts(h: BlockHypergraph, tasks: list[int], k: int, fixed: dict[int, int]) -> list[list[int]]:
    """`tasks` in k numbered parts, some perhaps empty (one task each when there are no more
    tasks than parts)."""
    if k == 1:
        return [tasks]
    if len(tasks) <= k:
        return [[t] for t in tasks] + [[] for _ in range(k - len(tasks))]
    return partition(h, tasks, k, h.task_weights, False, EPSILON, fixed=fixed)


def _given_or_hashed(h: BlockHypergraph, ranks: Ranks, owners: np.ndarray | None) -> np.ndarray:
    return np.asarray(owners, dtype=int) if owners is not None else hash_owners(h, ranks)


Scheme = Callable[[BlockHypergraph, Ranks, "np.ndarray | None"], Placement]

SCHEMES: dict[str, tuple[Scheme, str]] = {
    "hash": (_hash, "blocks on their hash owners, tasks split by LPT of their cost"),
    "random": (_random, "blocks on their hash owners, tasks on ranks drawn at random (seeded)"),
    "owner": (_owner, "each task on the owner of its output block"),
    "hypergraph": (
        _hypergraph,
        "tasks and blocks by partitioning the task-block hypergraph (Mt-KaHyPar, nodes first)",
    ),
}
