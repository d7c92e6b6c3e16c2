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
stores and compute fused over non-zero spin and point-group blocks only. The spin-orbital kernel
loops over occupied triples (a v^3 W each); the closed-shell one over virtual triples a >= b >= c
(Rendell's order: an o^3 W each, which stays in cache, and GEMMs batched over ranges of c). Their
tasks run weighted on the executor, one call per step so that the progress display moves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tilecc import _core, mpi
from tilecc.context import Context
from tilecc.host.pyscf import RestrictedProblem, SpinOrbitalProblem
from tilecc.space import Space
from tilecc.tensor import Tensor

Progress = Callable[[int, int], None]


def _run(kernel: _core.TriplesKernel, context: Context, progress: Progress | None) -> float:
    start = time.perf_counter()
    total = 0.0
    steps = kernel.steps
    for step in range(steps):
        total += kernel.energy_for_step(step, context.runtime)
        if progress is not None:
            progress(step + 1, steps)
    context.count_triples(
        kernel.executed_flops,
        time.perf_counter() - start,
        kernel.held_bytes,
        kernel.fetched_bytes,
    )
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
        runtime=t1.context.runtime,
    )


def spin_orbital_triples(
    t1: Tensor, t2: Tensor, p: SpinOrbitalProblem, progress: Progress | None = None
) -> float:
    """E(T) for converged spin-orbital CCSD amplitudes (orbital energies: the problem's spaces')."""
    return _run(spin_orbital_kernel(t1, t2, p), t1.context, progress)


# The occupied loop's W per triple (v^3 / |G| doubles) above which its element passes leave the
# cache and the virtual loop is faster: measured between 1.61 MB (benzene/cc-pVDZ in C2v, where
# the occupied loop is 1.06-1.30x faster) and 3.45 MB (in Cs, the virtual loop at 0.66-0.72x of
# its time), on 1 MiB of L2 per core (benchmarks/triples/run.py, benchmarks/HISTORY.md).
OCCUPIED_LOOP_W_BYTES = 2 << 20


def largest_occupied_loop_w(vir: Space) -> int:
    """Elements of the occupied loop's largest W (a v^3 array packed by point group)."""
    per_irrep = np.bincount(np.asarray(vir.irreps, dtype=int), minlength=8)
    return max(
        sum(
            int(per_irrep[a] * per_irrep[b] * per_irrep[g ^ a ^ b])
            for a in range(8)
            for b in range(8)
        )
        for g in range(8)
    )


def closed_shell_loop(vir: Space, nodes: int = 1) -> str:
    """The closed-shell (T) loop for this virtual space on ``nodes`` nodes: on one node the one
    expected to be faster, ``"occupied"`` while the occupied loop's largest W stays in cache,
    else ``"virtual"``; on several, ``"occupied"``, which spreads its o v^3 integrals over the
    nodes (each task gets the three slices of its triple), where the virtual loop's tasks each
    read all of them and every node holds them whole.

    >>> from tilecc.space import Space
    >>> closed_shell_loop(Space.spatial(60)), closed_shell_loop(Space.spatial(80))
    ('occupied', 'virtual')
    >>> closed_shell_loop(Space.spatial(80, irreps=[0] * 40 + [1] * 40))  # W of 80^3/2 doubles
    'occupied'
    >>> closed_shell_loop(Space.spatial(80), nodes=2)
    'occupied'
    """
    large = 8 * largest_occupied_loop_w(vir) > OCCUPIED_LOOP_W_BYTES
    return "virtual" if large and nodes == 1 else "occupied"


def check_loop(loop: str | None) -> str | None:
    """``loop`` if it names a closed-shell (T) loop (or is None), else one sentence.

    >>> check_loop("virtual"), check_loop(None)
    ('virtual', None)
    """
    if loop not in (None, "occupied", "virtual"):
        raise ValueError(
            f"the closed-shell (T) loop is {loop!r}; set it (or TILECC_TRIPLES_LOOP) to "
            f"'occupied' or 'virtual', or leave it unset."
        )
    return loop


def closed_shell_kernel(vir: Space, nodes: int, loop: str | None = None) -> type:
    """The closed-shell (T) kernel class looping over occupied or virtual triples (``loop``;
    else $TILECC_TRIPLES_LOOP, for comparing them; else closed_shell_loop's choice)."""
    chosen = check_loop(loop or os.environ.get("TILECC_TRIPLES_LOOP")) or closed_shell_loop(
        vir, nodes
    )
    return {"occupied": _core.ClosedShellTriples, "virtual": _core.ClosedShellVirtualTriples}[
        chosen
    ]


def kernel_of_spaces(cc: Any, problem: Any, nodes: int = 1) -> _core.TriplesKernel:
    """The (T) kernel tilecc runs for ``cc`` (a CC solver) and its problem on ``nodes`` nodes,
    made from the spaces alone: its work and its bytes, no energies (tilecc plan and tilecc
    simulate)."""
    from tilecc.cc.rccsd import RCCSD

    occ, vir = problem.occ._core, problem.vir._core
    if not isinstance(cc, RCCSD):
        return _core.SpinOrbitalTriples(occ, vir)
    kernel: _core.TriplesKernel = closed_shell_kernel(problem.vir, nodes)(occ, vir)
    return kernel


def slice_nodes(slice_doubles: Sequence[float] | np.ndarray, nodes: int) -> np.ndarray:
    """The node holding each occupied orbital's slices of a kernel's spread inputs, as
    NodeSlices places them (LPT by their size, the same on every rank).

    >>> slice_nodes([7, 5, 4, 3, 2], 2).tolist()
    [0, 1, 1, 0, 1]
    """
    return np.asarray(_core.lpt_bins([float(d) for d in slice_doubles], nodes))


def restricted_kernel(
    t1: Tensor, t2: Tensor, p: RestrictedProblem, loop: str | None = None
) -> _core.TriplesKernel:
    """The closed-shell (T) kernel over these amplitudes and the problem's integrals
    (closed_shell_kernel's loop for the job's nodes)."""
    kernel = closed_shell_kernel(p.vir, mpi.world().nodes, loop)
    return kernel(
        ovvv=p.eri["ovvv"].settled_core(),
        ovoo=p.eri["ovoo"].settled_core(),
        ovov=p.eri["ovov"].settled_core(),
        t2=t2.settled_core(),
        t1=t1.settled_core(),
        fov=p.fock["ov"].settled_core(),
        runtime=t1.context.runtime,
    )


def restricted_triples(
    t1: Tensor,
    t2: Tensor,
    p: RestrictedProblem,
    progress: Progress | None = None,
    loop: str | None = None,
) -> float:
    """E(T) for converged closed-shell (spin-adapted) CCSD amplitudes (``loop``: see
    restricted_kernel)."""
    return _run(restricted_kernel(t1, t2, p, loop), t1.context, progress)
