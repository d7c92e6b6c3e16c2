"""Context: the executor, the scheduling policy and the caches that tensors share."""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from tilecc import _blas, _core, mpi, wisdom
from tilecc.deferred import Queued, QueuedContraction, QueuedOperation, in_batches
from tilecc.options import MAX_THREADS, RuntimeOptions
from tilecc.placement import Ranks, place
from tilecc.placement.schemes import hash_owners
from tilecc.staging import BlockHypergraph, staging
from tilecc.trace import (
    Decomposition,
    Inspection,
    Span,
    TraceRecorder,
    proportional_shares,
    split_run,
)


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _default_threads() -> int:
    env = os.environ.get("TILECC_THREADS", "").strip()
    if not env:  # unset and empty mean the same: all available cores
        return _available_cores()
    try:
        threads = int(env)
    except ValueError:
        threads = 0
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(
            f"TILECC_THREADS must be a whole number of threads from 1 to {MAX_THREADS}, got "
            f"{env!r}; unset it to use every available core."
        )
    return threads


@dataclass
class ContextStats:
    """Totals over every contraction a context has run (its runtime's statistics), and over its
    (T) steps."""

    contractions: int = 0
    tasks: int = 0
    flops: float = 0.0
    dense_flops: float = 0.0
    seconds: float = 0.0
    inspector_seconds: float = 0.0
    plans_built: int = 0
    plans_reused: int = 0
    shared_calls: int = 0
    #: Measured time inside tasks, summed over every task run (the "ideal" is this / threads).
    task_seconds: float = 0.0
    #: Flops the (T) kernels' GEMMs executed, and their time.
    triples_flops: float = 0.0
    triples_seconds: float = 0.0
    #: The most bytes of repacked inputs a (T) kernel held in this process.
    triples_input_bytes: int = 0
    #: Bytes (T) kernels got from the slices of their inputs other nodes hold.
    triples_fetched_bytes: int = 0


@dataclass
class ContractionRecord:
    """One contraction of the calculation (one plan), over all the times it ran."""

    expression: str
    calls: int = 0
    tasks: int = 0
    flops: float = 0.0
    #: Counter fetches or steal attempts; a batch's are shared out by each contraction's tasks.
    shared_calls: float = 0.0
    time: Decomposition = field(default_factory=Decomposition)
    #: Predicted vs measured task times in the last run: (median, 90th percentile) rel. error.
    model_error: tuple[float, float] = (float("nan"), float("nan"))
    #: Idle fraction of each run, in order (refinement should lower it after the first).
    imbalance: list[float] = field(default_factory=list)


#: What a plan is built from, per tensor: (shape id, core shape, labels, name).
OperandSpec = tuple[int, Any, tuple[str, ...], str]


