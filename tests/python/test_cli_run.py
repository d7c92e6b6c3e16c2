"""`tilecc run`: energies against PySCF computed in the test, JSON output, and every bad input
ending in one sentence and a non-zero exit code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pyscf import cc, gto, scf

from tilecc.testing import run_cli, run_results

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"


tilecc = run_cli


def run_water(tmp_path: Path, method: str, *options: str) -> dict:
    """`tilecc run` on the bundled water (6-31G) with --json; its result, after a clean exit."""
    out = tmp_path / "water.json"
    run = tilecc(
        "run", str(WATER), "--basis", "6-31g", "--method", method, *options, "--json", str(out)
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run_results(out)


def water_rhf():
    mol = gto.M(atom=str(WATER), basis="6-31g", symmetry=True, verbose=0)
    return scf.RHF(mol).run(conv_tol=1e-12)


def pyscf_water_ccsd():
    """PySCF's RCCSD on the bundled water (6-31G, frozen core), tightly converged."""
    ref = cc.CCSD(water_rhf(), frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    return ref.run()


def test_ccsd_json_matches_pyscf(tmp_path):
    result = run_water(tmp_path, "ccsd", "--tile", "4", "--threads", "2", "--conv-tol", "1e-10")
    ref = pyscf_water_ccsd()
    assert result["e_tot"] == pytest.approx(ref.e_tot, abs=1e-8)
    assert result["converged"] is True and result["e_t"] is None
    for key in (
        "e_scf",
        "e_corr",
        "iterations",
        "method",
        "basis",
        "reference",
        "tile",
        "threads",
        "symmetry",
        "timings",
        "blocks",
        "flops",
    ):
        assert key in result
    assert result["flops"]["executed"] < result["flops"]["dense"]


def test_ccsd_t_json_matches_pyscf(tmp_path):
    result = run_water(tmp_path, "ccsd(t)", "--conv-tol", "1e-11", "--conv-tol-normt", "1e-8")
    ref = pyscf_water_ccsd()
    e_t = ref.ccsd_t()
    assert result["e_t"] == pytest.approx(e_t, abs=1e-9)
    assert result["e_tot"] == pytest.approx(ref.e_tot + e_t, abs=1e-8)
    assert "triples" in result["timings"]


def test_a_run_ends_with_lines_a_chemist_greps_for(tmp_path):
    results = tmp_path / "r.json"
    run = run_cli(
        "run", str(WATER), "--basis", "6-31g", "--method", "ccsd(t)", "--json", str(results)
    )
    assert run.returncode == 0, run.stdout
    data = run_results(results)
    lines = {
        k.strip(): v for k, _, v in (line.partition(" = ") for line in run.stdout.splitlines()) if v
    }
    assert float(lines["CCSD(T) total energy"]) == pytest.approx(data["e_tot"], abs=1e-11)
    assert float(lines["CCSD total energy"]) == pytest.approx(data["e_cc_tot"], abs=1e-11)
    assert float(lines["(T) correction energy"]) == pytest.approx(data["e_t"], abs=1e-11)
    assert run.stdout.rstrip().endswith("tilecc: normal termination")
    # The runtime's own accounting waits for --timings; the JSON results always hold it.
    assert "where the time went" not in run.stdout and data["runtime"]["total"]


def test_ccd_matches_pyscf_equations_with_singles_held_at_zero(tmp_path):
    result = run_water(tmp_path, "ccd", "--no-symmetry", "--conv-tol", "1e-10")
    mf = water_rhf()
    ref = cc.GCCSD(scf.addons.convert_to_ghf(mf), frozen=2)
    eris = ref.ao2mo()
    _, t1, t2 = ref.init_amps(eris)
    t1 = np.zeros_like(t1)
    e_old = 0.0
    for _ in range(200):
        _, t2 = ref.update_amps(t1, t2, eris)
        e = ref.energy(t1, t2, eris)
        if abs(e - e_old) < 1e-12:
            break
        e_old = e
    assert result["e_corr"] == pytest.approx(e, abs=1e-8)


def test_non_convergence_is_reported_and_results_kept(tmp_path):
    out = tmp_path / "partial.json"
    run = tilecc("run", str(WATER), "--basis", "sto-3g", "--max-iter", "2", "--json", str(out))
    assert run.returncode == 3
    assert "did not converge in 2 iterations" in run.stdout
    result = run_results(out)
    assert result["converged"] is False and result["iterations"] == 2


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "mol.xyz"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("xyz", "args", "message"),
    [
        ("2\n\nH 0 0 0\nH 0 0 x\n", [], "line 4: coordinates must be numbers"),
        ("2\n\nH 0 0 0\nH 0 0\n", [], "line 4: expected 'symbol x y z'"),
        ("two\n\nH 0 0 0\n", [], "line 1: expected the number of atoms"),
        ("3\n\nH 0 0 0\nH 0 0 0.7\n", [], "announces 3 atoms but the file lists 2"),
        ("1\n\nQq 0 0 0\n", [], "line 3: 'Qq' is not a chemical element"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--basis", "no-such-basis"], "basis 'no-such-basis'"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--spin", "1"], "2 electrons cannot have 2S = 1"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--charge", "2"], "leaves 0 electrons"),
        ("1\n\nLi 0 0 0\n", ["--spin", "1", "--reference", "rhf"], "RHF describes closed shells"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--method", "ccsdt"], "unknown method 'ccsdt'"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--tile", "0"], "expected a number from 1 to"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--memory-budget", "lots"], "expected a size such as"),
        (
            "2\n\nH 0 0 0\nH 0 0 0.74\n",
            ["--json", "/nonexistent/dir/out.json"],
            "folder /nonexistent/dir does not exist",
        ),
    ],
)
def test_bad_input(tmp_path, xyz, args, message):
    path = write(tmp_path, xyz)
    base = ["--basis", "sto-3g"] if "--basis" not in args else []
    run = tilecc("run", path, *base, *args)
    assert run.returncode != 0
    assert message in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr


