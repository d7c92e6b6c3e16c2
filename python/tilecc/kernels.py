"""tilecc's block kernels, callable on NumPy arrays (for tests and benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tilecc import _core


def permute(
    src: np.ndarray,
    axes: Sequence[int],
    out: np.ndarray | None = None,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    reference: bool = False,
) -> np.ndarray:
    """out = beta * out + alpha * src.transpose(axes), with tilecc's fast kernel (or its plain
    reference twin). ``out`` must be C-contiguous with the transposed shape.

    >>> a = np.arange(6.0).reshape(2, 3)
    >>> permute(a, (1, 0))
    array([[0., 3.],
           [1., 4.],
           [2., 5.]])
    """
    source = np.ascontiguousarray(src, dtype=np.float64)
    shape = tuple(source.shape[a] for a in axes)
    if out is None:
        out = np.zeros(shape)
    kernel = _core.permute_reference if reference else _core.permute
    kernel(source, [int(a) for a in axes], float(alpha), float(beta), out)
    return out
