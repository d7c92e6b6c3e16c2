"""The small instance of paper 004's Figs. 3–4: 9 tasks over 6 unit blocks with room for 3,
made of three clusters of three tasks: {0, 3, 6} over blocks 0-2, {1, 4, 7} over 0, 1, 3 and
{2, 5, 8} over 1, 4, 5 (numbered so that the task order interleaves the clusters, as a plan's
order need not follow them). One-level stages it in 9 reads, as the figure does; two-level keeps
blocks 0 and 1 through two clusters."""

from __future__ import annotations

import numpy as np

from tilecc.hypergraph import BlockHypergraph

#: Blocks the figure's memory holds.
FIGURE_MEMORY = 3


def figure_instance() -> BlockHypergraph:
    blocks_of = {0: [0, 2], 3: [1, 2], 6: [0, 1], 1: [0, 3], 4: [1, 3], 7: [0, 3]}
    blocks_of |= {2: [1, 4], 5: [4, 5], 8: [1, 5]}
    pins = [np.array(sorted(t for t, b in blocks_of.items() if n in b)) for n in range(6)]
    return BlockHypergraph(np.ones(9), [("a", n) for n in range(6)], np.ones(6, "int64"), pins)
