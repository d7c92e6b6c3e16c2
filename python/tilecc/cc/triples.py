"""The (T) correction of CCSD, one triple of occupied chunks at a time: spin-orbital (any
reference) and closed-shell (spin-adapted) forms.

Spin-orbital form:

    E(T) = 1/36 sum_{ijkabc} W_ijk^abc (W_ijk^abc + V_ijk^abc) / D_ijk^abc
    W = P(i/jk) P(a/bc) [ sum_e t_jk^ae <ei||bc> - sum_m t_im^bc <ma||jk> ]       (connected)
    V = P(i/jk) P(a/bc) [ t_i^a <jk||bc> + f_ia t_jk^bc ]                          (disconnected)
    D = f_ii + f_jj + f_kk - f_aa - f_bb - f_cc,   P(i/jk) f(ijk) = f(ijk) - f(jik) - f(kji)

(J. F. Stanton, Chem. Phys. Lett. 281, 130 (1997); T. D. Crawford, H. F. Schaefer, Rev. Comp.
Chem. 14 (2000)). The summand is symmetric in (i, j, k), so only chunk triples I <= J <= K are
computed, weighted by their number of orderings; no o^3 v^3 array is ever formed, only
chunk^3 v^3 for one task.

The spin-orbital form runs each task on dense NumPy slices of t2 and the integrals (o v^3 at
most), which bounds it to small and medium molecules; the closed-shell form runs in C++ on the
engine's workers (see restricted_triples).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from tilecc.host.pyscf import RestrictedProblem, SpinOrbitalProblem
from tilecc.space import Space
from tilecc.tensor import Tensor

#: Largest W (and V) a spin-orbital (T) task may hold, in doubles (2 MiB each): small enough
#: that a task's arrays stay in cache rather than streaming from memory.
TASK_DOUBLES = 1 << 18


def _antisymmetrize_abc(x: np.ndarray) -> np.ndarray:
    """P(a/bc) on the last three axes."""
    return x - x.swapaxes(-3, -2) - x.swapaxes(-3, -1)


def chunks(n: int, size: int) -> list[slice]:
    return [slice(s, min(n, s + size)) for s in range(0, n, size)]


def over_chunk_triples(
    no: int,
    nv: int,
    block: Callable[[slice, slice, slice], float],
    progress: Callable[[int, int], None] | None,
) -> float:
    """sum over all (i, j, k) of a summand symmetric in (i, j, k), as tasks over chunk triples
    I <= J <= K of the occupied orbitals, each weighted by its number of orderings."""
    size = max(1, int((TASK_DOUBLES / max(1, nv) ** 3) ** (1 / 3)))
    parts = chunks(no, size)
    tasks = list(itertools.combinations_with_replacement(range(len(parts)), 3))
    total = 0.0
    for done, (a, b, c) in enumerate(tasks):
        weight = len(set(itertools.permutations((a, b, c))))  # orderings of this triple
        total += weight * block(parts[a], parts[b], parts[c])
        if progress is not None:
            progress(done + 1, len(tasks))
    return total


def _denominator(eo: np.ndarray, ev: np.ndarray, i: slice, j: slice, k: slice) -> np.ndarray:
    """D_ijk^abc = e_i + e_j + e_k - e_a - e_b - e_c for one block, indices (i,j,k,a,b,c)."""
    occ = eo[i, None, None] + eo[None, j, None] + eo[None, None, k]
    vir = ev[:, None, None] + ev[None, :, None] + ev[None, None, :]
    return occ[..., None, None, None] - vir


def spin_orbital_triples(
    t1: Tensor,
    t2: Tensor,
    p: SpinOrbitalProblem,
    progress: Callable[[int, int], None] | None = None,
) -> float:
    """E(T) for converged spin-orbital CCSD amplitudes."""
    T1, T2 = t1.to_dense(), t2.to_dense()
    ovvv, ooov, oovv = (p.eri[k].to_dense() for k in ("ovvv", "ooov", "oovv"))
    fov = p.fock["ov"].to_dense()
    eo, ev = p.occ.energies, p.vir.energies

    def base_w(i: slice, j: slice, k: slice) -> np.ndarray:
        # -sum_e t_jk^ae <ie||bc> - sum_m t_im^bc <jk||ma>, indices (i, j, k, a, b, c)
        w = -np.einsum("jkae,iebc->ijkabc", T2[j, k], ovvv[i], optimize=True)
        w -= np.einsum("imbc,jkma->ijkabc", T2[i], ooov[j, k], optimize=True)
        return w

    def base_v(i: slice, j: slice, k: slice) -> np.ndarray:
        v = np.einsum("ia,jkbc->ijkabc", T1[i], oovv[j, k], optimize=True)
        v += np.einsum("ia,jkbc->ijkabc", fov[i], T2[j, k], optimize=True)
        return v

    def permute_ijk(
        f: Callable[[slice, slice, slice], np.ndarray], i: slice, j: slice, k: slice
    ) -> np.ndarray:
        """P(i/jk) f: f(ijk) - f(jik) - f(kji), each brought to (i, j, k) order."""
        return (
            f(i, j, k)
            - f(j, i, k).transpose(1, 0, 2, 3, 4, 5)
            - f(k, j, i).transpose(2, 1, 0, 3, 4, 5)
        )

    def block(i: slice, j: slice, k: slice) -> float:
        w = _antisymmetrize_abc(permute_ijk(base_w, i, j, k))
        v = _antisymmetrize_abc(permute_ijk(base_v, i, j, k))
        return float(np.sum(w * (w + v) / _denominator(eo, ev, i, j, k)))

    return over_chunk_triples(T1.shape[0], T1.shape[1], block, progress) / 36.0


def restricted_triples(
    t1: Tensor, t2: Tensor, p: RestrictedProblem, progress: Callable[[int, int], None] | None = None
) -> float:
    """E(T) for converged closed-shell (spin-adapted) CCSD amplitudes.

        W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ]
        V = S[ (ia|jb) t_kc + f_kc t_ij^ab ]
        E(T) = 2/6 sum_{ijkabc} W r3(W + V/2) / D,
        r3(x)_ijk = 4 x_ijk + x_jki + x_kij - 2 x_kji - 2 x_ikj - 2 x_jik

    with S the sum over the six simultaneous orderings of (i,j,k) and (a,b,c) (the closed-shell
    form of PySCF's ccsd_t). Because W and V are symmetric under S, the (i,j,k) transposes in r3
    are (a,b,c) transposes of the same block, so a task needs only its own triple. The tasks
    (i <= j <= k, weighted by their orderings) run on the engine's workers, fused in C++ over the
    triple's non-zero point-group blocks only (include/tilecc/kernels/triples.hpp); one call per
    i keeps the progress display moving.
    """
    from tilecc import _core

    def dense(name: str) -> np.ndarray:
        return np.ascontiguousarray(p.eri[name].to_dense())

    def irreps(space: Space) -> np.ndarray:
        return np.asarray(space.irreps, dtype=np.int32)

    kernel = _core.ClosedShellTriples(
        ovvv=dense("ovvv"),
        ovoo=dense("ovoo"),
        ovov=dense("ovov"),
        t2=t2.to_dense(),
        t1=t1.to_dense(),
        fov=p.fock["ov"].to_dense(),
        eo=np.ascontiguousarray(p.occ.energies),
        ev=np.ascontiguousarray(p.vir.energies),
        occ_irreps=irreps(p.occ),
        vir_irreps=irreps(p.vir),
    )
    no = p.occ.size
    total = 0.0
    for i in range(no):
        total += kernel.energy_for_i(i, t1.context.executor)
        if progress is not None:
            progress(i + 1, no)
    return 2.0 / 6.0 * total
