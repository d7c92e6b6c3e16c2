"""Where the time went: the time decomposition of paper 000 (Fig. 12) and Chrome/Perfetto traces.

Every contraction run charges each worker's time to one phase at a time (see
``include/tilecc/trace.hpp``). A :class:`Decomposition` sums them in *wall-equivalent seconds*
(worker-seconds divided by the number of workers), so that compute + permute + scheduling + idle
is the wall time of the runs, and the inspector adds the wall time of building the plans (the
workers build a batch of plans at once; each plan is charged the batch's wall time in proportion to
how long it took to build).

A trace (``--trace PATH``) holds one row per worker with one slice per phase (fetch, permute,
gemm, accumulate, wait) and one per plan the worker built, and a row with one slice per run (of
one contraction, or of several run together). It opens in ui.perfetto.dev or chrome://tracing,
and ``tilecc report`` reads it back.

A run of several contractions charges each one the work done for it; its fetching and waiting,
which belong to no one contraction, are shared out by each one's part of the work
(:func:`split_run`).
"""

from __future__ import annotations

import gzip
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tilecc import _core, mpi
from tilecc.files import read_text_input, replaced_atomically

PHASES: tuple[str, ...] = tuple(_core.phase_names())
#: The row of a trace beside the workers': one slice per run.
RUNS_ROW = 10_000
#: The trace's row of the job's phases (SCF, integrals, each iteration, (T)), above the rest.
JOB_ROW = 10_001


@dataclass
class Decomposition:
    """Seconds of wall time by what the workers did (worker-seconds / workers)."""

    compute: float = 0.0  # GEMM
    permute: float = 0.0  # operand permutations and output accumulation
    transfer: float = 0.0  # reading blocks through stores that copy them (not views)
    scheduling: float = 0.0  # asking the policy for work: counters, queues, steals
    idle: float = 0.0  # waiting: late start and load imbalance
    inspector: float = 0.0  # building plans

    def add_phases(self, worker_seconds: dict[str, float], workers: int) -> None:
        scale = 1.0 / max(1, workers)
        self.compute += scale * worker_seconds.get("gemm", 0.0)
        self.permute += scale * (
            worker_seconds.get("permute", 0.0) + worker_seconds.get("accumulate", 0.0)
        )
        self.transfer += scale * worker_seconds.get("fetch", 0.0)
        self.scheduling += scale * worker_seconds.get("schedule", 0.0)
        self.idle += scale * worker_seconds.get("wait", 0.0)

    def add(self, other: Decomposition) -> None:
        for name in self.as_dict():
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def total(self) -> float:
        return (
            self.compute + self.permute + self.transfer + self.scheduling + self.idle
            + self.inspector
        )  # fmt: skip

    @property
    def imbalance(self) -> float:
        """Idle time as a fraction of the runs' wall time."""
        runs = self.total - self.inspector
        return self.idle / runs if runs > 0 else 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "compute": self.compute,
            "permute": self.permute,
            "transfer": self.transfer,
            "scheduling": self.scheduling,
            "idle": self.idle,
            "inspector": self.inspector,
        }


#: The phases of work inside a task.
WORK_PHASES: tuple[str, ...] = ("fetch", "permute", "gemm", "accumulate")


def proportional_shares(weights: list[float]) -> list[float]:
    """Each weight's fraction of their sum (equal fractions when they sum to 0): how a run's
    shared time and counter calls, or a batch's inspector time, are charged to the contractions
    in it."""
    total = sum(weights)
    return [w / total if total > 0 else 1.0 / len(weights) for w in weights]


def split_run(
    phases: dict[str, float], own: list[dict[str, float]], workers: int
) -> list[Decomposition]:
    """The decomposition of one run per contraction of it, from the run's worker-seconds per
    phase and each contraction's ``own`` (the work done for it): each gets its own work, plus the
    run's time in no contraction (fetching, waiting) in proportion to its part of the work. The
    parts add up to the run's decomposition."""
    shares = proportional_shares([sum(o.get(name, 0.0) for name in WORK_PHASES) for o in own])
    unowned = {name: phases.get(name, 0.0) - sum(o.get(name, 0.0) for o in own) for name in PHASES}
    parts = []
    for o, share in zip(own, shares):
        part = Decomposition()
        part.add_phases({n: o.get(n, 0.0) + share * unowned[n] for n in PHASES}, workers)
        parts.append(part)
    return parts


