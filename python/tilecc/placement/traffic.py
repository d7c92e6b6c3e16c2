"""What a placement of a plan's tasks and blocks on ranks costs: the bytes that move between
ranks, by class, and the load imbalance (paper 004, section 5's model).

A block is moved once to (or accumulated once from) every rank other than its owner that runs at
least one task touching it: a rank keeps what it fetched for all of its tasks, as paper 004's
processors do. Counting needs no ranks, only the task–block hypergraph, so a placement can be
evaluated for any number of (virtual) ranks without running a task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.hypergraph import BlockHypergraph


@dataclass(frozen=True)
class Ranks:
    """P ranks in nodes of ``per_node`` consecutive ranks (TILECC_RANKS_PER_NODE's virtual
    nodes, or real ones)."""

    size: int
    per_node: int = 1

    def __post_init__(self) -> None:
        if self.size < 1 or self.per_node < 1 or self.size % self.per_node:
            raise ValueError(
                f"{self.size} ranks in nodes of {self.per_node} is not a whole number of nodes; "
                "give ranks per node that divide the ranks."
            )

    @property
    def nodes(self) -> int:
        return self.size // self.per_node

    def node_of(self, rank: int) -> int:
        return rank // self.per_node


@dataclass(frozen=True)
class Placement:
    """The rank of every task and the owner rank of every net's block."""

    name: str
    task_rank: np.ndarray  # per task of the hypergraph
    owner: np.ndarray  # per net


@dataclass(frozen=True)
class Traffic:
    """Bytes by class (a block used where it lives is local) and the balance of task weights."""

    bytes_local: int
    bytes_intra_node: int
    bytes_inter_node: int
    loads: np.ndarray  # per rank, the sum of its tasks' weights

    @property
    def bytes_moved(self) -> int:
        return self.bytes_intra_node + self.bytes_inter_node

    @property
    def imbalance(self) -> float:
        """The heaviest rank's load over the mean, less one (0: perfectly balanced)."""
        mean = float(self.loads.mean())
        return float(self.loads.max()) / mean - 1.0 if mean > 0 else 0.0


def traffic(h: BlockHypergraph, placement: Placement, ranks: Ranks) -> Traffic:
    local = intra = inter = 0
    for e, pins in enumerate(h.pins):
        if len(pins) == 0:
            continue
        owner = int(placement.owner[e])
        size = int(h.net_bytes[e])
        for rank in np.unique(placement.task_rank[pins]).tolist():
            if rank == owner:
                local += size
            elif ranks.node_of(rank) == ranks.node_of(owner):
                intra += size
            else:
                inter += size
    loads = np.bincount(placement.task_rank, weights=h.task_weights, minlength=ranks.size)
    return Traffic(local, intra, inter, loads)
