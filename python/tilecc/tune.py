"""``tilecc tune``: the tile size, scheduling quantum and policy that run a job's CC iterations
fastest on this machine, found by running them (paper 000: the best choice differs per machine
and per problem), and kept as wisdom that ``tilecc run`` then uses.

Each configuration runs two iterations on the job's own orbitals and integrals: the first builds
the plans, the second is timed. Configurations are tried in order (the default first) until the
time budget is spent; then the default and the fastest few are timed once more, and the best is
chosen among those second timings. It is kept in the wisdom file under a key of this machine
(CPU, BLAS, tilecc version), the method and reference, and the problem's size class (orbital
counts rounded up to powers of two, and the point group): problems of one class share it.
"""

from __future__ import annotations

import itertools
import math
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tilecc import _core, wisdom

#: Units a duration may carry, in seconds.
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def duration(text: str) -> float:
    """An argparse type: seconds from "90s", "5m", "1.5h" or "300".

    >>> duration("5m"), duration("90s"), duration("2")
    (300.0, 90.0, 2.0)
    """
    import argparse

    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", text.lower())
    if match is None or match.group(2) not in _UNITS or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s, 5m or 1h, got {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass(frozen=True)
class Configuration:
    tile: int
    quantum: int
    policy: str


@dataclass
class Trial:
    """One configuration's timed iteration (or why it could not run)."""

    configuration: Configuration
    seconds: float = math.inf
    error: str | None = None
    #: The timed iteration's time decomposition (compute, permute, scheduling, idle, ...).
    parts: dict[str, float] = field(default_factory=dict)
    #: Timed again after the exploration (see confirm): the time kept is that second one.
    confirmed: bool = False


def size_class(method: str, reference: str, occupied: int, virtual: int, group: str) -> str:
    """The class of problems that share a tuned configuration.

    >>> size_class("ccsd", "rhf", 21, 103, "Cs")
    'ccsd rhf o32 v128 Cs'
    """

    def up(n: int) -> int:
        return 1 << max(0, n - 1).bit_length()

    return f"{method} {reference} o{up(occupied)} v{up(virtual)} {group}"


def key(problem_class: str) -> str:
    return f"{wisdom.machine_key()} | tuned | {problem_class}"


def configurations(
    tiles: Sequence[int], quanta: Sequence[int], policies: Sequence[str], first: Configuration
) -> Iterator[Configuration]:
    """``first`` (the default), then every other combination, tiles outermost."""
    yield first
    for tile, quantum, policy in itertools.product(tiles, quanta, policies):
        chosen = Configuration(tile, quantum, policy)
        if chosen != first:
            yield chosen


def explore(
    run_two_iterations: Callable[[Configuration], tuple[float, dict[str, float]]],
    candidates: Iterator[Configuration],
    budget_seconds: float,
    report: Callable[[Trial], None],
) -> list[Trial]:
    """Time each candidate (``run_two_iterations`` returns the second iteration's seconds and
    its time decomposition) until the budget is spent; the first always runs."""
    start = time.perf_counter()
    trials: list[Trial] = []
    for configuration in candidates:
        if trials and time.perf_counter() - start > budget_seconds:
            break
        trial = Trial(configuration)
        try:
            trial.seconds, trial.parts = run_two_iterations(configuration)
        except (ValueError, MemoryError) as exc:
            trial.error = str(exc)
        trials.append(trial)
        report(trial)
    return trials


#: Configurations timed again after the exploration, the first (the default) among them.
CONFIRMED = 4


def confirm(
    trials: Sequence[Trial],
    run_two_iterations: Callable[[Configuration], tuple[float, dict[str, float]]],
    report: Callable[[Trial], None],
) -> None:
    """Time the first configuration (the default, which also ran first, cold) and the fastest
    others again, and keep each one's second timing: the fastest of tens of single timings is
    partly the luckiest. The best is then chosen among these (see best)."""
    timed = [t for t in trials if math.isfinite(t.seconds)]
    if not timed:
        return
    fastest = sorted(timed[1:], key=lambda t: t.seconds)[: CONFIRMED - 1]
    for trial in [timed[0], *fastest]:
        try:
            trial.seconds, trial.parts = run_two_iterations(trial.configuration)
            trial.confirmed = True
        except (ValueError, MemoryError) as exc:
            trial.seconds, trial.error = math.inf, str(exc)
        report(trial)


def best(trials: Sequence[Trial]) -> Trial:
    """The fastest trial, among those confirmed when there are any."""
    confirmed = [t for t in trials if t.confirmed and math.isfinite(t.seconds)]
    return min(confirmed or trials, key=lambda t: t.seconds)


def keep(
    problem_class: str,
    trials: Sequence[Trial],
    features: dict[str, float],
    path: Path | None = None,
) -> None:
    """Add the best trial, every trial made and the problem's features (what tilecc.tune_model
    learns from) to the wisdom file (merged under its lock, so that two tuners running at once
    both keep theirs)."""
    winner = best(trials)
    entry = {
        **asdict(winner.configuration),
        "features": features,
        "seconds_per_iteration": winner.seconds,
        "tuned": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "trials": [describe(t) for t in trials if math.isfinite(t.seconds) or t.error],
    }
    wisdom.add_entry(path or wisdom.wisdom_path(), key(problem_class), entry)


def tuned(problem_class: str, path: Path | None = None) -> Configuration | None:
    """The configuration tuned for this machine and problem class, if any; an entry that is not
    a valid configuration is reported and ignored (the next tuning replaces it)."""
    path = path or wisdom.wisdom_path()
    entry = wisdom.entries(path).get(key(problem_class))
    if entry is None:
        return None
    try:
        found = Configuration(int(entry["tile"]), int(entry["quantum"]), str(entry["policy"]))
        if found.tile < 1 or found.quantum < 1 or found.policy not in _core.policy_names():
            raise ValueError(found)
    except (KeyError, TypeError, ValueError):
        warnings.warn(
            f"the wisdom file {path} holds an invalid tuned configuration for {problem_class}; "
            f"ignoring it (run tilecc tune again to replace it).",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return found


#: Tiles the cost model compares for a job that has not been tuned (larger ones cover a whole
#: irrep of most molecules' spaces and plan as these do).
PREDICTED_TILES = (8, 16, 24, 32, 48)
#: The cost model's choice replaces the default tile only when predicted this much faster per
#: iteration; closer than that, the model's error decides (benchmarks/HISTORY.md: it predicts
#: benzene/cc-pVDZ's tile sweep to within a few percent, uracil's less well).
PREDICTED_MARGIN = 0.05


def predicted_tile(predict: Callable[[int], float], default: int) -> tuple[int, dict[int, float]]:
    """The tile the cost model predicts fastest (``predict(tile)``: seconds of one iteration),
    unless the default is predicted within PREDICTED_MARGIN of it; and every prediction.

    >>> predicted_tile(lambda tile: {8: 3.0, 16: 2.0, 24: 1.5}.get(tile, 1.6), 16)[0]
    24
    >>> predicted_tile(lambda tile: 2.0 - tile / 1000, 16)[0]  # 48 predicted 1.6% faster
    16
    """
    seconds = {tile: predict(tile) for tile in sorted({default, *PREDICTED_TILES})}
    fastest = min(seconds, key=lambda tile: seconds[tile])
    if seconds[fastest] < (1 - PREDICTED_MARGIN) * seconds[default]:
        return fastest, seconds
    return default, seconds


def describe(trial: Trial) -> dict[str, Any]:
    return {
        **asdict(trial.configuration),
        "seconds": trial.seconds,
        "confirmed": trial.confirmed,
        "error": trial.error,
        "decomposition": trial.parts,
    }