@dataclass
class _Run:
    names: list[str]  # the contractions run together, in queue order
    start: float
    seconds: float
    workers: int
    tasks: int
    shared_calls: int
    events: dict[str, np.ndarray]


@dataclass
class Inspection:
    """One plan's building, as a trace shows it."""

    name: str  # the plan's expression
    worker: int  # the worker that built it
    start: float
    seconds: float  # its building, on that worker
    charged: float  # its part of the batch's wall time (see the module's docstring)


@dataclass
class Span:
    """One phase of the job (the SCF, the integrals, an iteration, (T)), as a trace shows it."""

    name: str
    start: float  # time.perf_counter(), the clock the core's slices use
    seconds: float


@dataclass
class TraceRecorder:
    """Collects the phase slices of every contraction run of a Context, and writes them as a
    Chrome trace."""

    policy: str
    threads: int
    runs: list[_Run] = field(default_factory=list)
    inspections: list[Inspection] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)

    def add_run(self, names: list[str], run: Any, events: dict[str, np.ndarray]) -> None:
        """One run (a ``_core.RunStats``) of the contractions ``names`` (run together); phase
        slices carry their segment, the index in ``names`` of the contraction they worked for (-1:
        none)."""
        self.runs.append(
            _Run(
                names,
                float(run.start),
                float(run.seconds),
                self.threads,
                int(run.tasks),
                int(run.shared_calls),
                events,
            )
        )

    def add_inspection(self, inspection: Inspection) -> None:
        self.inspections.append(inspection)

    def add_span(self, span: Span) -> None:
        self.spans.append(span)

    def write(self, path: Path, ranks: list[TraceRecorder] | None = None) -> None:
        """Write the trace atomically, one event per line; gzipped when the name ends in
        ``.gz`` (Perfetto opens ``.json.gz`` as it is). ``ranks``: every rank's recorder of a
        distributed job (this one among them), written as one trace with a process per rank
        and its workers numbered after the ranks before it."""
        recorders = ranks or [self]
        with replaced_atomically(path, "w+b", what="trace file") as raw:
            zipped = gzip.GzipFile(fileobj=raw, mode="wb") if str(path).endswith(".gz") else None
            f = io.TextIOWrapper(zipped or raw, encoding="utf-8")
            f.write('{"displayTimeUnit": "ms", ')
            meta = {
                "tilecc": _core.version(),
                "policy": self.policy,
                "threads": self.threads * len(recorders),
                "ranks": len(recorders),
                "network_emulation": mpi.network(),
            }
            f.write(f'"otherData": {json.dumps(meta)}, "traceEvents": [\n')
            first = True
            for event in _events(recorders):
                f.write(("" if first else ",\n") + json.dumps(event))
                first = False
            f.write("\n]}\n")
            f.flush()
            f.detach()
            if zipped is not None:
                zipped.close()


