"""The (T) step on P ranks, as tilecc runs it (tilecc.cc.triples): the first rank of each node
reads the kernel's inputs through the distributed store, each block from its hash owner, into
the arrays its node's ranks share (the others wait for it): all of them, or, for a kernel that
spreads its inputs over the nodes (a slice per occupied orbital, NodeSlices), its node's slices
alone. Then the steps run one after another. In a step, each rank takes its LPT share of the tasks
by the kernel's cost (rank_share), its workers take its tasks largest first, each as soon as it is
free, and the step ends with an allreduce of one number. A task takes the seconds the kernel
predicts for it from the calibrated cost model (TriplesKernel.task_seconds), made from the job's
spaces alone, and the time of getting the slices of its orbitals that its node does not hold: a
latency and the bytes over the network per slice, the step's first orbital once per worker (a
worker keeps the slices it got, and the step's tasks share that one).

The step is bulk-synchronous, so it is computed step by step rather than event by event. The
gather is priced as the iteration's transfers are: a latency per get, the bytes over the link,
and the node's inter-node bytes through its network interface.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilecc import _core
from tilecc.cc.triples import kernel_of_spaces, slice_nodes
from tilecc.placement import Ranks
from tilecc.simulate.engine import Outcome, RankTimes
from tilecc.simulate.platform import Platform

#: The inputs each kernel reads (their names in the problem's integrals), besides the amplitudes
#: and f_ov.
KERNEL_INTEGRALS = {
    "ClosedShellTriples": ("ovvv", "ovoo", "ovov"),
    "ClosedShellVirtualTriples": ("ovvv", "ovoo", "ovov"),
    "SpinOrbitalTriples": ("ovvv", "ooov", "oovv"),
}


@dataclass(frozen=True)
class TriplesWork:
    """The (T) step: per step, each task's scheduler cost and predicted seconds on one worker;
    the inputs every rank reads whole."""

    kernel: str
    steps: list[tuple[np.ndarray, np.ndarray]]
    input_bytes: int
    input_blocks: int
    #: Per occupied orbital, the bytes of its slices (empty: the kernel spreads nothing), and per
    #: step, the orbitals each task reads the slices of.
    slice_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0))
    orbitals: list[list[list[int]]] = field(default_factory=list)

    @classmethod
    def of(cls, kernel: Any, model: Any, inputs: list[Any]) -> TriplesWork:
        steps = [
            (np.asarray(kernel.task_costs(s)), np.asarray(kernel.task_seconds(s, model)))
            for s in range(kernel.steps)
        ]
        return cls(
            type(kernel).__name__,
            steps,
            sum(8 * t.stored_elements for t in inputs),
            sum(t.num_blocks for t in inputs),
            8 * np.asarray(kernel.slice_doubles, dtype=float),
            [kernel.task_orbitals(s) for s in range(kernel.steps)] if kernel.slice_doubles else [],
        )


def triples_work(cc: Any, problem: Any, amplitudes: list[Any], nodes: int = 1) -> TriplesWork:
    """The (T) step of ``cc`` (a solver on a planning context, its iteration planned) on
    ``nodes`` nodes: the kernel tilecc would run, made from the spaces alone, and its inputs'
    sizes."""
    kernel = kernel_of_spaces(cc, problem, nodes)
    names = KERNEL_INTEGRALS[type(kernel).__name__]
    inputs = [problem.eri[n] for n in names if n in problem.eri]
    inputs += [*amplitudes, problem.fock["ov"]]
    return TriplesWork.of(kernel, cc.context.cost_model, inputs)


def simulate_triples(work: TriplesWork, platform: Platform, ranks: Ranks, threads: int) -> Outcome:
    """The (T) step's seconds, each rank's phases and the bytes moved (an Outcome, whose
    per-contraction list it leaves empty)."""
    size, per_node, nodes = ranks.size, ranks.per_node, ranks.nodes
    out = Outcome(ranks=[RankTimes() for _ in range(size)])
    # Which node holds each orbital's slices (as NodeSlices puts them), and the share of the
    # inputs each node's first rank reads: all of them, once per node, unless spread.
    spread = nodes > 1 and len(work.slice_bytes) > 0
    node_of = slice_nodes(work.slice_bytes, nodes) if spread else None
    if node_of is not None:
        total = work.slice_bytes.sum()
        read = max(work.slice_bytes[node_of == n].sum() / total for n in range(nodes))
        copies = 1.0
    else:
        read, copies = 1.0, float(nodes)
    # The first rank gets the blocks it does not own (of P owners, per_node - 1 share its node).
    intra_share = (per_node - 1) / size
    inter_share = (size - per_node) / size
    intra_bytes = int(work.input_bytes * read * intra_share)
    inter_bytes = int(work.input_bytes * read * inter_share)
    intra_latency, intra_wire = platform.transfer_seconds(intra_bytes, False)
    inter_latency, inter_wire = platform.transfer_seconds(inter_bytes, True)
    gather = work.input_blocks * read * (intra_share * intra_latency + inter_share * inter_latency)
    gather += intra_wire + inter_wire
    out.bytes = {
        "local": int(work.input_bytes * copies / size),
        "intra_node": int(work.input_bytes * copies * (per_node - 1) / size),
        "inter_node": int(work.input_bytes * copies * (size - per_node) / size),
    }
    sync = 0.0
    if size > 1:
        latency, wire = platform.transfer_seconds(8, ranks.nodes > 1)
        sync = math.ceil(math.log2(size)) * (latency + wire)
    slowdown = platform.slowdown(per_node * threads)
    out.seconds = gather
    for times in out.ranks:
        times.communication += threads * gather
    latency, _ = platform.transfer_seconds(0, True)
    for index, (costs, seconds) in enumerate(work.steps):
        share = (
            np.asarray(_core.lpt_bins(costs.tolist(), size))
            if size > 1
            else np.zeros(len(costs), dtype=int)
        )
        spans = []
        for rank in range(size):
            mine = np.flatnonzero(share == rank)
            order = mine[np.argsort(-costs[mine], kind="stable")]
            gets = np.zeros(len(order))
            if node_of is not None and len(order):
                node = ranks.node_of(rank)
                first = work.orbitals[index][int(order[0])][0]
                for n, task in enumerate(order.tolist()):
                    # The step's first orbital's slices: once per worker (its first task).
                    elsewhere = [
                        p
                        for p in work.orbitals[index][task]
                        if node_of[p] != node and (p != first or n < threads)
                    ]
                    nbytes = float(work.slice_bytes[elsewhere].sum())
                    gets[n] = (
                        len(elsewhere) * latency + platform.transfer_seconds(int(nbytes), True)[1]
                    )
                    out.bytes["inter_node"] += int(nbytes)
            spans.append(_makespan(seconds[order] * slowdown + gets, threads))
            out.ranks[rank].compute += float(seconds[mine].sum() * slowdown)
            out.ranks[rank].communication += float(gets.sum())
        step = max(spans, default=0.0) + sync
        out.seconds += step
        for times in out.ranks:
            times.communication += threads * sync
    for times in out.ranks:
        times.idle = max(0.0, threads * out.seconds - times.compute - times.communication)
    return out


def _makespan(seconds: np.ndarray, workers: int) -> float:
    """List scheduling: each task, in order, on the worker free first."""
    free = [0.0] * workers
    for s in seconds.tolist():
        heapq.heapreplace(free, free[0] + s)
    return max(free)
