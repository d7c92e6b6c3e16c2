"""Helpers shared by tilecc's tests (and useful to anyone testing code built on tilecc): random
spaces and tensors, dense checks of sparsity and symmetry against NumPy, and running the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.context import Context
from tilecc.space import Space
from tilecc.tensor import Tensor
from tilecc.typing import Generator


def random_space(
    rng: np.random.Generator, *, size: int, kind: str, name: str, tile: int, spin: bool, irreps: int
) -> Space:
    """A space of ``size`` orbitals per spin (alpha and beta if ``spin``), irreps drawn from
    range(irreps), increasing energies (occupied negative, virtual positive)."""
    base = -2.0 if kind == "occupied" else 0.5
    if spin:
        return Space.spin_orbitals(
            list(rng.integers(0, irreps, size)),
            energies=base + np.sort(rng.random(size)),
            beta_irreps=list(rng.integers(0, irreps, size)),
            beta_energies=base + np.sort(rng.random(size)),
            tile=tile,
            kind=kind,
            name=name,
        )
    return Space(
        list(rng.integers(0, irreps, size)),
        energies=base + np.sort(rng.random(size)),
        tile=tile,
        kind=kind,
        name=name,
    )


def inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for k, p in enumerate(perm):
        inv[p] = k
    return inv


def symmetry_error(tensor: Tensor, dense: np.ndarray | None = None) -> float:
    """Largest violation of T[x] = s T[g.x] over the generators, on the dense tensor."""
    d = tensor.to_dense() if dense is None else dense
    worst = 0.0
    for perm, sign in tensor.symmetry:
        if d.size:
            worst = max(worst, float(np.max(np.abs(d - sign * d.transpose(inverse(perm))))))
    return worst


def allowed_mask(tensor: Tensor) -> np.ndarray:
    """True where spin and point-group symmetry allow an element of the dense tensor."""
    spin_total = np.zeros(tensor.shape, dtype=np.int64)
    irrep_total = np.zeros(tensor.shape, dtype=np.int64)
    for k, (space, side) in enumerate(zip(tensor.spaces, tensor.spin_sides)):
        view = [1] * tensor.rank
        view[k] = space.size
        spin_total = spin_total + side * np.asarray(space.spins).reshape(view)
        irrep_total = irrep_total ^ np.asarray(space.irreps).reshape(view)
    return (spin_total == 0) & (irrep_total == tensor.irrep)


def random_symmetric_dense(tensor: Tensor, rng: np.random.Generator) -> np.ndarray:
    """A random dense array with the tensor's sparsity and exact permutational symmetry."""
    a = rng.standard_normal(tensor.shape) * allowed_mask(tensor)
    total = np.zeros_like(a)
    for perm, sign in tensor.group_elements:
        total += sign * a.transpose(inverse(perm))
    return total / len(tensor.group_elements)


def make_tensor(
    spaces: Sequence[Space],
    symmetry: Sequence[Generator],
    name: str,
    context: Context,
    seed: int | None = None,
    **kwargs: object,
) -> Tensor:
    t = Tensor(spaces, symmetry, name=name, context=context, **kwargs)  # type: ignore[arg-type]
    if seed is not None:
        t.fill_random_(seed)
    return t


def assert_close(
    actual: np.ndarray, expected: np.ndarray, *, rtol: float = 1e-12, what: str = "result"
) -> None:
    """|actual - expected| <= rtol * max(1, max|expected|), everywhere."""
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    if err > rtol * scale:
        raise AssertionError(f"{what} differs from the reference by {err:.3g} (scale {scale:.3g})")


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``tilecc ARGS`` in a fresh interpreter, as a user runs it; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "tilecc.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


def run_results(source: Path | str) -> dict[str, Any]:
    """What ``tilecc run --json`` measured: the ``extras`` of the QCSchema AtomicResult it
    wrote (a file, or the text of one), after checking that it is one."""
    text = source.read_text() if isinstance(source, Path) else source
    result = json.loads(text)
    assert result["schema_name"] == "qcschema_output", result.get("schema_name")
    assert result["provenance"]["creator"] == "tilecc"
    return dict(result["extras"])