@dataclass
class Context:
    """Where tensors run: a pool of ``threads`` workers scheduled by ``policy`` (a registered
    name: ``tce``, ``counter``, ``static-block``, ``static-lpt``, ``buckets``, ``steal``; see
    ``include/tilecc/sched.hpp``), plus the caches that let every CC iteration reuse the plans of
    the first.

    ``quantum`` is the tasks taken per counter fetch (for ``buckets``, the fewest tasks of one of
    its guided chunks), ``group_size`` the workers per bucket
    (None: one group per NUMA domain or core pair), ``refine`` schedules each run of a plan with
    the task times measured in its previous run, ``trace`` keeps every phase slice for
    :meth:`write_trace`. ``$TILECC_SLOW_WORKER=k:factor`` makes worker k that much slower.

    >>> ctx = Context(threads=1)
    >>> ctx.threads, ctx.policy
    (1, 'counter')
    """

    threads: int = field(default_factory=_default_threads)
    policy: str = "counter"
    quantum: int = 1
    group_size: int | None = None
    refine: bool = True
    trace: bool = False
    #: Where the blocks of this context's tensors live: a registered block store ("memory", the
    #: zero-copy default; "copy", which copies every block a task reads or writes; "mpi", blocks
    #: spread over MPI ranks, which the default becomes when launched on several).
    store: str = "memory"
    #: Bytes this context's tensors may hold at once (per rank); None: no limit. A tensor that
    #: would go over it is refused, with one sentence, before anything is allocated.
    memory_budget: int | None = None
    #: With the "disk" store: how contractions move blocks through the memory budget (a name in
    #: tilecc.staging.SCHEDULES), where the files go (None: $TILECC_SCRATCH, else a temporary
    #: directory) and whether they stay after the context.
    staging: str = "two-level"
    scratch: str | None = None
    keep_scratch: bool = False
    #: On several ranks: which rank runs each task of a contraction (a name in
    #: tilecc.placement.PLACEMENTS), computed once per plan on rank 0; None: the policy decides.
    placement: str | None = None
    #: On several ranks, WorkQ: tasks each rank's courier fetches ahead of its workers (0: off).
    workq: int = 0
    #: Contractions whose tasks average at least this many flops parallelise inside BLAS
    #: instead of across tasks (0: never); see PolicyOptions in include/tilecc/sched.hpp.
    blas_parallel_task_flops: float = 2e9

    def __post_init__(self) -> None:
        _blas.ensure_loaded()
        # The plan cache, the queue and the executor are not shared between Python threads: the
        # thread that made the context is the one that may use it (see _check_thread).
        self._owner = threading.get_ident()
        self._model: Any = None
        self._start_runtime()
        # structure -> (shape id, core shape, the spaces, kept alive so that their ids stay unique);
        # a structure may be keyed twice, with its spin sides as given and as the core settled them
        self._shapes: dict[tuple[object, ...], tuple[int, Any, tuple[Any, ...]]] = {}
        self._next_shape_id = 0
        # A deferred block's queue: its operations in order, the ids of the tensors they touch,
        # and the plans they need that are not built yet. The queue keeps those tensors alive
        # (contractions hold them, operations' closures do), so that their ids stay unique.
        self._deferring = 0
        self._queue: list[Queued] = []
        self._queued_tensors: set[int] = set()

    @classmethod
    def of(cls, options: RuntimeOptions) -> Context:
        """A context with these runtime options (threads None: $TILECC_THREADS or every core)."""
        given = {k: v for k, v in options.as_dict().items() if v is not None or k != "threads"}
        return cls(**given)

    def reconfigure(self, **runtime: Any) -> None:
        """Change runtime options (``threads``, ``policy``, ``quantum``, ``group_size``,
        ``refine``, ``trace``, ``blas_parallel_task_flops``; ``$TILECC_SLOW_WORKER`` is read
        again) for the tensors already in this context: the executor is rebuilt, and plans and
        statistics start afresh, so that policies can be compared on the same tensors."""
        self._check_thread()
        valid = (
            "threads", "policy", "quantum", "group_size", "refine", "trace", "memory_budget",
            "blas_parallel_task_flops",
        )  # fmt: skip
        if self._deferring:
            raise ValueError(
                "reconfigure() was called inside a deferred block, whose queued operations "
                "would run on the new runtime; call it after the block ends."
            )
        unknown = set(runtime) - set(valid)
        if unknown:
            raise ValueError(
                f"unknown runtime option(s) {', '.join(sorted(unknown))}; valid options are "
                f"{', '.join(valid)}."
            )
        previous = {name: getattr(self, name) for name in runtime}
        for name, value in runtime.items():
            setattr(self, name, value)
        # A new runtime: plans, schedules, the learned correction (task times depend on the
        # threads and the slowed worker) and statistics start afresh.
        try:
            self._start_runtime()
        except ValueError:
            for name, value in previous.items():
                setattr(self, name, value)
            raise

    def _check_thread(self) -> None:
        if threading.get_ident() != self._owner:
            raise ValueError(
                "this tilecc Context was made in another Python thread, and a Context serves "
                "one thread; make a Context (and its tensors) in each thread that computes."
            )

    @property
    def planning(self) -> bool:
        """Whether this context only plans (store "none", for ``tilecc plan``): tensors have no
        blocks, contractions get their plans and schedules but do not run, operations do not
        run, and what reads a tensor sees zeros."""
        return self.store == "none"

    @property
    def runtime_options(self) -> RuntimeOptions:
        """This context's runtime options, as one value."""
        return RuntimeOptions.of(self)

    def _start_runtime(self) -> None:
        self.runtime_options.check()
        options = _core.PolicyOptions()
        options.quantum = self.quantum
        options.group_size = self.group_size or 0
        if not self.blas_parallel_task_flops >= 0:
            raise ValueError(
                f"blas_parallel_task_flops must be >= 0, got {self.blas_parallel_task_flops!r}."
            )
        options.blas_parallel_task_flops = float(self.blas_parallel_task_flops)
        comm = mpi.communicator()
        if comm is not None and self.store == "memory":
            # On several ranks, the default store spreads the blocks over them.
            self.store = "mpi"
        if comm is not None and self.store not in ("mpi", "none"):
            # Every rank would hold whole tensors of its own and compute a share of each
            # contraction into them: the ranks' results would never meet.
            raise ValueError(
                f"the {self.store!r} store keeps a tensor in one process, and this job runs on "
                f"{comm.size} ranks; use --store mpi (the default there), or run one process."
            )
        # The engine (include/tilecc/runtime.hpp): executor, plan cache and schedules, the
        # correction learned from every run, statistics. Python keeps the deferred queue and the
        # per-contraction records and trace that reports show.
        self._runtime = _core.Runtime(
            self.threads,
            self.policy,
            options,
            self.refine,
            self.trace,
            self.store,
            os.environ.get("TILECC_SLOW_WORKER", ""),
            self.memory_budget or 0,
            comm,
            self.scratch or "",
            self.keep_scratch,
            self.workq,
            # Placed tasks keep one output block each: on several ranks, and in the plans that
            # tilecc simulate places on its simulated ranks.
            self.placement is not None and (self.planning or (comm is not None and comm.size > 1)),
        )
        self._model_given = False
        self._records: dict[int, ContractionRecord] = {}  # by PlannedContraction.id
        # Out of core: each plan's read-once bound (bytes), by PlannedContraction.id, and the
        # bound summed over the contractions run.
        self._io_bounds: dict[int, int] = {}
        # Per plan placed, the layouts of the tensors (a, b, c) its placement was computed for.
        self._placed_layouts: dict[int, tuple[int, int, int]] = {}
        self._io_bound_run = 0
        # Planning (store "none"): how many times each contraction would have run, the batches
        # they would have run in, and the elements each element-wise operation would have
        # touched, in order.
        self.planned_runs: dict[int, int] = {}
        self.planned_batches = 0
        self.planned_operations: list[int] = []
        #: The most bytes one batch of the integral transformation held (host/integrals.py).
        self.largest_transform_bytes = 0
        #: The AO integrals the transformation held for its batches (host/integrals.py).
        self.held_ao_bytes = 0
        #: The file the integrals were transformed into once (tilecc.host.transformed_file),
        #: written and read back; 0 when they were transformed in batches.
        self.integral_file_bytes = 0
        self._triples = ContextStats()  # only its (T) totals are kept here
        self._recorder = TraceRecorder(self.policy, self.threads) if self.trace else None

    @property
    def runtime(self) -> Any:
        """The engine this context runs on (``_core.Runtime``)."""
        return self._runtime

    @property
    def executor(self) -> Any:
        return self._runtime.executor

    @property
    def stats(self) -> ContextStats:
        """Totals so far: the runtime's, and the (T) steps'."""
        r = self._runtime.stats
        return ContextStats(
            contractions=r.contractions,
            tasks=r.tasks,
            flops=r.flops,
            dense_flops=r.dense_flops,
            seconds=r.seconds,
            inspector_seconds=r.inspector_seconds,
            plans_built=r.plans_built,
            plans_reused=r.plans_reused,
            shared_calls=r.shared_calls,
            task_seconds=r.task_seconds,
            triples_flops=self._triples.triples_flops,
            triples_seconds=self._triples.triples_seconds,
            triples_input_bytes=self._triples.triples_input_bytes,
            triples_fetched_bytes=self._triples.triples_fetched_bytes,
        )

    def count_triples(
        self, flops: float, seconds: float, held_bytes: int = 0, fetched_bytes: int = 0
    ) -> None:
        """Add a (T) step's executed flops and wall time to the statistics, the bytes of
        repacked inputs its kernel held in this process, and those it got from other nodes."""
        self._triples.triples_flops += flops
        self._triples.triples_seconds += seconds
        self._triples.triples_input_bytes = max(self._triples.triples_input_bytes, held_bytes)
        self._triples.triples_fetched_bytes += fetched_bytes

    @property
    def cost_model(self) -> Any:
        """The calibrated cost model (from the wisdom file; see tilecc.wisdom)."""
        if self._model is None:
            self._model = wisdom.cost_model()
        return self._model

    def shape(
        self,
        spaces: tuple[Any, ...],
        generators: tuple[tuple[tuple[int, ...], int], ...],
        spin_sides: tuple[int, ...],
        irrep: int,
    ) -> tuple[int, Any]:
        """The interned core shape (and its id) for this structure: tensors of one structure share
        one shape, and so share plans."""
        self._check_thread()
        key = (tuple(id(s._core) for s in spaces), generators, spin_sides, irrep)
        found = self._shapes.get(key)
        if found is None:
            group = _core.PermutationGroup(len(spaces), [(list(p), s) for p, s in generators])
            core = _core.BlockShape([s._core for s in spaces], group, list(spin_sides), irrep)
            # No sides given means the core's default ones. Keyed also on the sides it settled on,
            # a tensor made with the defaults and one made like it (Tensor.like passes the sides
            # on) share a shape, and so their plans.
            settled = (key[0], generators, tuple(core.spin_sides), irrep)
            found = self._shapes.get(settled)
            if found is None:
                found = (self._next_shape_id, core, spaces)
                self._next_shape_id += 1
                self._shapes[settled] = found
            self._shapes[key] = found
        return found[0], found[1]

    def plan(self, c: OperandSpec, a: OperandSpec, b: OperandSpec) -> Any:
        """The cached plan for c += a * b, built now if it is not yet; each argument is (shape id,
        shape, labels, name). The ``tce`` policy gets NWChem TCE's task layout, every other
        policy the inspector's."""
        self._check_thread()
        return self._built(c, a, b).plan

    def schedule(self, plan: Any) -> Any:
        """This context's schedule of a plan it made: the correction of its predicted task
        costs, the measured times of its last run, the policy; ``summary()`` reports them."""
        return self._runtime.schedule_of(plan)

    def _built(self, c: OperandSpec, a: OperandSpec, b: OperandSpec) -> Any:
        planned = self._request(c, a, b)
        if not planned.built:
            self._build()
        return planned

    def _request(self, c: OperandSpec, a: OperandSpec, b: OperandSpec) -> Any:
        def operand(spec: OperandSpec) -> tuple[Any, list[str], str]:
            return spec[1], list(spec[2]), spec[3]

        return self._runtime.request(operand(c), operand(a), operand(b))

    def _build(self) -> None:
        """Build every pending plan on the workers at once (see include/tilecc/inspect.hpp).
        The inspector's time is the batch's wall time; each plan is charged its part of it, in
        proportion to how long it took to build."""
        if not self._model_given:
            self._runtime.set_cost_model(self.cost_model)
            self._model_given = True
        for planned in self._runtime.build_pending():
            plan = planned.plan
            record = ContractionRecord(plan.expression)
            record.time.inspector += planned.inspector_charged
            self._records[planned.id] = record
            if self.store == "disk":
                # The stage schedule is computed once per plan, as its tasks are (paper 004's
                # sealed task pool), and charged to the inspector.
                start = time.perf_counter()
                self._stage(planned)
                record.time.inspector += time.perf_counter() - start
            if self.placement is not None and mpi.world().size > 1:
                start = time.perf_counter()
                self._place(planned, self.placement)
                record.time.inspector += time.perf_counter() - start
            if self._recorder is not None:
                self._recorder.add_inspection(
                    Inspection(
                        plan.expression,
                        planned.built_by,
                        plan.inspector_started,
                        plan.inspector_seconds,
                        planned.inspector_charged,
                    )
                )

    def _stage(self, planned: Any) -> None:
        """Give a plan over disk tensors its stage schedule (none for ``lru``, or without a
        budget: then every block stays in memory) and note its read-once bound."""
        h = BlockHypergraph.of_plan(planned.plan)
        read, written = h.lower_bound()
        self._io_bounds[planned.id] = read + written
        if self.memory_budget and self.staging != "lru":
            planned.schedule.set_staging(staging(h, self.memory_budget, self.staging).for_core(h))

    def _place(self, planned: Any, name: str, tensors: tuple[Any, Any, Any] | None = None) -> None:
        """Give a plan the placement ``name`` on the ranks (computed on rank 0, the same on every
        rank): its blocks stay where they live (the mpi store's hash owners, or for ``tensors``
        (a, b, c), the owners they were redistributed to), its tasks go where the placement puts
        them. A partitioner that fails falls back to the hash placement, with a warning."""
        w = mpi.world()
        ranks = Ranks(w.size, w.ranks_per_node)
        task_rank: list[int] | None = None
        if tensors is not None:
            self._placed_layouts[planned.id] = tuple(t.layout for t in tensors)
        if w.leader:
            h = BlockHypergraph.of_plan(planned.plan)
            owners = hash_owners(h, ranks)
            if tensors is not None:
                given = {role: t._core.owners for role, t in zip("abc", tensors, strict=True)}
                for e, (role, slot) in enumerate(h.nets):
                    if given[role]:
                        owners[e] = given[role][slot]
            try:
                placed = place(h, name, ranks, owners)
            except Exception as exc:  # any failure of the partitioner has the same remedy
                warnings.warn(
                    f"the {name} placement of {planned.plan.expression} failed ({exc}); its "
                    "tasks take the hash placement instead.",
                    stacklevel=2,
                )
                placed = place(h, "hash", ranks, owners)
            task_rank = [int(r) for r in placed.task_rank]
        planned.schedule.placement = mpi.broadcast(task_rank)

    @property
    def io(self) -> dict[str, Any]:
        """What the disk store's tensors read and wrote, against the read-once bound of the
        contractions run (every block they touch read once, every output block written once)."""
        traffic = self._runtime.traffic
        return {
            "bytes_read": int(traffic["reads"]["disk_read"][0]),
            "bytes_written": int(traffic["writes"]["disk_write"][0]),
            "lower_bound_bytes": self._io_bound_run,
            "schedule": self.staging if self.store == "disk" else "in core",
            "resident_high_water_bytes": int(self._runtime.scratch["resident_high_water_bytes"]),
            # Of bytes_read, what couriers read while the previous step's tasks ran.
            "read_ahead_bytes": int(self._runtime.scratch["read_ahead_bytes"]),
            "integral_file_bytes": self.integral_file_bytes,
        }

    @contextmanager
    def holding_cores(self) -> Iterator[None]:
        """Hold the process's BLAS libraries (numpy's, SciPy's, PySCF's) to one thread while
        the block runs, and give them back their threads after it: a job on this context's
        workers. After a multi-threaded call, an OpenBLAS thread spins on a core for a while before
        it sleeps ($OPENBLAS_THREAD_TIMEOUT at its least also removed the slowdown), so the
        solver's numpy work between contractions kept a core from the workers, which then waited
        for it (methanol/cc-pVDZ's CCSD(T) job went from 0.82-0.96 to 0.52 of PySCF's time in
        benchmarks/ccsd/run.py). tilecc's own BLAS is set per contraction anyway. OpenMP is left
        alone: PySCF's integral transformation uses it."""
        with threadpool_limits(limits=1, user_api="blas"):
            yield

    # -- deferred execution ----------------------------------------------------------------
    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Queue the tensor operations written inside the block and run them when it ends, after
        building every contraction plan they need, back to back: the inspector sees a whole CC
        update at once (the sealed task pool of paper 004) rather than one contraction at a time
        between stretches of Python that leave its caches cold. The amplitude solvers run each
        iteration's update this way.

        Expressions are checked where they are written. Reading a tensor that a queued
        operation writes, or changing one that it reads, first runs the queue (plans included).
        Intermediates live until the block ends. If the block raises, its queued operations are
        dropped, not run. Blocks nest; the outermost one runs the queue.

        >>> import tilecc
        >>> ctx = tilecc.Context(threads=1)
        >>> p = tilecc.Space.spatial(4, tile=2)
        >>> a = tilecc.Tensor([p, p], context=ctx); a.fill_(1.0)
        >>> c = tilecc.Tensor([p, p], context=ctx)
        >>> with ctx.deferred():
        ...     c["ij"] = a["ik"] * a["kj"]
        ...     ctx.stats.contractions  # queued, not run
        0
        >>> float(c.to_dense()[0, 0])
        4.0
        """
        self._check_thread()
        self._deferring += 1
        try:
            yield
        except BaseException:
            self._deferring -= 1
            if not self._deferring:
                self._drop_queue()
            raise
        self._deferring -= 1
        if not self._deferring:
            self.run_queue()

    def submit(self, operation: Callable[[], object], tensors: Iterable[Any]) -> None:
        """Run ``operation`` (which touches ``tensors``) now, or queue it in a deferred block."""
        self._check_thread()
        tensors = list(tensors)
        if self.planning:
            self.planned_operations.append(sum(t.stored_elements for t in tensors))
        if not self._deferring:
            if not self.planning:
                operation()
            return
        touched = frozenset(id(t) for t in tensors)
        self._queue.append(QueuedOperation(operation, touched))
        self._queued_tensors.update(touched)

    def submit_contraction(
        self,
        specs: tuple[OperandSpec, OperandSpec, OperandSpec],
        alpha: float,
        c: Any,
        a: Any,
        b: Any,
    ) -> None:
        """Tensors c += alpha * a * b (``specs`` in the order c, a, b), now, or queued in a
        deferred block with its plan built when the block ends."""
        self._check_thread()
        if not self._deferring:
            self._contract([QueuedContraction(self._built(*specs), alpha, c, a, b)])
            return
        self._queue.append(QueuedContraction(self._request(*specs), alpha, c, a, b))
        self._queued_tensors.update((id(c), id(a), id(b)))

    def settle(self, tensor: Any) -> None:
        """Before ``tensor`` is read or changed outside the queue: run the queue if it holds it."""
        self._check_thread()
        if id(tensor) in self._queued_tensors:
            self.run_queue()

    def run_queue(self) -> None:
        """Build the plans queued operations need, back to back, then run the operations, the
        independent contractions among them together (see tilecc.deferred). The queue is empty
        afterwards, also when an operation raises."""
        queue = self._queue
        self._queue, self._queued_tensors = [], set()
        try:
            if self._runtime.pending:
                if self._runtime.pending > 1:
                    # The workers may have slept through the queueing: they start waking now,
                    # while the plan requests are converted, rather than when the batch needs
                    # them. A single plan is built on the calling thread (Executor.for_each), and
                    # workers woken for nothing would spin on cores numpy or a threaded BLAS use.
                    self.executor.wake()
                self._build()
            for step in in_batches(queue, self._runs_alone):
                if isinstance(step, QueuedOperation):
                    if not self.planning:
                        step.run()
                else:
                    self._contract(step)
        except BaseException:
            self._drop_queue()
            raise

    def _runs_alone(self, contraction: QueuedContraction) -> bool:
        """Whether a contraction runs in no batch: all of them under ``tce`` (NWChem's TCE runs
        one contraction at a time, and is the baseline), and those whose tasks are large enough
        to parallelise inside BLAS instead."""
        return bool(self._runtime.runs_alone(contraction.entry))

    def _drop_queue(self) -> None:
        self._queue.clear()
        self._queued_tensors.clear()
        self._runtime.drop_pending()

    def _contract(self, batch: list[QueuedContraction]) -> None:
        """Run the contractions of ``batch`` together on the runtime (which corrects their
        predicted costs by what earlier runs showed the model misses, and learns from this run's
        task times in turn), and record what each cost."""
        if self.planning:
            for q in batch:
                self.planned_runs[q.entry.id] = self.planned_runs.get(q.entry.id, 0) + 1
            self.planned_batches += 1
            return
        if self.placement is not None and mpi.world().size > 1:
            # A placement follows its tensors' blocks: placed again when they live elsewhere
            # (redistributed) than where it was placed for.
            for q in batch:
                layouts = (q.a.layout, q.b.layout, q.c.layout)
                if self._placed_layouts.get(q.entry.id, (0, 0, 0)) != layouts:
                    start = time.perf_counter()
                    self._place(q.entry, self.placement, (q.a, q.b, q.c))
                    self._records[q.entry.id].time.inspector += time.perf_counter() - start
        items = [(q.entry, q.alpha, q.a._core, q.b._core, q.c._core) for q in batch]
        batch_run = self._runtime.run(items)
        run = batch_run.run
        parts = split_run(run.phases, [item.phases for item in batch_run.items], self.threads)
        # The run's counter fetches or steals are shared out by each contraction's tasks.
        call_shares = proportional_shares(
            [float(len(item.task_seconds)) for item in batch_run.items]
        )
        for queued, item, part, call_share in zip(batch, batch_run.items, parts, call_shares):
            self._io_bound_run += self._io_bounds.get(queued.entry.id, 0)
            record = self._records[queued.entry.id]
            record.calls += 1
            record.tasks += len(item.task_seconds)
            record.flops += float(item.flops)
            record.shared_calls += int(run.shared_calls) * call_share
            record.time.add(part)
            record.imbalance.append(part.imbalance)
            if item.model_error.tasks:
                record.model_error = (item.model_error.median, item.model_error.p90)
        if self._recorder is not None:
            names = [q.entry.plan.expression for q in batch]
            self._recorder.add_run(names, run, self.executor.trace_events())

    @property
    def contractions(self) -> list[ContractionRecord]:
        """Every contraction this context has planned, most time-consuming first."""
        records = list(self._records.values())
        return sorted(records, key=lambda r: r.time.total, reverse=True)

    def decomposition(self) -> Decomposition:
        """Compute / permute / scheduling / idle / inspector over every contraction."""
        total = Decomposition()
        for record in self.contractions:
            total.add(record.time)
        return total

    def model_error(self, corrected: bool = True) -> tuple[float, float]:
        """Median and 90th percentile of |predicted - measured| / measured over every task of
        every plan's last run (nan before any run). ``corrected``: the predictions the run was
        scheduled with (the model corrected by the runs before it), else the model's own."""
        errors = []
        for planned in self._runtime.contractions():
            if not planned.built:
                continue
            measured = np.asarray(planned.schedule.measured_seconds)
            if measured.size:
                predicted = np.asarray(
                    planned.schedule.estimated_seconds
                    if corrected
                    else planned.plan.modelled_seconds
                )
                ok = measured > 0
                errors.append(np.abs(predicted[ok] - measured[ok]) / measured[ok])
        if not errors:
            return float("nan"), float("nan")
        pooled = np.concatenate(errors)
        return float(np.median(pooled)), float(np.quantile(pooled, 0.9))

    @property
    def model_correction(self) -> tuple[float, float]:
        """(scale, seconds of overhead per task) the cost model's predictions are corrected by."""
        c = self._runtime.correction
        return float(c.scale), float(c.overhead)

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        """Mark a phase of the job (the integrals, an iteration, (T)) on the trace's job row;
        nothing when the context keeps no trace."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add_span(name, start, time.perf_counter() - start)

    def add_span(self, name: str, start: float, seconds: float) -> None:
        """A phase of the job that ran from ``start`` (time.perf_counter()) for ``seconds``,
        such as the SCF before the context existed."""
        if self._recorder is not None:
            self._recorder.add_span(Span(name, start, seconds))

    def write_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the Chrome/Perfetto trace of every contraction run so far (needs trace=True).
        On several ranks every rank calls it; rank 0 writes one trace of them all (a process
        per rank)."""
        if self._recorder is None:
            raise ValueError("this context was made without trace=True, so it kept no trace.")
        recorders = mpi.gather(self._recorder)
        if mpi.world().leader:
            self._recorder.write(Path(path), recorders)


_defaults = threading.local()


def default_context() -> Context:
    """The context used by tensors created without one (threads from $TILECC_THREADS, else all
    available cores); one per Python thread, since a context serves one thread."""
    context: Context | None = getattr(_defaults, "context", None)
    if context is None:
        context = Context()
        _defaults.context = context
    return context
