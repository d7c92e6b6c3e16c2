"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tilecc
from tilecc.testing import random_space


@st.composite
def occupied_virtual(
    draw: st.DrawFn, irrep_counts: tuple[int, ...] = (1, 2, 4, 8)
) -> tuple[tilecc.Space, tilecc.Space, int]:
    """(o, v, seed): random occupied and virtual spaces (spatial or spin orbitals, a random
    number of irreps, tile sizes from 1 to larger than a segment) and the seed that made them,
    which hypothesis prints with any failure."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    spin = draw(st.booleans())
    irreps = draw(st.sampled_from(irrep_counts))
    o = random_space(
        rng,
        size=draw(st.integers(1, 4)),
        kind="occupied",
        name="o",
        tile=draw(st.integers(1, 5)),
        spin=spin,
        irreps=irreps,
    )
    v = random_space(
        rng,
        size=draw(st.integers(1, 6)),
        kind="virtual",
        name="v",
        tile=draw(st.integers(1, 7)),
        spin=spin,
        irreps=irreps,
    )
    return o, v, seed
