"""A configuration for a problem not yet tuned, predicted from those that were (paper 001's
autotuning): a shallow regression tree (scikit-learn) over the problem's features and the
configuration's parameters, fitted to every trial of every problem ``tilecc tune`` explored on
this machine, predicts each configuration's time relative to its problem's best; the
configuration predicted fastest is the choice.

Its accuracy is measured by leaving each tuned problem out in turn: the tree fitted to the others
picks among the configurations measured on the one left out, and the pick's measured time is set
against that problem's best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tilecc import _core
from tilecc.tune import Configuration

#: What the tree knows of a problem.
FEATURES = ("occupied", "virtual", "irreps", "threads")
#: Problems needed before the tree predicts anything.
MIN_PROBLEMS = 3
#: The tree's depth and leaf size: shallow, as the paper's, so that a few problems fit it.
DEPTH, LEAF = 4, 2


@dataclass
class TunedProblem:
    """One problem's features and the measured seconds per iteration of each configuration."""

    features: dict[str, float]
    seconds: dict[Configuration, float]

    @property
    def best(self) -> float:
        return min(self.seconds.values())


def problems_of(entries: dict[str, Any], machine: str) -> list[TunedProblem]:
    """The tuned problems of this machine in the wisdom file's entries (entries without
    features or trials, or with broken ones, are left out)."""
    found = []
    for key, entry in entries.items():
        if not key.startswith(f"{machine} | tuned | ") or not isinstance(entry, dict):
            continue
        try:
            features = {name: float(entry["features"][name]) for name in FEATURES}
            seconds = {
                Configuration(int(t["tile"]), int(t["quantum"]), str(t["policy"])): float(
                    t["seconds"]
                )
                for t in entry["trials"]
                if t.get("error") is None and math.isfinite(float(t["seconds"]))
            }
        except (KeyError, TypeError, ValueError):
            continue
        if seconds:
            found.append(TunedProblem(features, seconds))
    return found


def _row(features: dict[str, float], c: Configuration) -> list[float]:
    policies = _core.policy_names()
    policy = float(policies.index(c.policy)) if c.policy in policies else -1.0
    return [*(features[name] for name in FEATURES), float(c.tile), float(c.quantum), policy]


class Model:
    """The regression tree, and the configurations it chooses among (every one measured)."""

    def __init__(self, problems: Sequence[TunedProblem]) -> None:
        from sklearn.tree import DecisionTreeRegressor

        rows, targets = [], []
        for p in problems:
            for c, seconds in p.seconds.items():
                rows.append(_row(p.features, c))
                targets.append(seconds / p.best)
        self.tree = DecisionTreeRegressor(max_depth=DEPTH, min_samples_leaf=LEAF, random_state=0)
        self.tree.fit(rows, targets)
        self.candidates = sorted({c for p in problems for c in p.seconds}, key=str)

    def choose(
        self, features: dict[str, float], among: Sequence[Configuration] | None = None
    ) -> Configuration:
        """The configuration predicted fastest for a problem of these features (among
        ``among``, else every configuration measured); ties go to the first in order."""
        options = list(among) if among is not None else self.candidates
        predicted = self.tree.predict([_row(features, c) for c in options])
        return options[int(min(range(len(options)), key=lambda k: predicted[k]))]


def fitted(problems: Sequence[TunedProblem]) -> Model | None:
    """The model of these problems, or None with fewer than MIN_PROBLEMS (or no scikit-learn)."""
    if len(problems) < MIN_PROBLEMS:
        return None
    try:
        return Model(problems)
    except ImportError:
        return None


def left_out_ratios(problems: Sequence[TunedProblem]) -> list[float]:
    """For each problem, the measured time of the configuration a tree fitted to the other
    problems picks for it, over that problem's best (1.0: it picked the best)."""
    ratios = []
    for k, held in enumerate(problems):
        others = [p for j, p in enumerate(problems) if j != k]
        model = fitted(others)
        if model is None:
            continue
        pick = model.choose(held.features, among=list(held.seconds))
        ratios.append(held.seconds[pick] / held.best)
    return ratios
