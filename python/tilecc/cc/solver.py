"""The iteration every amplitude method shares: update, DIIS, convergence, callback, checkpoint.

A method subclasses :class:`AmplitudeSolver` and supplies four hooks: ``build_problem`` (spaces
and integrals from the mean field), ``initial_amplitudes``, ``update`` (one iteration of its
equations) and ``energy``. Everything else, including checkpoint/restart, lives here once.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np

from tilecc import mpi
from tilecc.cc import checkpoint as ckpt
from tilecc.cc.diis import DIIS
from tilecc.cc.vector import BlockVector, SegmentPacking
from tilecc.context import Context
from tilecc.files import exclusive_lock
from tilecc.options import RuntimeOptions, check_whole
from tilecc.tensor import Tensor


@dataclass(frozen=True)
class IterationRecord:
    """What a callback receives after each iteration."""

    cycle: int
    e_corr: float
    delta_e: float
    residual_norm: float
    seconds: float


Amplitudes = tuple[Tensor, ...]


#: A solver's ``context`` before one is given or made (None, typed as what it becomes).
_MADE_FROM_OPTIONS = cast(Context, None)


@dataclass
class AmplitudeSolver:
    """Options and results shared by the CC methods (PySCF's names: ``conv_tol``,
    ``conv_tol_normt``, ``max_cycle``, ``diis_space``; results ``converged``, ``e_corr``,
    ``e_tot``, ``cycles``). Not converging is a result with a warning, not an exception."""

    mf: Any
    #: PySCF's meaning: None or 0 correlates every electron, n freezes the n lowest orbitals, a
    #: list freezes those MOs (a pair of lists, one per spin, for UHF).
    frozen: Any = None
    tile: int = 16
    threads: int | None = None
    #: Runtime: scheduling policy, tasks per counter fetch, workers per bucket, refinement from
    #: measured task times, and whether to keep a trace (see tilecc.Context).
    policy: str = "counter"
    quantum: int = 1
    group_size: int | None = None
    refine: bool = True
    trace: bool = False
    #: Where the tensors' blocks live (see tilecc.Context).
    store: str = "memory"
    #: Bytes the tensors may hold at once (per rank); None: no limit (see tilecc.Context).
    memory_budget: int | None = None
    #: Out of core (store "disk"): staging schedule, scratch directory, keep the files (see
    #: tilecc.Context).
    staging: str = "two-level"
    scratch: str | None = None
    keep_scratch: bool = False
    #: On several ranks, which rank runs each task (see tilecc.Context).
    placement: str | None = None
    #: On several ranks, WorkQ's courier depth (see tilecc.Context).
    workq: int = 0
    conv_tol: float = 1e-8
    conv_tol_normt: float = 1e-6
    max_cycle: int = 50
    diis_space: int = 6
    callback: Callable[[IterationRecord], None] | None = None
    checkpoint: str | Path | None = None  # written atomically after every iteration
    restart: bool = False  # continue from `checkpoint`
    with_t: bool = False  # CCSD only: add the (T) correction after convergence
    #: Run on this Context (and its runtime) instead of one made from the runtime options above,
    #: which must then be left at their defaults: the context's are the ones that hold. Not
    #: given, it is made from them; it is a Context once the solver exists.
    context: Context = _MADE_FROM_OPTIONS
    converged: bool = field(default=False, init=False)
    e_corr: float = field(default=float("nan"), init=False)
    cycles: int = field(default=0, init=False)
    amplitudes: Amplitudes = field(default=(), init=False)
    problem: Any = field(default=None, init=False)
    e_t: float | None = field(default=None, init=False)
    #: The correlation energy of the first-guess amplitudes (the MP2 energy on canonical RHF
    #: and UHF orbitals); None after a restart, which starts from the checkpoint's.
    e_first_guess: float | None = field(default=None, init=False)
    #: Wall time of the iterations (updates, DIIS, energies), summed.
    iteration_seconds: float = field(default=0.0, init=False)

    #: Name used in messages and checkpoints ("ccsd", "ccd", "drccd").
    method: ClassVar[str] = "cc"
    #: Amplitude layout, recorded in checkpoints ("spin-orbital" or "spin-adapted").
    formalism: ClassVar[str] = "spin-orbital"

    def __post_init__(self) -> None:
        check_iteration_options(
            tile=self.tile,
            conv_tol=self.conv_tol,
            conv_tol_normt=self.conv_tol_normt,
            max_cycle=self.max_cycle,
            diis_space=self.diis_space,
        )
        if self.restart and self.checkpoint is None:
            raise ValueError("restart needs a checkpoint file to continue from; give checkpoint.")
        options = RuntimeOptions.of(self).check()
        context: Context | None = self.context
        if context is None:
            self.context = Context.of(options)
            return
        if options != RuntimeOptions():
            given = [
                f"{name}={value!r}"
                for name, value in options.as_dict().items()
                if value != getattr(RuntimeOptions(), name)
            ]
            raise ValueError(
                f"{', '.join(given)} given with a context, which has runtime options of its own; "
                f"give one or the other (Context.reconfigure changes a context's)."
            )
        for name, value in context.runtime_options.as_dict().items():
            setattr(self, name, value)
        self.context = context

    @property
    def e_tot(self) -> float:
        """SCF + correlation energy (as in PySCF, without (T): ``e_tot + ccsd_t()`` is the
        CCSD(T) total)."""
        return float(self.mf.e_tot) + self.e_corr

    @property
    def e_tot_ccsd_t(self) -> float | None:
        """The CCSD(T) total energy, once :meth:`ccsd_t` has run (None before)."""
        return None if self.e_t is None else self.e_tot + self.e_t

    def run(self) -> AmplitudeSolver:
        with self.context.holding_cores(), self.checkpoint_lock():
            iterate(self)
            if self.with_t and self.converged:
                self.ccsd_t()
        return self

    def checkpoint_lock(self) -> contextlib.AbstractContextManager[None]:
        """Held while the iterations write the checkpoint: a second job given the same file is
        refused rather than overwriting this one's."""
        if self.checkpoint is None or not mpi.world().leader:
            return contextlib.nullcontext()
        return exclusive_lock(Path(self.checkpoint), "checkpoint", wait=False)

    def ccsd_t(self, progress: Callable[[int, int], None] | None = None) -> float:
        """The (T) correction of the converged amplitudes; also stored as ``e_t``.
        ``progress(done, total)`` is called after each task."""
        if not self.amplitudes or self.problem is None:
            raise ValueError(
                f"run {self.method.upper()} first: (T) needs converged CCSD amplitudes."
            )
        with self.context.holding_cores(), self.context.span("(T)"):
            self.e_t = self.triples_energy(progress)
        return self.e_t

    # -- the hooks a method supplies ---------------------------------------------------------
    def build_problem(self) -> Any:
        raise NotImplementedError

    def initial_amplitudes(self, problem: Any) -> Amplitudes:
        raise NotImplementedError

    def update(self, amplitudes: Amplitudes, problem: Any) -> Amplitudes:
        raise NotImplementedError

    def energy(self, amplitudes: Amplitudes, problem: Any) -> float:
        raise NotImplementedError

    def triples_energy(self, progress: Callable[[int, int], None] | None) -> float:
        raise ValueError(f"(T) is defined on CCSD amplitudes, not {self.method.upper()}.")


