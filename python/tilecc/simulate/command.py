"""``tilecc simulate``: print (and with --json write, with --png draw) a job's predicted
iteration on many ranks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from tilecc.files import replaced_atomically
from tilecc.log import show
from tilecc.options import RuntimeOptions
from tilecc.simulate import Prediction, load_platform, predict, ranks_on, works_of
from tilecc.simulate.engine import PHASES


@dataclass(frozen=True)
class SimulateOptions:
    """What to simulate the job on."""

    ranks: int
    ranks_per_node: int | None = None
    platform: str = "infiniband"
    latency_us: float | None = None  # between nodes; None: the platform's
    gbps: float | None = None
    png: Path | None = None


def show_simulation(
    cc: Any,
    sim: SimulateOptions,
    runtime: RuntimeOptions,
    json_path: Path | None,
    triples: bool = False,
) -> dict[str, Any]:
    """Simulate ``cc`` (a solver on a planning context) as ``sim`` says, with the policy,
    placement and WorkQ of ``runtime``; with ``triples``, its (T) step too."""
    platform = load_platform(sim.platform).with_options(
        inter_node_latency_us=sim.latency_us, inter_node_gbps=sim.gbps
    )
    nodes = ranks_on(platform, sim.ranks, sim.ranks_per_node).nodes
    works, step, host = works_of(cc, triples, nodes)
    p = predict(
        works,
        platform,
        sim.ranks,
        sim.ranks_per_node,
        cc.context.threads,
        runtime.policy,
        runtime.placement,
        runtime.workq,
        triples=step,
        host=host,
    )
    table = Table(title=f"simulated iteration: {p.ranks} ranks x {p.threads} threads on "
                  f"{platform.name}, nodes of {p.ranks_per_node}")  # fmt: skip
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row("iteration", f"{p.iteration_seconds:.4g} s")
    table.add_row("  between contractions", f"{p.host_seconds:.4g} s")
    table.add_row("on one rank", f"{p.one_rank_seconds:.4g} s")
    table.add_row("speed-up", f"{p.speedup:.2f}")
    for name in PHASES:
        total = sum(r[name] for r in p.decomposition)
        table.add_row(f"  {name} (all workers)", f"{total:.4g} s")
    for name, moved in p.bytes.items():
        table.add_row(f"  bytes {name.replace('_', '-')}", f"{moved / 2**20:.1f} MiB")
    if p.triples is None:
        table.add_row("(T)", "not in the method")
    else:
        table.add_row(f"(T) ({p.triples['kernel']})", f"{p.triples_seconds:.4g} s")
        for name in PHASES:
            total = sum(r[name] for r in p.triples["decomposition"])
            table.add_row(f"  {name} (all workers)", f"{total:.4g} s")
    show(table)
    curve = Table(title="strong scaling")
    curve.add_column("ranks", justify="right")
    curve.add_column("iteration s", justify="right")
    curve.add_column("speed-up", justify="right")
    triples_curve = dict(p.triples["scaling"]) if p.triples is not None else {}
    if triples_curve:
        curve.add_column("(T) s", justify="right")
        curve.add_column("(T) speed-up", justify="right")
    for ranks, seconds in p.scaling:
        row = [str(ranks), f"{seconds:.4g}", f"{p.one_rank_seconds / seconds:.2f}"]
        if triples_curve:
            t = triples_curve[ranks]
            row += [f"{t:.4g}", f"{triples_curve[1] / t:.2f}" if 1 in triples_curve else "–"]
        curve.add_row(*row)
    show(curve)
    results = p.as_dict()
    if json_path is not None:
        from tilecc.run import write_json_atomically

        write_json_atomically(json_path, results)
    if sim.png is not None:
        draw_scaling(p, sim.png)
    return results


def draw_scaling(p: Prediction, path: Path) -> None:
    """The strong-scaling curve against ideal, as PNG, SVG or PDF by the file's extension."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = [r for r, _ in p.scaling]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(ranks, [p.one_rank_seconds / s for _, s in p.scaling], "o-", label="simulated")
    ax.loglog(ranks, ranks, "--", color="grey", label="ideal")
    ax.set_xlabel("ranks")
    ax.set_ylabel("speed-up over one rank")
    ax.set_title(f"{p.policy}, {p.threads} threads per rank, nodes of {p.ranks_per_node}")
    ax.legend()
    fig.tight_layout()
    kind = path.suffix.lstrip(".").lower() or "png"
    with replaced_atomically(path, "w+b", what="plot") as f:
        fig.savefig(f, format=kind)
    plt.close(fig)
