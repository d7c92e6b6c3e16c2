"""Type aliases shared across the package."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: One symmetry of a tensor, (permutation, sign): T[x] = sign * T[x[perm[0]], x[perm[1]], ...].
Generator = tuple[Sequence[int], int]
#: The labels of a tensor's indices in an expression.
Labels = tuple[str, ...]
#: What a tensor can be indexed with: "ijab", "i,j,a,b", "o1 o2 v1 v2" or ("i", "j", "a", "b").
LabelKey = str | Sequence[str]
#: Orbital energies and other per-orbital numbers: a list or a NumPy array.
FloatSequence = Sequence[float] | np.ndarray
