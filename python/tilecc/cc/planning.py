"""What a CC job will need, found without running it (``tilecc plan``): its solver is built on a
planning context (store "none": tensors without blocks), which makes the problem's and the
amplitudes' tensors and one iteration's intermediates, and builds every contraction's plan, but
computes nothing. From that: each tensor's bytes, the peak of the tensors held at once, the time
of an iteration by the cost model, and, against a memory budget, whether the job runs in core or
through the disk store, with the I/O its stage schedules would do."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tilecc import mpi, wisdom
from tilecc.cc.solver import AmplitudeSolver
from tilecc.cc.triples import kernel_of_spaces, slice_nodes
from tilecc.memory import available_memory, peak_rss_bytes, resident_bytes
from tilecc.staging import BlockHypergraph, lru_io, staging


@dataclass
class JobPlan:
    """A job's needs, predicted (bytes and seconds)."""

    spaces: dict[str, int]
    tensors: dict[str, int]  # name -> stored bytes
    tensors_peak_bytes: int  # the tensors held at once, iteration included
    #: On the scratch disk while the integrals load, when they go through a file (else 0).
    integral_file_bytes: int
    allocated_bytes: int  # what the job allocates at its peak: tensors, DIIS, integral batch
    diis_bytes: int  # DIIS history, the iteration's error and extrapolated amplitudes
    integrals_batch_bytes: int  # the largest integral transformation held at once
    ao_integrals_bytes: int  # AO integrals held beside it while the integrals are made
    process_bytes: int  # the process before CC (Python, PySCF, the SCF's results)
    #: The (T) step's repacked inputs on this rank's node (0: no (T)), and its workers' scratch.
    triples_input_bytes: int
    triples_scratch_bytes: int
    peak_memory_bytes: int  # the larger of the peak before CC and the process plus the job
    iteration_seconds: float
    contractions: int
    memory_budget_bytes: int  # for what the job allocates (the process before it aside)
    in_core: bool
    predicted_io_bytes: int
    staging: str
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_iteration(cc: AmplitudeSolver) -> tuple[Any, list[Any], dict[int, int]]:
    """Build ``cc``'s problem and first amplitudes on its planning context, and one iteration's
    plans: (problem, amplitudes, {planned contraction id: times an iteration runs it})."""
    ctx = cc.context
    if not ctx.planning:
        raise ValueError("planning a job needs a solver made with store='none'.")
    problem = cc.build_problem()
    amplitudes = cc.initial_amplitudes(problem)
    cc.energy(amplitudes, problem)
    first = dict(ctx.planned_runs)
    with ctx.deferred():
        new = cc.update(amplitudes, problem)
    for t in new:
        ctx.settle(t)
    runs = {k: n - first.get(k, 0) for k, n in ctx.planned_runs.items() if n > first.get(k, 0)}
    return problem, list(amplitudes), runs


