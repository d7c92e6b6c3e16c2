"""``tilecc report TRACE [--png PATH]``: where the time of a traced run went.

Prints the time decomposition (compute, permute, scheduling, idle, inspector) per contraction and
in total, where the idle time came from (imbalance or gaps), the tasks by duration (granularity),
and each worker's time by phase; with ``--png``, draws a per-worker timeline and a load-balance
bar chart.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tilecc.trace import MAX_CHART_WORKERS, PHASES, Decomposition, TraceSummary, read_trace

#: One colour per phase, the same in the timeline and the bars.
COLOURS = {
    "schedule": "#d62728",
    "fetch": "#8c564b",
    "permute": "#ff7f0e",
    "gemm": "#2ca02c",
    "accumulate": "#9467bd",
    "wait": "#c7c7c7",
}


def decomposition_table(summary: TraceSummary) -> Table:
    table = Table(
        title=f"time decomposition, ms (policy {summary.policy}, {summary.threads} workers)"
    )
    table.add_column("contraction")
    for name in ("compute", "permute", "transfer", "sched.", "idle", "inspector", "total"):
        table.add_column(name, justify="right")

    def add(name: str, d: Decomposition) -> None:
        values = (d.compute, d.permute, d.transfer, d.scheduling, d.idle, d.inspector, d.total)
        # Times are measured differences: a rounding below zero is shown as none.
        table.add_row(name, *(f"{1e3 * max(0.0, x):.2f}" for x in values))

    ranked = sorted(summary.per_contraction.items(), key=lambda kv: kv[1].total, reverse=True)
    for name, d in ranked:
        add(name, d)
    total = summary.total
    add("total", total)
    if total.total > 0:
        shares = [100 * x / total.total for x in total.as_dict().values()]
        table.add_row("share", *(f"{max(0.0, s):.1f}%" for s in shares), "100%")
    return table


def idle_explained(summary: TraceSummary) -> str:
    """Where the workers' idle time came from: imbalance (out of tasks at a run's end while
    others finished) or gaps within a run (work left, but the worker was not running it)."""
    total = summary.idle_at_end + summary.idle_between
    if total <= 0:
        return "time without a task: none."
    return (
        f"time without a task: {1e3 * total:.2f} worker-ms, "
        f"{100 * summary.idle_at_end / total:.0f}% at the ends of runs (imbalance: workers out "
        f"of tasks while others finished; a finer tile, a smaller quantum or another policy "
        f"helps), {100 * summary.idle_between / total:.0f}% between a worker's tasks (waiting "
        f"for an earlier contraction of a batch, waking up, or the host's other work; fewer "
        f"threads than cores helps)."
    )


def granularity_table(summary: TraceSummary) -> Table:
    """Tasks by duration, in octaves: how many, and what share of the tasks' time (paper 000's
    granularity analysis: many tiny tasks cost scheduling, a few huge ones balance badly)."""
    table = Table(title="task granularity")
    for column in ("task duration", "tasks", "share of tasks", "share of task time"):
        table.add_column(column, justify="right")
    durations = [t for t in summary.task_seconds if t > 0]
    if not durations:
        return table
    octaves: dict[int, list[float]] = {}
    for seconds in durations:
        octaves.setdefault(math.floor(math.log2(seconds * 1e6)), []).append(seconds)
    total = sum(durations)

    def show(us: float) -> str:
        return f"{us:.3g} µs" if us < 1000 else f"{us / 1000:.3g} ms"

    for octave in sorted(octaves):
        members = octaves[octave]
        table.add_row(
            f"{show(2.0**octave)} – {show(2.0 ** (octave + 1))}",
            str(len(members)),
            f"{100 * len(members) / len(durations):.1f}%",
            f"{100 * sum(members) / total:.1f}%",
        )
    return table


def worker_table(summary: TraceSummary) -> Table:
    """Each worker's time per phase; on several ranks, each rank's workers, then the rank's
    total."""
    table = Table(title="ms per worker and phase")
    per_rank = summary.threads // summary.ranks
    if summary.ranks > 1:
        table.add_column("rank", justify="right")
    table.add_column("worker", justify="right")
    for phase in PHASES:
        table.add_column(phase, justify="right")
    for rank in range(summary.ranks):
        workers = [
            (w, phases) for w, phases in sorted(summary.per_worker.items()) if w // per_rank == rank
        ]
        label = [str(rank)] if summary.ranks > 1 else []
        for worker, phases in workers:
            cells = (f"{1e3 * phases[p]:.2f}" for p in PHASES)
            table.add_row(*label, str(worker - rank * per_rank), *cells)
        if summary.ranks > 1:
            totals = (f"{1e3 * sum(ph[p] for _, ph in workers):.2f}" for p in PHASES)
            table.add_row(str(rank), "all", *totals, style="bold")
    return table


#: Chart formats by file extension; a name without one of these is drawn as PNG.
CHART_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def check_charts_available() -> None:
    """Charts need matplotlib, an extra: refused in one sentence before any work when it is
    missing."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ValueError(
            "--png draws with matplotlib, which is not installed; install it with "
            "pip install 'tilecc[plot]', or leave out --png."
        )


