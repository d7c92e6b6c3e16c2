"""tilecc: block-sparse, symmetry-aware tensor contractions for coupled-cluster methods.

A quick look::

    >>> import numpy as np, tilecc
    >>> o = tilecc.Space.spin_orbitals(irreps=[0, 1], tile=4, kind="occupied", name="o")
    >>> v = tilecc.Space.spin_orbitals(irreps=[0, 1, 1, 0, 1], tile=4, kind="virtual", name="v")
    >>> t2 = tilecc.Tensor([o, o, v, v], symmetry=tilecc.antisymmetric_pairs(4), name="t2")
    >>> t2.fill_random_(seed=1)
    >>> r2 = tilecc.Tensor.like(t2, name="r2")
    >>> r2["ijab"] = t2["jiba"]            # t_ij^ab = t_ji^ba for an antisymmetric t2
    >>> bool(np.allclose(r2.to_dense(), t2.to_dense()))
    True
"""

import contextlib

# Before the core loads: it sets what the libraries the core links read when they load.
from tilecc import _environment  # noqa: F401

# isort: split
from tilecc import _blas, _core, measure  # noqa: F401  (tilecc.measure is public)
from tilecc.cc import CCD, CCSD, CCSD_T, DRCCD
from tilecc.context import Context, default_context
from tilecc.expr import Labelled, Sum, Term, plan_for
from tilecc.space import Space
from tilecc.symmetry import (
    antisymmetric,
    antisymmetric_pairs,
    bra_ket_swap,
    pair_swap,
    symmetric,
)
from tilecc.tensor import Tensor

# A BLAS that will not load must not break the import: `tilecc info` reports why, and the
# first Context raises the same sentence.
with contextlib.suppress(ValueError):
    _blas.ensure_loaded()

__version__ = _core.version()

__all__ = [
    "CCD",
    "CCSD",
    "CCSD_T",
    "DRCCD",
    "Context",
    "Labelled",
    "Space",
    "Sum",
    "Tensor",
    "Term",
    "__version__",
    "antisymmetric",
    "antisymmetric_pairs",
    "bra_ket_swap",
    "default_context",
    "pair_swap",
    "plan_for",
    "symmetric",
]