def plan_job(
    cc: AmplitudeSolver, memory_budget: int | None, schedule: str, triples: bool = False
) -> JobPlan:
    """Plan ``cc`` (a solver on a planning context) against ``memory_budget`` (None: the
    memory available, see :func:`tilecc.memory.available_memory`); with ``triples``, its (T)
    step too."""
    ctx = cc.context
    if not ctx.planning:
        raise ValueError("plan_job needs a solver made with store='none'.")
    # The SCF's peak and the process after it, which the run has too; not the cost model's
    # calibration (once per machine, perhaps already in this process: the run will find the model
    # in the wisdom file, and have neither its peak nor the memory it leaves the process holding).
    _ = ctx.cost_model
    before, process = wisdom.before_calibration() or (peak_rss_bytes(), resident_bytes())
    problem, amplitudes, iteration = plan_iteration(cc)
    amplitude_bytes = sum(t.stored_elements * 8 for t in amplitudes)
    # DIIS keeps diis_space vectors and as many errors, each the size of the amplitudes, and
    # an iteration adds its error and the extrapolated amplitudes.
    diis = (2 * cc.diis_space + 2) * amplitude_bytes
    tensors_peak = int(ctx.runtime.memory["high_water_bytes"])
    integrals = int(ctx.largest_transform_bytes)
    # The budget is for what the job allocates (tensors, their DIIS copies, the integral
    # batches), as --memory-budget is; without one, what the process may still take.
    needed = integrals + tensors_peak + diis
    # AO integrals are held for the batches only if they fit beside them and the integral
    # tensors (host/integrals.py, held_ao_bytes), and are let go before the iterations.
    held = int(ctx.held_ao_bytes)
    integral_tensors = sum(8 * t.stored_elements for t in getattr(problem, "eri", {}).values())
    # The (T) step holds the integral tensors and the amplitudes, its kernel's repacked inputs
    # (on several nodes, the node's share of them) and each worker's scratch.
    triples_input = triples_scratch = 0
    if triples:
        triples_input, triples_scratch = triples_bytes(cc, problem)
    during_triples = integral_tensors + amplitude_bytes + triples_input + triples_scratch
    peak = max(
        before,
        process
        + max(needed, held + integrals + integral_tensors, during_triples if triples else 0),
    )
    budget = memory_budget or max(0, available_memory() - process)
    planned = {p.id: p for p in ctx.runtime.contractions() if p.built}
    threads = ctx.threads
    seconds = sum(
        runs * sum(planned[k].plan.modelled_seconds) / threads for k, runs in iteration.items()
    )
    in_core = needed <= budget
    io = 0
    notes = []
    if not in_core:
        # Through the disk store, whose blocks in memory the budget caps.
        for k, runs in iteration.items():
            h = BlockHypergraph.of_plan(planned[k].plan)
            try:
                moved = (
                    lru_io(h, budget) if schedule == "lru" else staging(h, budget, schedule).io(h)
                )
            except ValueError as refused:
                notes.append(str(refused))
                break
            io += runs * sum(moved)
    problem_tensors = {
        t.name: t.stored_elements * 8
        for group in (getattr(problem, "eri", {}), getattr(problem, "fock", {}))
        for t in group.values()
    }
    problem_tensors.update({t.name: t.stored_elements * 8 for t in amplitudes})
    return JobPlan(
        spaces={"occupied": problem.occ.size, "virtual": problem.vir.size},
        tensors=problem_tensors,
        tensors_peak_bytes=tensors_peak,
        allocated_bytes=needed,
        diis_bytes=diis,
        integrals_batch_bytes=integrals,
        ao_integrals_bytes=held,
        integral_file_bytes=int(ctx.integral_file_bytes),
        process_bytes=process,
        triples_input_bytes=triples_input,
        triples_scratch_bytes=triples_scratch,
        peak_memory_bytes=peak,
        iteration_seconds=seconds,
        contractions=len(iteration),
        memory_budget_bytes=budget,
        in_core=in_core,
        predicted_io_bytes=io,
        staging=schedule,
        notes=notes,
    )


def triples_bytes(cc: AmplitudeSolver, problem: Any) -> tuple[int, int]:
    """The (T) step of ``cc``: the bytes of repacked inputs its kernel holds on this rank's node
    (all of them on one node; the largest node's share of the slices it spreads over several),
    and its workers' scratch; from the kernel tilecc runs, made from the spaces alone."""
    nodes = mpi.world().nodes
    kernel = kernel_of_spaces(cc, problem, nodes)
    held = int(kernel.input_bytes)
    slices = np.asarray(kernel.slice_doubles, dtype=float)
    if nodes > 1 and len(slices):
        node_of = slice_nodes(slices, nodes)
        largest = max(slices[node_of == n].sum() for n in range(nodes))
        held -= int(8 * (slices.sum() - largest))
    return held, 8 * int(kernel.scratch_doubles) * cc.context.threads