def chart_format(path: Path) -> str:
    """The format a chart's file name asks for (its extension), PNG otherwise."""
    return CHART_FORMATS.get(Path(path).suffix.lower(), "png")


def draw(summary: TraceSummary, path: Path) -> None:
    """A per-worker timeline (one bar per phase slice) above a load-balance chart (each worker's
    seconds stacked by phase)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    workers = sorted(summary.per_worker)
    if len(workers) > MAX_CHART_WORKERS:
        raise ValueError(
            f"the trace has {len(workers)} workers, more than a chart can show "
            f"({MAX_CHART_WORKERS}); run tilecc report without --png for its tables."
        )
    fig, (timeline, bars) = plt.subplots(
        2, 1, figsize=(11, 3 + 0.6 * len(workers)), gridspec_kw={"height_ratios": [2, 1]}
    )
    for phase in PHASES:
        by_worker: dict[int, list[tuple[float, float]]] = {}
        for worker, name, start, duration in summary.slices:
            if name == phase:
                by_worker.setdefault(worker, []).append((start, duration))
        for worker, spans in by_worker.items():
            timeline.broken_barh(spans, (worker - 0.4, 0.8), facecolors=COLOURS[phase])
    timeline.set_yticks(workers, [f"worker {w}" for w in workers])
    timeline.set_xlabel("seconds since the first traced event")
    timeline.set_title(f"worker timeline (policy {summary.policy})")
    bottom = [0.0] * len(workers)
    for phase in PHASES:
        heights = [summary.per_worker[w][phase] for w in workers]
        bars.bar([str(w) for w in workers], heights, bottom=bottom, color=COLOURS[phase])
        bottom = [b + h for b, h in zip(bottom, heights)]
    bars.set_xlabel("worker")
    bars.set_ylabel("seconds")
    bars.set_title("load balance")
    fig.legend(
        handles=[Patch(color=COLOURS[p], label=p) for p in PHASES],
        loc="upper right",
        ncol=len(PHASES),
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    from tilecc.files import replaced_atomically

    with replaced_atomically(path, "wb", what="chart") as f:
        fig.savefig(f, format=chart_format(path), dpi=110)
    plt.close(fig)


def run(trace: Path, png: Path | None, console: Console) -> None:
    from tilecc.files import check_outputs

    check_outputs({"trace": trace}, {"chart": png})
    if png is not None:
        check_charts_available()
    summary = read_trace(trace)
    console.print(decomposition_table(summary))
    console.print(idle_explained(summary), highlight=False)
    console.print(granularity_table(summary))
    console.print(worker_table(summary))
    if png is not None:
        draw(summary, png)
        console.print(f"charts written to {escape(str(png))}", highlight=False)
