"""The log of `tilecc run`: what a chemist reads (banner, orbital counts, MP2, iterations, (T)
progress, final lines) on the terminal and in the -o file, at the -v / -q levels; the MP2
energy against PySCF computed in the test."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from pyscf import gto, mp, scf

from tilecc.testing import run_cli

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"


def words(text: str) -> str:
    return " ".join(text.split())


def test_the_log_file_holds_the_whole_story(tmp_path):
    log = tmp_path / "water.log"
    run = run_cli(
        "run", str(WATER), "--basis", "cc-pvdz", "--method", "ccsd(t)", "-o", str(log),
        "--conv-tol", "1e-10", "--scf-conv", "1e-12",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    text = log.read_text()
    assert "\x1b[" not in text  # plain text, no terminal colours
    assert re.search(r"^tilecc \S+ \(PySCF \S+, NumPy \S+, MPI: .*\) on ", text, re.M)
    assert "2 threads" in words(text) or "threads" in text
    mol = gto.M(atom=str(WATER), basis="cc-pvdz", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    # Orbital counts per irrep: frozen + occupied + virtual make each irrep's orbitals.
    counts = r"1 frozen \((.*?)\), 4 active occupied \((.*?)\), 19 virtual \((.*?)\)"
    found = re.search(r"orbitals \[(.*?)\]: " + counts, text)
    assert found is not None, text
    names = found.group(1).split()
    assert names == list(mol.irrep_name)
    per_irrep = [sum(map(int, x)) for x in zip(*(found.group(k).split() for k in (2, 3, 4)))]
    assert per_irrep == [c.shape[1] for c in mol.symm_orb]
    e_mp2 = mp.MP2(mf, frozen=1).kernel()[0]
    shown = re.search(r"MP2 correlation energy = (\S+), MP2 total energy = (\S+)", text)
    assert shown is not None
    assert float(shown.group(1)) == pytest.approx(e_mp2, abs=1e-9)
    assert float(shown.group(2)) == pytest.approx(mf.e_tot + e_mp2, abs=1e-9)
    assert (
        text.index("MP2 correlation") < text.index("cycle  E(corr)") < text.index("CCSD(T) total")
    )
    assert re.search(r"\(T\) \d+/\d+ first occupied indices", text)  # progress, as lines
    assert text.rstrip().endswith("tilecc: normal termination")
    # The terminal (here a pipe) shows the same log.
    assert words(run.stdout).endswith("tilecc: normal termination")
    assert "MP2 correlation energy" in run.stdout


def test_quiet_keeps_the_final_lines_and_verbose_adds_the_runtime(tmp_path):
    quiet = run_cli("run", str(WATER), "--basis", "sto-3g", "-q")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert quiet.stdout.splitlines()[0].startswith("RHF total energy = ")
    assert "E(corr)" not in quiet.stdout and "tilecc 0" not in quiet.stdout
    assert quiet.stdout.rstrip().endswith("tilecc: normal termination")
    verbose = run_cli("run", str(WATER), "--basis", "sto-3g", "-v")
    assert "where the time went" in verbose.stdout
    plain = run_cli("run", str(WATER), "--basis", "sto-3g", "--no-symmetry")
    assert "where the time went" not in plain.stdout and "E(corr)" in plain.stdout
    assert "orbitals: 1 frozen, 4 active occupied, 2 virtual" in words(plain.stdout)


def test_quiet_still_reports_a_failure(tmp_path):
    run = run_cli("run", str(WATER), "--basis", "sto-3g", "--max-iter", "2", "-q")
    assert run.returncode == 3
    assert "did not converge" in words(run.stdout) and "E(corr)" not in run.stdout


def test_bad_log_options_are_one_sentence(tmp_path):
    both = run_cli("run", str(WATER), "--basis", "sto-3g", "-v", "-q")
    assert both.returncode == 2 and "give one of them" in words(both.stdout + both.stderr)
    molecule = tmp_path / "water.xyz"
    molecule.write_bytes(WATER.read_bytes())
    clash = run_cli("run", str(molecule), "--basis", "sto-3g", "-o", str(molecule))
    assert clash.returncode == 2 and "is the molecule file" in words(clash.stdout)
    assert molecule.read_bytes() == WATER.read_bytes()  # never opened for writing
    folder = run_cli("run", str(WATER), "--basis", "sto-3g", "-o", str(tmp_path))
    assert folder.returncode == 2 and "Traceback" not in folder.stdout + folder.stderr


def test_the_trace_shows_the_whole_job(tmp_path):
    trace = tmp_path / "t.json.gz"
    run = run_cli(
        "run", str(WATER), "--basis", "sto-3g", "--method", "ccsd(t)", "--trace", str(trace)
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    job = [e for e in events if e.get("cat") == "job"]
    names = [e["name"] for e in job]
    iterations = sum(name.startswith("iteration ") for name in names)
    assert names == [
        "SCF",
        "integrals",
        *(f"iteration {k}" for k in range(1, iterations + 1)),
        "(T)",
    ]
    starts = [e["ts"] for e in job]
    assert starts == sorted(starts) and all(e["dur"] > 0 for e in job)
    # The iterations hold the engine's contractions.
    runs = [e for e in events if e.get("cat") == "run"]
    first, last = job[2], job[1 + iterations]
    inside = [r for r in runs if first["ts"] <= r["ts"] <= last["ts"] + last["dur"]]
    assert inside
    report = run_cli("report", str(trace))
    assert report.returncode == 0, report.stdout + report.stderr
