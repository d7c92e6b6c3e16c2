"""``tilecc tune``'s output: each configuration's timed iteration as it is measured, the table of
them all, and the best one, kept as wisdom (see tilecc.tune)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from tilecc import mpi, tune
from tilecc.cc import IterationRecord
from tilecc.log import LOGGER, show

#: Explored unless the command line says otherwise.
TILES = (8, 16, 24, 32)
QUANTA = (1, 4)
POLICIES = ("counter", "static-lpt", "steal", "buckets")


@dataclass
class TuneOptions:
    budget_seconds: float = 300.0
    tiles: list[int] = field(default_factory=lambda: list(TILES))
    quanta: list[int] = field(default_factory=lambda: list(QUANTA))
    policies: list[str] = field(default_factory=lambda: list(POLICIES))
    json: Path | None = None
    png: Path | None = None


def show_tuning(
    solver: Callable[..., Any], options: TuneOptions, configuration: dict[str, Any]
) -> dict[str, Any]:
    """Explore, starting from what ``tilecc run`` would use now (``configuration``), keep the
    best, and report; ``solver(**overrides)`` makes the job's CC solver."""
    problem = configuration["class"]
    start = tune.Configuration(
        configuration["tile"], configuration["quantum"], configuration["policy"]
    )

    def two_iterations(c: tune.Configuration) -> tuple[float, dict[str, float]]:
        seconds: list[float] = []
        before: dict[str, float] = {}

        def record(rec: IterationRecord) -> None:
            seconds.append(rec.seconds)
            if rec.cycle == 1:  # the timed iteration's decomposition is what follows
                before.update(cc.context.decomposition().as_dict())

        cc = solver(
            tile=c.tile,
            quantum=c.quantum,
            policy=c.policy,
            max_cycle=2,
            callback=record,
            checkpoint=None,
            restart=False,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*did not converge", category=RuntimeWarning)
            cc.run()
        after = cc.context.decomposition().as_dict()
        parts = {name: max(0.0, value - before.get(name, 0.0)) for name, value in after.items()}
        return seconds[-1], parts  # the second iteration: the first also built the plans

    def report(trial: tune.Trial) -> None:
        c = trial.configuration
        what = f"{trial.seconds:.3f} s per iteration" if trial.error is None else trial.error
        LOGGER.info(f"  tile {c.tile:3d}  quantum {c.quantum:3d}  {c.policy:12s} {what}")

    LOGGER.info(
        f"tuning {problem} for up to {options.budget_seconds:.0f} s: two iterations per "
        f"configuration, the second timed"
    )
    candidates = tune.configurations(options.tiles, options.quanta, options.policies, start)
    trials = tune.explore(two_iterations, candidates, options.budget_seconds, report)
    LOGGER.info(f"timing the first and the {tune.CONFIRMED - 1} fastest others again:")
    tune.confirm(trials, two_iterations, report)
    timed = [t for t in trials if math.isfinite(t.seconds)]
    if not timed:
        raise ValueError(
            f"no configuration could run ({trials[0].error}); check the job's options."
        )
    winner = tune.best(timed)
    table = Table(title=f"tilecc tune: {problem}")
    for column in ("tile", "quantum", "policy", "s / iteration", "vs. first", "timed"):
        table.add_column(column, justify="right")
    for t in sorted(timed, key=lambda t: (not t.confirmed, t.seconds)):
        c = t.configuration
        table.add_row(
            str(c.tile),
            str(c.quantum),
            c.policy,
            f"{t.seconds:.3f}",
            f"{t.seconds / timed[0].seconds:.2f}",
            "twice" if t.confirmed else "once",
        )
    show(table)
    show(decomposition_by_tile(timed))
    if mpi.world().leader:
        tune.keep(problem, trials, configuration["features"])
        if options.png is not None:
            draw_map(timed, options.png, problem)
    c = winner.configuration
    LOGGER.info(
        f"best: tile {c.tile}, quantum {c.quantum}, policy {c.policy}, {winner.seconds:.3f} s per "
        f"iteration ({timed[0].seconds / winner.seconds:.2f}x the first, {len(timed)} "
        f"configurations); kept as wisdom: tilecc run uses it for {problem} on this machine."
    )
    results = {
        "class": problem,
        "best": tune.describe(winner),
        "trials": [tune.describe(t) for t in trials],
        "model": model_accuracy(),
    }
    if options.json is not None and mpi.world().leader:
        from tilecc.run import write_json_atomically

        write_json_atomically(options.json, results)
    return results


def decomposition_by_tile(trials: list[tune.Trial]) -> Table:
    """The timed iteration's decomposition at each tile size, for its fastest quantum and policy
    (paper 000's time decomposition against tile size)."""
    fastest: dict[int, tune.Trial] = {}
    for t in trials:
        tile = t.configuration.tile
        if tile not in fastest or t.seconds < fastest[tile].seconds:
            fastest[tile] = t
    names = list(next(iter(fastest.values())).parts)
    table = Table(title="the timed iteration's time by tile size, ms (fastest quantum and policy)")
    table.add_column("tile", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for tile in sorted(fastest):
        parts = fastest[tile].parts
        table.add_row(str(tile), *(f"{1e3 * parts.get(n, 0.0):.1f}" for n in names))
    return table


def draw_map(trials: list[tune.Trial], path: Path, problem: str) -> None:
    """Seconds per iteration over tile x quantum (each cell its fastest policy), as a heat map in
    the format the file's extension names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tilecc.files import replaced_atomically
    from tilecc.report import chart_format

    tiles = sorted({t.configuration.tile for t in trials})
    quanta = sorted({t.configuration.quantum for t in trials})
    grid = [[math.nan] * len(tiles) for _ in quanta]
    for t in trials:
        q, x = quanta.index(t.configuration.quantum), tiles.index(t.configuration.tile)
        grid[q][x] = t.seconds if math.isnan(grid[q][x]) else min(grid[q][x], t.seconds)
    fig, ax = plt.subplots(figsize=(1.2 * len(tiles) + 2, 0.8 * len(quanta) + 1.5))
    image = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(tiles)), [str(t) for t in tiles])
    ax.set_yticks(range(len(quanta)), [str(q) for q in quanta])
    ax.set_xlabel("tile")
    ax.set_ylabel("quantum")
    ax.set_title(f"s per iteration: {problem}")
    for q in range(len(quanta)):
        for x in range(len(tiles)):
            if not math.isnan(grid[q][x]):
                ax.text(x, q, f"{grid[q][x]:.3g}", ha="center", va="center", color="w")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    with replaced_atomically(path, "wb", what="chart") as f:
        fig.savefig(f, format=chart_format(path), dpi=110)
    plt.close(fig)


def model_accuracy() -> dict[str, Any] | None:
    """How well the tuning model (tilecc.tune_model) of every problem tuned on this machine
    chooses for one it has not seen: each left out in turn. None with too few problems."""
    from tilecc import tune_model, wisdom

    problems = tune_model.problems_of(wisdom.entries(wisdom.wisdom_path()), wisdom.machine_key())
    ratios = tune_model.left_out_ratios(problems)
    if not ratios:
        LOGGER.info(
            f"tuning model: {len(problems)} problems tuned on this machine; it predicts "
            f"configurations for untuned ones from {tune_model.MIN_PROBLEMS}, and is checked from "
            f"{tune_model.MIN_PROBLEMS + 1}."
        )
        return None
    within = sum(r <= 1.10 for r in ratios)
    LOGGER.info(
        f"tuning model over {len(problems)} problems, each left out in turn: its pick was within "
        f"10% of the best on {within} of {len(ratios)} (mean {sum(ratios) / len(ratios):.2f}x "
        f"the best, worst {max(ratios):.2f}x)."
    )
    return {
        "problems": len(problems),
        "left_out_ratios": ratios,
        "within_10_percent": within / len(ratios),
    }
