"""``tilecc simulate``: a job's real plans (built on a planning context, no CC run) simulated on
P ranks of a platform, one iteration at a time (see engine.py for what is modelled and what is
not), and its (T) step (triples.py), with the speed-up against one rank and a strong-scaling
curve.

>>> from tilecc.simulate.platform import load_platform
>>> load_platform("infiniband").ranks_per_node
32
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tilecc.placement import Ranks
from tilecc.simulate.engine import Outcome, simulate_iteration
from tilecc.simulate.host import HostWork
from tilecc.simulate.platform import Platform, load_platform
from tilecc.simulate.triples import TriplesWork, simulate_triples, triples_work
from tilecc.simulate.work import Work

__all__ = [
    "HostWork",
    "Platform",
    "Prediction",
    "TriplesWork",
    "load_platform",
    "predict",
    "ranks_on",
    "works_of",
]


@dataclass
class Prediction:
    """What ``tilecc simulate`` reports (its ``--json``)."""

    ranks: int
    ranks_per_node: int
    threads: int
    policy: str
    placement: str | None
    workq: int
    platform: dict[str, Any]
    iteration_seconds: float
    #: Of the iteration, the Python and element-wise operations between its contractions.
    host_seconds: float
    one_rank_seconds: float
    speedup: float
    #: The (T) step, None for a method without one.
    triples_seconds: float | None
    decomposition: list[dict[str, float]]  # per rank, seconds by phase summed over workers
    bytes: dict[str, int]
    scaling: list[tuple[int, float]]  # (ranks, iteration seconds)
    contractions: list[tuple[str, float]] = field(default_factory=list)
    #: The (T) step's kernel, per-rank decomposition, bytes and (ranks, seconds) curve.
    triples: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def works_of(
    cc: Any, triples: bool = False, nodes: int = 1
) -> tuple[list[Work], TriplesWork | None, HostWork]:
    """One iteration of ``cc`` (a solver on a planning context) as simulation work: its
    contractions, with ``triples`` its (T) step (the kernel tilecc runs on ``nodes`` nodes), and
    what it does between contractions."""
    from tilecc.cc.planning import plan_iteration

    problem, amplitudes, runs = plan_iteration(cc)
    planned = {p.id: p for p in cc.context.runtime.contractions() if p.built}
    works = [Work.of_plan(planned[k].plan, n) for k, n in runs.items()]
    step = triples_work(cc, problem, amplitudes, nodes) if triples else None
    return works, step, HostWork.of_iteration(cc, problem, amplitudes)


def ranks_on(platform: Platform, ranks: int, per_node: int | None) -> Ranks:
    """P ranks in nodes of ``per_node`` (default: the platform's), a job smaller than a node on
    one node."""
    per = per_node or platform.ranks_per_node
    return Ranks(ranks, ranks if ranks < per else per)


def predict(
    works: list[Work],
    platform: Platform,
    ranks: int,
    per_node: int | None,
    threads: int,
    policy: str,
    placement: str | None = None,
    workq: int = 0,
    scaling: list[int] | None = None,
    triples: TriplesWork | None = None,
    host: HostWork | None = None,
) -> Prediction:
    """The iteration (and the (T) step of ``triples``) on ``ranks`` ranks, and on each of
    ``scaling`` (default: the powers of two up to ``ranks`` that fill whole nodes, or one) for
    the strong-scaling curve; with ``host``, the iteration's work between contractions too."""
    shape = ranks_on(platform, ranks, per_node)
    powers = (2**k for k in range(ranks.bit_length()) if 2**k <= ranks)
    points = scaling or sorted(
        {1, ranks, *(p for p in powers if p <= shape.per_node or p % shape.per_node == 0)}
    )

    def run(p: int) -> Outcome:
        return simulate_iteration(
            works, platform, ranks_on(platform, p, per_node), threads, policy, placement, workq
        )

    def between(p: int) -> float:
        return host.seconds(platform, ranks_on(platform, p, per_node), threads) if host else 0.0

    curve = {p: run(p) for p in points}
    main = curve[ranks] if ranks in curve else run(ranks)
    one = curve[1] if 1 in curve else run(1)
    iteration, on_one = main.seconds + between(ranks), one.seconds + between(1)
    step = None
    if triples is not None:
        outcomes = {
            p: simulate_triples(triples, platform, ranks_on(platform, p, per_node), threads)
            for p in {*points, ranks}
        }
        mine = outcomes[ranks]
        step = {
            "kernel": triples.kernel,
            "decomposition": [{"rank": r, **t.as_dict()} for r, t in enumerate(mine.ranks)],
            "bytes": mine.bytes,
            "scaling": [(p, outcomes[p].seconds) for p in points],
        }
    return Prediction(
        ranks=ranks,
        ranks_per_node=shape.per_node,
        threads=threads,
        policy=policy,
        placement=placement,
        workq=workq,
        platform=asdict(platform),
        iteration_seconds=iteration,
        host_seconds=between(ranks),
        one_rank_seconds=on_one,
        speedup=on_one / iteration if iteration > 0 else float("nan"),
        triples_seconds=None if step is None else outcomes[ranks].seconds,
        decomposition=[{"rank": r, **t.as_dict()} for r, t in enumerate(main.ranks)],
        bytes=main.bytes,
        scaling=[(p, curve[p].seconds + between(p)) for p in points],
        contractions=main.per_contraction,
        triples=step,
    )
