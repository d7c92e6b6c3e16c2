"""`tilecc tune`: configurations explored within the budget, the best kept as wisdom under this
machine and the problem's class, and used by `tilecc run` (with the same energies); bad budgets,
policies and wisdom entries in one sentence or a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from tilecc import tune, tune_model, wisdom
from tilecc.testing import run_results

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"
JOB = ("--basis", "sto-3g", "--conv-tol", "1e-11", "--conv-tol-normt", "1e-8")


def tilecc(wisdom_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilecc", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "TILECC_WISDOM": str(wisdom_file)},
        check=False,
    )


def test_the_best_configuration_is_kept_and_used(tmp_path):
    kept = tmp_path / "wisdom.json"
    found = tmp_path / "tune.json"
    run = tilecc(
        kept, "tune", str(WATER), *JOB, "--budget", "1h", "--tiles", "2", "4",
        "--quanta", "1", "--policies", "counter", "steal", "--json", str(found),
        "--png", str(tmp_path / "map.svg"),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "map.svg").read_bytes().startswith(b"<?xml")
    assert "time by tile size" in " ".join(run.stdout.split())
    result = json.loads(found.read_text())
    assert all(t["decomposition"]["compute"] > 0 for t in result["trials"])
    trials = result["trials"]
    # The default first, then every combination not yet tried, all within an hour.
    assert (trials[0]["tile"], trials[0]["quantum"], trials[0]["policy"]) == (16, 1, "counter")
    assert len(trials) == 1 + 4
    confirmed = [t for t in trials if t["confirmed"]]
    assert trials[0]["confirmed"] and len(confirmed) == tune.CONFIRMED  # the first, 3 fastest
    assert result["best"]["seconds"] == min(t["seconds"] for t in confirmed)
    entry = wisdom.entries(kept)[tune.key(result["class"])]
    assert (entry["tile"], entry["policy"]) == (result["best"]["tile"], result["best"]["policy"])

    tuned = tmp_path / "tuned.json"
    assert tilecc(kept, "run", str(WATER), *JOB, "--json", str(tuned)).returncode == 0
    chosen = run_results(tuned)["configuration"]
    assert chosen["source"] == "tuned" and chosen["tile"] == result["best"]["tile"]
    assert chosen["policy"] == result["best"]["policy"]
    mine = tmp_path / "mine.json"
    given = ("--tile", "4", "--quantum", "1", "--policy", "counter")
    assert tilecc(kept, "run", str(WATER), *JOB, *given, "--json", str(mine)).returncode == 0
    assert run_results(mine)["configuration"]["source"] == "user"
    # A configuration changes the time, not the answer (beyond the convergence threshold: the
    # iterations take another path through DIIS at another tile size).
    assert run_results(mine)["e_tot"] == pytest.approx(run_results(tuned)["e_tot"], abs=1e-8)


def test_exploration_stops_when_the_budget_is_spent():
    def slow(_: tune.Configuration) -> tuple[float, dict[str, float]]:
        time.sleep(0.03)
        return 1.0, {}

    candidates = tune.configurations(
        [2, 4, 8], [1], ["counter"], tune.Configuration(16, 1, "counter")
    )
    trials = tune.explore(slow, candidates, budget_seconds=0.05, report=lambda t: None)
    assert len(trials) == 2  # the first always; the second began before the budget ran out


def test_an_invalid_tuned_entry_is_ignored_with_a_warning(tmp_path):
    path = tmp_path / "wisdom.json"
    problem = tune.size_class("ccsd", "rhf", 4, 2, "C2v")
    wisdom.add_entry(path, tune.key(problem), {"tile": -3, "quantum": 1, "policy": "counter"})
    with pytest.warns(RuntimeWarning, match="invalid tuned configuration"):
        assert tune.tuned(problem, path) is None
    wisdom.add_entry(path, tune.key(problem), {"tile": 8, "quantum": 2, "policy": "steal"})
    assert tune.tuned(problem, path) == tune.Configuration(8, 2, "steal")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--budget", "soon"), "expected a duration such as 90s, 5m or 1h, got 'soon'"),
        (("--budget", "0s"), "expected a duration"),
        (("--policies", "fast"), "unknown policy 'fast' in --policies"),
        (("--tiles", "0"), "--tiles"),
    ],
)
def test_bad_tuning_options_are_one_sentence(tmp_path, args, words):
    run = tilecc(tmp_path / "w.json", "tune", str(WATER), "--basis", "sto-3g", *args)
    text = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 2 and words in text and "Traceback" not in text, text


def synthetic(virtual: int, best_tile: int) -> tune_model.TunedProblem:
    """A problem whose iterations run fastest at ``best_tile`` (1.5x slower elsewhere)."""
    seconds = {
        tune.Configuration(tile, 1, "counter"): 1.0 if tile == best_tile else 1.5
        for tile in (8, 16, 32)
    }
    features = {"occupied": 10.0, "virtual": float(virtual), "irreps": 4.0, "threads": 2.0}
    return tune_model.TunedProblem(features, seconds)


def test_the_model_predicts_for_problems_left_out():
    # Small problems run best at tile 8, large ones at tile 32: a tree splits on the virtuals.
    problems = [synthetic(v, 8) for v in (20, 30, 40)] + [synthetic(v, 32) for v in (300, 400, 500)]
    assert tune_model.left_out_ratios(problems) == [1.0] * 6
    model = tune_model.fitted(problems)
    assert model is not None
    features = {"occupied": 10.0, "virtual": 450.0, "irreps": 4.0, "threads": 2.0}
    assert model.choose(features).tile == 32
    assert tune_model.fitted(problems[:2]) is None  # too few to predict from


def test_an_untuned_problem_takes_the_predicted_configuration(tmp_path):
    kept = tmp_path / "wisdom.json"
    for k, problem in enumerate([synthetic(v, 8) for v in (10, 20, 30, 40)]):
        trials = [{**asdict(c), "seconds": s, "error": None} for c, s in problem.seconds.items()]
        entry = {"tile": 8, "quantum": 1, "policy": "counter", "features": problem.features,
                 "trials": trials}  # fmt: skip
        wisdom.add_entry(kept, tune.key(f"synthetic {k}"), entry)
    results = tmp_path / "r.json"
    assert tilecc(kept, "run", str(WATER), *JOB, "--json", str(results)).returncode == 0
    chosen = run_results(results)["configuration"]
    assert (chosen["source"], chosen["tile"]) == ("predicted", 8)


def test_an_untuned_problem_takes_the_tile_the_cost_model_predicts(tmp_path):
    # Nothing tuned on this machine: each candidate tile's iteration is predicted from its plans,
    # and the default tile is kept unless another is predicted at least 5% faster.
    results = tmp_path / "r.json"
    run = tilecc(tmp_path / "wisdom.json", "run", str(WATER), "--basis", "cc-pvdz", "--json",
                 str(results))  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    chosen = run_results(results)["configuration"]
    assert (chosen["source"], chosen["predicted_by"]) == ("predicted", "cost model")
    seconds = {int(t): s for t, s in chosen["predicted_iteration_seconds"].items()}
    assert set(seconds) == set(tune.PREDICTED_TILES) | {16}
    fastest = min(seconds, key=lambda t: seconds[t])
    expected = fastest if seconds[fastest] < 0.95 * seconds[16] else 16
    assert chosen["tile"] == expected
    assert "(predicted by the cost model)" in " ".join(run.stdout.split())
