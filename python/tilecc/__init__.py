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
import importlib
from typing import TYPE_CHECKING, Any

# Before the core loads: it sets what the libraries the core links read when they load.
from tilecc import _environment  # noqa: F401

# isort: split
from tilecc import _blas, _core

# The BLAS loads now, before PySCF's: loading it names this CPU's kernels (OPENBLAS_CORETYPE) to
# the older OpenBLAS that PySCF bundles. One that will not load must not break the import:
# `tilecc info` reports why, and the first Context raises the same sentence.
with contextlib.suppress(ValueError):
    _blas.ensure_loaded()

__version__ = _core.version()

#: The public names and the module each comes from, imported when first used, so that
#: `import tilecc` (and `tilecc --version`) does not pay for NumPy, PySCF or the CC methods.
_PUBLIC = {
    "CCD": "tilecc.cc",
    "CCSD": "tilecc.cc",
    "CCSD_T": "tilecc.cc",
    "DRCCD": "tilecc.cc",
    "Context": "tilecc.context",
    "default_context": "tilecc.context",
    "Labelled": "tilecc.expr",
    "Sum": "tilecc.expr",
    "Term": "tilecc.expr",
    "plan_for": "tilecc.expr",
    "Space": "tilecc.space",
    "antisymmetric": "tilecc.symmetry",
    "antisymmetric_pairs": "tilecc.symmetry",
    "bra_ket_swap": "tilecc.symmetry",
    "pair_swap": "tilecc.symmetry",
    "symmetric": "tilecc.symmetry",
    "Tensor": "tilecc.tensor",
}

if TYPE_CHECKING:
    from tilecc import measure  # noqa: F401  (public, reached as tilecc.measure)
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


def __getattr__(name: str) -> Any:
    """A public name, or a submodule (``tilecc.cc``, ``tilecc.measure``), imported when first
    reached."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    else:
        try:
            value = importlib.import_module(f"tilecc.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tilecc.{name}":
                raise
            raise AttributeError(f"module 'tilecc' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


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
