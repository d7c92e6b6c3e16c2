"""One iteration's contractions on P ranks of T workers each, as a discrete-event simulation
(SimPy): every task of every contraction is fetched, computed and accumulated on a simulated
worker, under the same policy, placement and WorkQ setting as a real run.

- Tasks take their predicted seconds (the cost model the runtime schedules with).
- A block lives on its hash owner (the mpi store's); a task reads its other blocks from their
  owners (each once per rank and contraction: the first task on a rank that needs one gets it,
  the rank's others wait for it or find it there, as the mpi store keeps it) and accumulates its
  output blocks into theirs. A transfer takes the latency and its
  bytes over the bandwidth, between nodes through the receiving node's network interface, which
  carries one transfer at a time (its contention).
- Policies with a counter (``counter``, ``tce``) take every task from one counter on rank 0: a
  resource serving one fetch at a time, each taking the platform's service time plus the latency
  to rank 0's node. The others give each rank its LPT share, a placement its own.
- With WorkQ, a courier per rank fetches ahead, up to ``workq`` tasks (their gets completed
  together, one latency), each remote block once; workers take tasks from its queue (Q1) and
  post their updates of remote blocks to it (Q2, up to 4 ``workq`` waiting; beyond that a worker
  sends its own), which it sends together whenever it wakes for room in Q1, and at the end.
- Contractions run one after another, each ending when its last task does and the ranks have
  summed their task times (an allreduce of one number per task) and completed their writes (a
  barrier): 2 log2(P) steps of latency each, the allreduce's carrying its bytes too.

What an iteration does between its contractions (its Python and element-wise operations) is
added by the caller (host.py).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilecc import _core
from tilecc.placement import Ranks, place
from tilecc.placement.schemes import hash_owners
from tilecc.simulate.platform import Platform
from tilecc.simulate.work import Work

#: The policies that hand tasks out through the ranks' shared counter.
COUNTER_POLICIES = ("counter", "tce")
PHASES = ("compute", "communication", "counter", "idle")
#: A SimPy process: a generator of events.
Process = Generator[Any, Any, None]


@dataclass
class RankTimes:
    """One rank's simulated seconds, summed over its workers, by phase."""

    compute: float = 0.0
    communication: float = 0.0
    counter: float = 0.0
    idle: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {p: getattr(self, p) for p in PHASES}


@dataclass
class Outcome:
    """A simulated iteration: its seconds, per-rank phases, bytes moved by class."""

    seconds: float = 0.0
    ranks: list[RankTimes] = field(default_factory=list)
    bytes: dict[str, int] = field(
        default_factory=lambda: {"local": 0, "intra_node": 0, "inter_node": 0}
    )
    per_contraction: list[tuple[str, float]] = field(default_factory=list)


def simulate_iteration(
    works: list[Work],
    platform: Platform,
    ranks: Ranks,
    threads: int,
    policy: str,
    placement: str | None = None,
    workq: int = 0,
) -> Outcome:
    out = Outcome(ranks=[RankTimes() for _ in range(ranks.size)])
    for work in works:
        seconds, times, moved = _contraction(
            work, platform, ranks, threads, policy, placement, workq
        )
        out.seconds += work.runs * seconds
        out.per_contraction.append((work.expression, work.runs * seconds))
        for mine, add in zip(out.ranks, times, strict=True):
            for p in PHASES:
                setattr(mine, p, getattr(mine, p) + work.runs * getattr(add, p))
        for k, v in moved.items():
            out.bytes[k] += work.runs * v
    return out


