"""Placements of a plan's tasks and blocks on ranks (paper 004, section 5), by name, and what
each costs in bytes moved and load imbalance (``traffic``): computed once per plan, reused by
every execution of it.

>>> import numpy as np
>>> from tilecc.hypergraph import BlockHypergraph
>>> # Four tasks of equal cost; tasks 0 and 1 share block A (100 bytes), 2 and 3 block B.
>>> h = BlockHypergraph(np.ones(4), [("a", 0), ("a", 1)], np.array([100, 100]),
...                     [np.array([0, 1]), np.array([2, 3])])
>>> p = place(h, "hypergraph", Ranks(2))
>>> traffic(h, p, Ranks(2)).bytes_moved, traffic(h, p, Ranks(2)).imbalance
(0, 0.0)
"""

from __future__ import annotations

import numpy as np

from tilecc.hypergraph import BlockHypergraph
from tilecc.placement.schemes import SCHEMES
from tilecc.placement.traffic import Placement, Ranks, Traffic, traffic

__all__ = ["PLACEMENTS", "Placement", "Ranks", "Traffic", "place", "traffic"]

#: Placement names and what each does (the README's table and --placement's help).
PLACEMENTS = {name: description for name, (_, description) in SCHEMES.items()}


def place(
    h: BlockHypergraph, name: str, ranks: Ranks, owners: np.ndarray | None = None
) -> Placement:
    """The placement ``name`` of the plan whose hypergraph is ``h`` on ``ranks``. ``owners``
    (per net) are the ranks where blocks already live and stay; without them each placement
    puts the blocks itself (the hash owners, or, for ``hypergraph``, where they are used most)."""
    if name not in SCHEMES:
        raise ValueError(f"unknown placement {name!r}; choose one of {', '.join(sorted(SCHEMES))}.")
    return SCHEMES[name][0](h, ranks, owners)