def _events(recorders: list[TraceRecorder]) -> Iterable[dict[str, Any]]:
    """The trace events of every rank's recorder: rank r is process r + 1, its worker w is
    thread r * threads + w (so that every worker of the job has a number of its own), and a
    batch has the same run number on every rank (the ranks run the same batches)."""
    starts = [r.start for rec in recorders for r in rec.runs]
    starts += [i.start for rec in recorders for i in rec.inspections]
    starts += [s.start for rec in recorders for s in rec.spans]
    origin = min(starts, default=0.0)
    total_workers = sum(rec.threads for rec in recorders)

    def us(t: float) -> float:
        return round((t - origin) * 1e6, 3)

    def row(pid: int, tid: int, name: str) -> dict[str, Any]:
        """The metadata event that names a trace row."""
        return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}

    first_worker = 0
    for rank, rec in enumerate(recorders):
        pid = rank + 1
        title = "tilecc" if len(recorders) == 1 else f"tilecc rank {rank}"
        yield {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": title}}
        for w in range(rec.threads):
            yield row(pid, first_worker + w, f"worker {w}")
        yield row(pid, RUNS_ROW, "contractions")
        yield row(pid, JOB_ROW, "job")
        for span in rec.spans:
            yield {
                "ph": "X",
                "pid": pid,
                "tid": JOB_ROW,
                "name": span.name,
                "cat": "job",
                "ts": us(span.start),
                "dur": round(span.seconds * 1e6, 3),
            }
        for index, r in enumerate(rec.runs):
            yield {
                "ph": "X",
                "pid": pid,
                "tid": RUNS_ROW,
                "name": r.names[0] if len(r.names) == 1 else f"{len(r.names)} contractions",
                "cat": "run",
                "ts": us(r.start),
                "dur": round(r.seconds * 1e6, 3),
                "args": {
                    "run": index,
                    "contractions": r.names,
                    "workers": total_workers,
                    "tasks": r.tasks,
                    "shared_calls": r.shared_calls,
                    "policy": rec.policy,
                },
            }
            e = r.events
            for worker, phase, task, segment, start, end in zip(
                e["worker"].tolist(),
                e["phase"].tolist(),
                e["task"].tolist(),
                e["segment"].tolist(),
                e["start"].tolist(),
                e["end"].tolist(),
            ):
                yield {
                    "ph": "X",
                    "pid": pid,
                    "tid": first_worker + worker,
                    "name": PHASES[phase],
                    "cat": "phase",
                    "ts": us(start),
                    "dur": round((end - start) * 1e6, 3),
                    "args": {"run": index, "task": task, "segment": segment},
                }
        for i in rec.inspections:
            yield {
                "ph": "X",
                "pid": pid,
                "tid": first_worker + i.worker,
                "name": f"inspect {i.name}",
                "cat": "inspector",
                "ts": us(i.start),
                "dur": round(i.seconds * 1e6, 3),
                # Each rank builds every plan: the job's inspector time is one rank's.
                "args": {"charged": i.charged / len(recorders)},
            }
        first_worker += rec.threads


@dataclass
class TraceSummary:
    """What ``tilecc report`` reads back from a trace."""

    threads: int  # every worker of the job: threads per rank x ranks
    policy: str
    per_contraction: dict[str, Decomposition]
    per_worker: dict[int, dict[str, float]]  # worker -> phase -> seconds
    slices: list[tuple[int, str, float, float]]  # worker, phase, start, duration (seconds)
    ranks: int = 1  # worker w ran on rank w // (threads // ranks)
    #: Idle worker-seconds after a worker's last working slice of a run (not ``wait``), until the
    #: run ended: it had no task left while others finished theirs (imbalance).
    idle_at_end: float = 0.0
    #: The rest of the idle worker-seconds, between a worker's working slices of a run (and
    #: before its first): waiting for an earlier contraction of a batch, waking up, or the
    #: host's other work.
    idle_between: float = 0.0
    #: Each task's seconds (its phases summed): the task-granularity histogram's data.
    task_seconds: list[float] = field(default_factory=list)

    @property
    def total(self) -> Decomposition:
        d = Decomposition()
        for part in self.per_contraction.values():
            d.add(part)
        return d


#: The most workers a chart (tilecc report --png) draws a row for.
MAX_CHART_WORKERS = 256
#: More workers than a trace can honestly hold (threads x ranks of any machine we run on).
MAX_TRACE_WORKERS = 1 << 16


def read_trace(path: Path) -> TraceSummary:
    """Read a trace written by :class:`TraceRecorder`; refuses anything else in one sentence."""
    text = read_text_input(Path(path), "trace", compressed=str(path).endswith(".gz"))
    try:
        data = json.loads(text)
        meta = data["otherData"]
        threads = int(meta["threads"])
        if not 1 <= threads <= MAX_TRACE_WORKERS:
            raise ValueError(f"it claims {threads} workers")
        summary = _summarise(data["traceEvents"], threads, str(meta["policy"]))
        summary.ranks = int(meta.get("ranks", 1))
        if summary.ranks < 1 or threads % summary.ranks:
            raise ValueError(f"it claims {summary.ranks} ranks for {threads} workers")
        return summary
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(
            f"{path} is not a tilecc trace ({type(exc).__name__}: {exc}); write one with "
            f"tilecc run ... --trace PATH."
        ) from None


def _summarise(events: list[dict[str, Any]], threads: int, policy: str) -> TraceSummary:
    """The summary of a trace's events (raises KeyError, TypeError or ValueError on events that
    a TraceRecorder did not write)."""
    run_names: dict[int, list[str]] = {}
    run_workers: dict[int, int] = {}
    per_run_phases: dict[int, dict[str, float]] = {}
    per_segment_phases: dict[tuple[int, int], dict[str, float]] = {}  # (run, segment)
    # Workers that recorded nothing still count (as idle) in the tables, up to the chart limit;
    # a trace's own claim of more is not allocated for until its events show them.
    per_worker: dict[int, dict[str, float]] = {
        w: dict.fromkeys(PHASES, 0.0) for w in range(min(threads, MAX_CHART_WORKERS))
    }
    slices: list[tuple[int, str, float, float]] = []
    inspector: dict[str, float] = {}
    windows: dict[int, tuple[float, float]] = {}  # run -> (start, end), over the ranks
    busy: dict[tuple[int, int], tuple[float, float]] = {}  # (run, worker) -> (seconds, last end)
    tasks: dict[tuple[int, int], float] = {}  # (run, task) -> seconds
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, dur = e.get("cat"), float(e["dur"]) * 1e-6
        if not math.isfinite(dur) or dur < 0:
            raise ValueError(f"an event lasts {e['dur']!r} us")
        if cat == "run":
            run_names[e["args"]["run"]] = list(e["args"]["contractions"])
            run_workers[e["args"]["run"]] = int(e["args"]["workers"])
            start = float(e["ts"]) * 1e-6
            low, high = windows.get(e["args"]["run"], (start, start + dur))
            windows[e["args"]["run"]] = (min(low, start), max(high, start + dur))
        elif cat == "phase":
            run, segment = e["args"]["run"], int(e["args"]["segment"])
            per_run_phases.setdefault(run, dict.fromkeys(PHASES, 0.0))[e["name"]] += dur
            if segment >= 0:
                key = (run, segment)
                per_segment_phases.setdefault(key, dict.fromkeys(PHASES, 0.0))[e["name"]] += dur
            if not (isinstance(e["tid"], int) and 0 <= e["tid"] < threads):
                raise ValueError(f"an event's worker {e['tid']!r} is not one of its {threads}")
            per_worker.setdefault(e["tid"], dict.fromkeys(PHASES, 0.0))[e["name"]] += dur
            slices.append((int(e["tid"]), e["name"], float(e["ts"]) * 1e-6, dur))
            task = int(e["args"].get("task", -1))
            if task >= 0:
                tasks[(run, task)] = tasks.get((run, task), 0.0) + dur
            if e["name"] != "wait":  # a worker with no task to run waits
                seconds, last = busy.get((run, e["tid"]), (0.0, -math.inf))
                busy[(run, e["tid"])] = (seconds + dur, max(last, float(e["ts"]) * 1e-6 + dur))
        elif cat == "inspector":
            name = e["name"].removeprefix("inspect ")
            inspector[name] = inspector.get(name, 0.0) + float(e["args"]["charged"])
    per_contraction: dict[str, Decomposition] = {}
    for run, names in run_names.items():
        owned = [per_segment_phases.get((run, s), {}) for s in range(len(names))]
        parts = split_run(per_run_phases.get(run, {}), owned, run_workers[run])
        for name, part in zip(names, parts):
            per_contraction.setdefault(name, Decomposition()).add(part)
    for name, seconds in inspector.items():
        per_contraction.setdefault(name, Decomposition()).inspector += seconds
    at_end = between = 0.0
    for run, (start, end) in windows.items():
        for worker in range(run_workers.get(run, 0)):
            seconds, last = busy.get((run, worker), (0.0, start))
            tail = max(0.0, end - last)
            at_end += tail
            between += max(0.0, end - start - seconds - tail)
    return TraceSummary(
        threads,
        policy,
        per_contraction,
        per_worker,
        slices,
        idle_at_end=at_end,
        idle_between=between,
        task_seconds=list(tasks.values()),
    )
