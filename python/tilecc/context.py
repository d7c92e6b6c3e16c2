"""Context: the executor, the scheduling policy and the caches that tensors share."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from tilecc import _core


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _default_threads() -> int:
    env = os.environ.get("TILECC_THREADS")
    if env is None:
        return _available_cores()
    try:
        threads = int(env)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"TILECC_THREADS must be a whole number of threads >= 1, got {env!r}.")
    return threads


@dataclass
class ContextStats:
    """Totals over every contraction a context has run."""

    contractions: int = 0
    tasks: int = 0
    flops: float = 0.0
    dense_flops: float = 0.0
    seconds: float = 0.0
    inspector_seconds: float = 0.0
    plans_built: int = 0
    plans_reused: int = 0


@dataclass
class _PlanEntry:
    plan: Any
    uses: int = 0


@dataclass
class Context:
    """Where tensors run: a pool of ``threads`` workers scheduled by ``policy`` (a registered name;
    ``counter`` is a shared task counter taking ``quantum`` tasks per fetch), plus the caches that
    let every CC iteration reuse the plans of the first.

    >>> ctx = Context(threads=1)
    >>> ctx.threads, ctx.policy
    (1, 'counter')
    """

    threads: int = field(default_factory=_default_threads)
    policy: str = "counter"
    quantum: int = 1
    #: Contractions whose tasks average at least this many flops parallelise inside BLAS
    #: instead of across tasks (0: never); see PolicyOptions in include/tilecc/sched.hpp.
    blas_parallel_task_flops: float = 2e9
    stats: ContextStats = field(default_factory=ContextStats, init=False)

    def __post_init__(self) -> None:
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise ValueError(f"threads must be a whole number >= 1, got {self.threads!r}.")
        if isinstance(self.quantum, bool) or not isinstance(self.quantum, int) or self.quantum < 1:
            raise ValueError(
                f"quantum (tasks per counter fetch) must be a whole number >= 1, "
                f"got {self.quantum!r}."
            )
        options = _core.PolicyOptions()
        options.quantum = self.quantum
        if not self.blas_parallel_task_flops >= 0:
            raise ValueError(
                f"blas_parallel_task_flops must be >= 0, got {self.blas_parallel_task_flops!r}."
            )
        options.blas_parallel_task_flops = float(self.blas_parallel_task_flops)
        self._executor = _core.Executor(self.threads, self.policy, options)
        self._plans: dict[tuple[object, ...], _PlanEntry] = {}
        # structure -> (shape id, core shape, the spaces, kept alive so that their ids stay unique)
        self._shapes: dict[tuple[object, ...], tuple[int, Any, tuple[Any, ...]]] = {}

    @property
    def executor(self) -> Any:
        return self._executor

    def shape(
        self,
        spaces: tuple[Any, ...],
        generators: tuple[tuple[tuple[int, ...], int], ...],
        spin_sides: tuple[int, ...],
        irrep: int,
    ) -> tuple[int, Any]:
        """The interned core shape (and its id) for this structure: tensors of one structure share
        one shape, and so share plans."""
        key = (tuple(id(s._core) for s in spaces), generators, spin_sides, irrep)
        found = self._shapes.get(key)
        if found is None:
            group = _core.PermutationGroup(len(spaces), [(list(p), s) for p, s in generators])
            core = _core.BlockShape([s._core for s in spaces], group, list(spin_sides), irrep)
            found = (len(self._shapes), core, spaces)
            self._shapes[key] = found
        return found[0], found[1]

    def plan(
        self,
        c: tuple[int, Any, tuple[str, ...], str],
        a: tuple[int, Any, tuple[str, ...], str],
        b: tuple[int, Any, tuple[str, ...], str],
    ) -> Any:
        """The cached plan for c += a * b; each argument is (shape id, shape, labels, name)."""
        key = (c[0], c[2], a[0], a[2], b[0], b[2])
        entry = self._plans.get(key)
        if entry is None:
            plan = _core.ContractionPlan(
                (c[1], list(c[2]), c[3]), (a[1], list(a[2]), a[3]), (b[1], list(b[2]), b[3])
            )
            entry = _PlanEntry(plan)
            self._plans[key] = entry
            self.stats.plans_built += 1
            self.stats.inspector_seconds += plan.inspector_seconds
        else:
            self.stats.plans_reused += 1
        entry.uses += 1
        return entry.plan

    def record(self, plan: Any, run: dict[str, Any]) -> None:
        self.stats.contractions += 1
        self.stats.tasks += int(run["tasks"])
        self.stats.flops += float(run["flops"])
        self.stats.dense_flops += plan.dense_flops
        self.stats.seconds += float(run["seconds"])


_default: Context | None = None


def default_context() -> Context:
    """The context used by tensors created without one (threads from $TILECC_THREADS, else all
    available cores)."""
    global _default
    if _default is None:
        _default = Context()
    return _default