def check_iteration_options(
    *, tile: Any, conv_tol: Any, conv_tol_normt: Any, max_cycle: Any, diis_space: Any = 6
) -> None:
    """The one check of the iteration options, for the API and the command line alike (the CLI
    calls it before anything runs, naming its own flags in the sentence's place)."""
    check_whole(tile, "tile", 1)
    check_whole(max_cycle, "max_cycle", 1)
    check_whole(diis_space, "diis_space", 0)
    for name, value in (("conv_tol", conv_tol), ("conv_tol_normt", conv_tol_normt)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.floating))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ValueError(f"{name} must be a positive finite number, got {value!r}.")


class SinglesAndDoubles:
    """``t1`` and ``t2`` for the methods whose amplitudes are (t1, t2)."""

    amplitudes: Amplitudes

    @property
    def t1(self) -> Tensor | None:
        return self.amplitudes[0] if self.amplitudes else None

    @property
    def t2(self) -> Tensor | None:
        return self.amplitudes[1] if self.amplitudes else None


class DivergedError(ValueError):
    """The amplitudes became NaN or infinite: the iterations cannot go on."""


def iterate(cc: AmplitudeSolver) -> AmplitudeSolver:
    """Iterate cc's equations to convergence (or max_cycle), with DIIS on the amplitudes (as
    block vectors whose metric is the dense tensors', see cc/vector.py) and, if asked, a
    checkpoint after every iteration and once more when converged."""
    if cc.context.runtime.distributed:
        # Every rank computes its own blocks from the orbitals: they must be the same orbitals,
        # phases included, on every rank.
        mpi.share_mean_field(cc.mf)
    with cc.context.span("integrals"):
        p = cc.build_problem()
    cc.problem = p
    amps = cc.initial_amplitudes(p)
    packing = SegmentPacking(amps)
    diis = DIIS(cc.diis_space, BlockVector.combination) if cc.diis_space > 0 else None
    path = Path(cc.checkpoint) if cc.checkpoint is not None else None
    orbitals = "semicanonical" if getattr(p, "semicanonical", False) else "canonical"
    ident = {**ckpt.identity(cc.mf, cc.method, p.frozen, orbitals), "formalism": cc.formalism}
    scf = ckpt.SCFSolution.of(cc.mf)

    def save(cycle: int, e_corr: float, converged: bool) -> None:
        if path is None:
            return
        history = diis.history if diis is not None else ([], [])
        vs, es = ([packing.to_segments(v) for v in h] for h in history)
        state = ckpt.State(cycle, e_corr, scf, amps, vs, es, converged)
        ckpt.save(path, ident, state, write=mpi.world().leader)

    first = 1
    cc.converged = False
    if cc.restart and path is not None:
        restored = ckpt.load(path, ident, amps)
        if diis is not None:
            diis.restore(
                [packing.from_segments(v) for v in restored.diis_vectors],
                [packing.from_segments(e) for e in restored.diis_errors],
            )
        first = restored.cycle + 1
        # A run killed after converging (during (T), say) does not iterate again.
        cc.converged, cc.cycles = restored.converged, restored.cycle
    e_old = cc.energy(amps, p)
    cc.e_first_guess = e_old if first == 1 else None
    for cycle in range(first, first + (0 if cc.converged else cc.max_cycle)):
        start = time.perf_counter()
        # One task pool per iteration: the update's plans are built together, then its
        # operations run (in the first iteration; later ones reuse the plans).
        with cc.context.span(f"iteration {cycle}"), cc.context.deferred():
            new = cc.update(amps, p)
        update = BlockVector(new)
        error = update.minus(BlockVector(amps))
        # Finite only if every new amplitude is (the old ones were).
        residual = error.norm()
        if not math.isfinite(residual):
            raise DivergedError(
                f"{cc.method.upper()} diverged: the amplitudes became NaN or infinite in "
                f"iteration {cycle}; check that the reference is a converged minimum (keep the "
                f"SCF's stability analysis on) and its orbital energies are not degenerate "
                f"across occupied and virtual."
            )
        if diis is not None and cycle > 1:
            update = diis.update(update, error)
        amps = update.tensors
        e_new = cc.energy(amps, p)
        cc.cycles = cycle
        cc.iteration_seconds += time.perf_counter() - start
        done = abs(e_new - e_old) < cc.conv_tol and residual < cc.conv_tol_normt
        save(cycle, e_new, done)
        if cc.callback is not None:
            cc.callback(
                IterationRecord(cycle, e_new, e_new - e_old, residual, time.perf_counter() - start)
            )
        e_old = e_new
        if done:
            cc.converged = True
            break
    cc.e_corr, cc.amplitudes = e_old, amps
    # The iterations' intermediates will not be allocated again: their mappings, which the
    # iterations passed on to each other, go back to the kernel rather than stay held through (T).
    cc.context.runtime.mappings.release()
    if not cc.converged:
        warnings.warn(
            f"{cc.method.upper()} did not converge in {cc.max_cycle} iterations (last "
            f"energy change and residual above {cc.conv_tol:g} / "
            f"{cc.conv_tol_normt:g}); raise max_cycle or loosen the thresholds.",
            RuntimeWarning,
            stacklevel=3,
        )
    return cc