def test_missing_molecule_file(tmp_path):
    run = tilecc("run", str(tmp_path / "absent.xyz"), "--basis", "sto-3g")
    assert run.returncode == 2
    assert "cannot read the molecule file" in run.stdout


def test_the_memory_budget_holds_or_stops_the_job_before_it_allocates(tmp_path):
    # Within a budget the job runs and reports its tensors' high-water mark; under one too small
    # for them, with the memory store chosen (else it goes out of core, see test_out_of_core),
    # it stops with one sentence, exit 2, and writes nothing.
    within = run_water(tmp_path, "ccsd", "--memory-budget", "64MiB")
    memory = within["memory"]
    assert memory["limit_bytes"] == 64 * 2**20
    assert 0 < memory["high_water_bytes"] <= memory["limit_bytes"]
    out = tmp_path / "over.json"
    run = tilecc(
        "run", str(WATER), "--basis", "6-31g", "--memory-budget", "20KB", "--store", "memory",
        "--json", str(out),
    )  # fmt: skip
    text = " ".join(run.stdout.split())
    assert run.returncode == 2, run.stdout + run.stderr
    assert text.count("over the memory budget of 19.5 KiB") == 1 and "Traceback" not in text
    assert "raise the memory budget" in text
    assert not out.exists()


def test_the_scratch_directory_comes_from_tilecc_scratch(tmp_path, monkeypatch):
    """$TILECC_SCRATCH names the disk store's directory (and nothing else): the files go there
    while the job runs, and the energy is the in-core one."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TILECC_SCRATCH", str(scratch))
    on_disk = run_water(tmp_path, "ccsd", "--store", "disk")
    monkeypatch.delenv("TILECC_SCRATCH")
    (tmp_path / "core").mkdir()
    in_core = run_water(tmp_path / "core", "ccsd")
    assert on_disk["e_tot"] == pytest.approx(in_core["e_tot"], abs=1e-10)
    assert list(scratch.iterdir()) == []  # the store's files went with the job


def test_workers_scratch_is_counted_pooled_or_per_request(tmp_path, monkeypatch):
    # On one worker the requests are the same in both modes: the same high-water mark, the same
    # energy; pooled buffers allocate only to grow, so far fewer times than one per request.
    results = {}
    for mode in ("pooled", "per-task"):
        monkeypatch.setenv("TILECC_SCRATCH_ALLOCATION", mode)
        folder = tmp_path / mode
        folder.mkdir()
        results[mode] = run_water(folder, "ccsd", "--threads", "1")
    pooled, per_task = (results[m]["memory"] for m in ("pooled", "per-task"))
    assert (pooled["scratch_mode"], per_task["scratch_mode"]) == ("pooled", "per-task")
    (mine,), (theirs,) = pooled["workers"], per_task["workers"]
    assert mine["high_water_bytes"] == theirs["high_water_bytes"] > 0
    assert 0 < 20 * mine["allocations"] < theirs["allocations"]
    for worker in (mine, theirs):  # each buffer keeps its last allocation; at most six buffers
        assert 0 <= worker["allocations"] - worker["frees"] <= 6
    assert results["pooled"]["e_tot"] == pytest.approx(results["per-task"]["e_tot"], abs=1e-12)
    monkeypatch.setenv("TILECC_SCRATCH_ALLOCATION", "pool")
    run = tilecc("run", str(WATER), "--basis", "6-31g")
    assert run.returncode == 2 and "set it to 'pooled'" in " ".join(run.stdout.split())
