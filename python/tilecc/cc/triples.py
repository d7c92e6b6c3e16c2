"""The (T) correction of CCSD, one occupied triple at a time on the engine's workers: the
spin-orbital form (any single-determinant reference: UHF, and ROHF on semicanonical orbitals) and
the closed-shell (spin-adapted) form.

Spin-orbital form (include/tilecc/kernels/spin_orbital_triples.hpp):

    E(T) = 1/36 sum_{ijkabc} W_ijk^abc (W_ijk^abc + V_ijk^abc) / D_ijk^abc
    W = P(i/jk) P(a/bc) [ sum_e t_jk^ae <ei||bc> - sum_m t_im^bc <ma||jk> ]       (connected)
    V = P(i/jk) P(a/bc) [ t_i^a <jk||bc> + f_ia t_jk^bc ]                          (disconnected)
    D = f_ii + f_jj + f_kk - f_aa - f_bb - f_cc,   P(i/jk) f(ijk) = f(ijk) - f(jik) - f(kji)

(J. F. Stanton, Chem. Phys. Lett. 281, 130 (1997); T. D. Crawford, H. F. Schaefer, Rev. Comp.
Chem. 14 (2000)).

Closed-shell form (include/tilecc/kernels/closed_shell_triples.hpp), PySCF's ccsd_t:

    W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ]
    V = S[ (ia|jb) t_kc + f_kc t_ij^ab ]
    E(T) = 2/6 sum_{ijkabc} W r3(W + V/2) / D,
    r3(x)_ijk = 4 x_ijk + x_jki + x_kij - 2 x_kji - 2 x_ikj - 2 x_jik

with S the sum over the six simultaneous orderings of (i,j,k) and (a,b,c).

Both kernels read the integrals and amplitudes from their block tensors through the tensors'
stores, compute each triple fused over its non-zero spin and point-group blocks only, and never
hold more than one triple's W; the triples run as weighted tasks on the executor, one call per
first occupied index so that the progress display moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tilecc import _core
from tilecc.context import Context
from tilecc.host.pyscf import RestrictedProblem, SpinOrbitalProblem
from tilecc.tensor import Tensor

Progress = Callable[[int, int], None]


def _run(kernel: _core.TriplesKernel, context: Context, progress: Progress | None) -> float:
    start = time.perf_counter()
    total = 0.0
    occupied = kernel.occupied
    for i in range(occupied):
        total += kernel.energy_for_i(i, context.runtime)
        if progress is not None:
            progress(i + 1, occupied)
    context.count_triples(kernel.executed_flops, time.perf_counter() - start)
    return kernel.scale * total


def spin_orbital_kernel(t1: Tensor, t2: Tensor, p: SpinOrbitalProblem) -> _core.TriplesKernel:
    """The spin-orbital (T) kernel over these amplitudes and the problem's integrals."""
    return _core.SpinOrbitalTriples(
        ovvv=p.eri["ovvv"].settled_core(),
        ooov=p.eri["ooov"].settled_core(),
        oovv=p.eri["oovv"].settled_core(),
        t2=t2.settled_core(),
        t1=t1.settled_core(),
        fov=p.fock["ov"].settled_core(),
    )


def spin_orbital_triples(
    t1: Tensor, t2: Tensor, p: SpinOrbitalProblem, progress: Progress | None = None
) -> float:
    """E(T) for converged spin-orbital CCSD amplitudes (orbital energies: the problem's spaces')."""
    return _run(spin_orbital_kernel(t1, t2, p), t1.context, progress)


def restricted_triples(
    t1: Tensor, t2: Tensor, p: RestrictedProblem, progress: Progress | None = None
) -> float:
    """E(T) for converged closed-shell (spin-adapted) CCSD amplitudes."""
    kernel = _core.ClosedShellTriples(
        ovvv=p.eri["ovvv"].settled_core(),
        ovoo=p.eri["ovoo"].settled_core(),
        ovov=p.eri["ovov"].settled_core(),
        t2=t2.settled_core(),
        t1=t1.settled_core(),
        fov=p.fock["ov"].settled_core(),
    )
    return _run(kernel, t1.context, progress)