def _contraction(
    work: Work,
    platform: Platform,
    ranks: Ranks,
    threads: int,
    policy: str,
    placement: str | None,
    workq: int,
) -> tuple[float, list[RankTimes], dict[str, int]]:
    import simpy

    h = work.hypergraph
    owner = hash_owners(h, ranks)
    costs = work.task_seconds * platform.slowdown(ranks.per_node * threads)
    env = simpy.Environment()
    nics = [simpy.Resource(env, capacity=1) for _ in range(ranks.nodes)]
    counter = simpy.Resource(env, capacity=1)
    times = [RankTimes() for _ in range(ranks.size)]
    moved = {"local": 0, "intra_node": 0, "inter_node": 0}
    dynamic = placement is None and workq == 0 and policy in COUNTER_POLICIES
    if dynamic:
        order = deque(np.argsort(-costs, kind="stable").tolist())
    else:
        if placement is not None:
            task_rank = place(h, placement, ranks, owner).task_rank
        else:
            task_rank = np.asarray(_core.lpt_bins(costs.tolist(), ranks.size))
        shares = [deque(np.flatnonzero(task_rank == r).tolist()) for r in range(ranks.size)]

    def transfer(rank: int, other: int, nbytes: int) -> Process:
        inter = ranks.node_of(rank) != ranks.node_of(other)
        moved["inter_node" if inter else "intra_node"] += nbytes
        latency, wire = platform.transfer_seconds(nbytes, inter)
        yield env.timeout(latency)
        if inter:
            with nics[ranks.node_of(rank)].request() as turn:
                yield turn
                yield env.timeout(wire)
        else:
            yield env.timeout(wire)

    # Per rank, the remote operand blocks got so far: an event that fires when the block is in.
    kept: list[dict[int, Any]] = [{} for _ in range(ranks.size)]

    # Per rank, the updates its workers posted to WorkQ's courier (Q2), not yet sent.
    outbox: list[list[int]] = [[] for _ in range(ranks.size)]

    def accumulates(rank: int, nets: np.ndarray, courier_sends: bool) -> Process:
        for e in nets.tolist():
            if owner[e] == rank:
                moved["local"] += int(h.net_bytes[e])
            elif courier_sends and len(outbox[rank]) < 4 * workq:
                outbox[rank].append(e)
            else:
                yield from transfer(rank, int(owner[e]), int(h.net_bytes[e]))

    def together(rank: int, nets: list[int]) -> Process:
        """The courier's transfers of these remote blocks, issued together and completed
        together: one latency each way of moving (within the node, across nodes)."""
        inter = intra = 0
        for e in nets:
            if ranks.node_of(int(owner[e])) != ranks.node_of(rank):
                inter += int(h.net_bytes[e])
            else:
                intra += int(h.net_bytes[e])
        moved["inter_node"] += inter
        moved["intra_node"] += intra
        if intra:
            latency, wire = platform.transfer_seconds(intra, False)
            yield env.timeout(latency + wire)
        if inter:
            latency, wire = platform.transfer_seconds(inter, True)
            yield env.timeout(latency)
            with nics[ranks.node_of(rank)].request() as turn:
                yield turn
                yield env.timeout(wire)

    def send_posted(rank: int) -> Process:
        posted, outbox[rank] = outbox[rank], []
        yield from together(rank, posted)

    def reads(rank: int, nets: np.ndarray) -> Process:
        for e in nets.tolist():
            if owner[e] == rank:
                moved["local"] += int(h.net_bytes[e])
            elif e in kept[rank]:
                yield kept[rank][e]
            else:
                arrived = kept[rank][e] = env.event()
                yield from transfer(rank, int(owner[e]), int(h.net_bytes[e]))
                arrived.succeed()

    def take_from_counter(rank: int) -> Generator[Any, Any, int | None]:
        start = env.now
        with counter.request() as turn:
            yield turn
            far = ranks.node_of(rank) != ranks.node_of(0)
            latency = platform.inter_node_latency_us if far else platform.intra_node_latency_us
            yield env.timeout((platform.counter_service_us + (latency if rank else 0.0)) * 1e-6)
        times[rank].counter += env.now - start
        return order.popleft() if order else None

    def worker(rank: int, queue: simpy.Store | None) -> Process:
        while True:
            if queue is not None:
                start = env.now
                task = yield queue.get()
                times[rank].communication += env.now - start
            elif dynamic:
                task = yield from take_from_counter(rank)
            else:
                task = shares[rank].popleft() if shares[rank] else None
            if task is None:
                return
            start = env.now
            if queue is None:
                yield from reads(rank, work.reads[task])
            times[rank].communication += env.now - start
            yield env.timeout(float(costs[task]))
            times[rank].compute += float(costs[task])
            start = env.now
            yield from accumulates(rank, work.writes[task], queue is not None)
            times[rank].communication += env.now - start

    def courier(rank: int, queue: simpy.Store, workers_done: simpy.Event) -> Process:
        fetched: set[int] = set()
        mine = list(shares[rank])
        for first in range(0, len(mine), workq):
            batch = mine[first : first + workq]
            gets = []
            for task in batch:
                for e in work.reads[task].tolist():
                    if owner[e] == rank:
                        moved["local"] += int(h.net_bytes[e])
                    elif e not in fetched:
                        fetched.add(e)
                        gets.append(e)
            yield from together(rank, gets)
            for task in batch:
                yield queue.put(task)
                yield from send_posted(rank)  # woken by room in Q1
        for _ in range(threads):
            yield queue.put(None)
        yield workers_done
        yield from send_posted(rank)

    for rank in range(ranks.size):
        queue = simpy.Store(env, capacity=workq) if workq > 0 and not dynamic else None
        workers = [env.process(worker(rank, queue)) for _ in range(threads)]
        if queue is not None:
            env.process(courier(rank, queue, env.all_of(workers)))
    env.run()
    sync = _synchronisation(platform, ranks, 8 * h.tasks)
    for t in times:
        t.communication += threads * sync
        t.idle = max(0.0, threads * (env.now + sync) - t.compute - t.communication - t.counter)
    return env.now + sync, times, moved


def collective_seconds(platform: Platform, ranks: Ranks, nbytes: int) -> float:
    """Seconds of an allreduce of ``nbytes`` over the ranks (a barrier: 0 bytes), by recursive
    doubling: log2(P) steps each way; none on one rank."""
    if ranks.size == 1:
        return 0.0
    steps = 2 * math.ceil(math.log2(ranks.size))
    latency, wire = platform.transfer_seconds(nbytes, ranks.nodes > 1)
    return steps * (latency + wire)


def _synchronisation(platform: Platform, ranks: Ranks, allreduce_bytes: int) -> float:
    """Seconds of the allreduce of the task times and the barrier that end a contraction on
    several ranks."""
    return collective_seconds(platform, ranks, allreduce_bytes) + collective_seconds(
        platform, ranks, 0
    )
