"""QCSchema: `--json` writes an AtomicResult that qcelemental validates, `--qcschema` runs an
AtomicInput, and QCEngine drives tilecc through its program registry; energies against PySCF
computed in the test, bad inputs in one sentence with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import qcengine
from pyscf import cc, gto, scf
from qcelemental.models import v1, v2

from tilecc.qcengine_harness import register
from tilecc.testing import run_cli

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"
HYDROXYL = v1.Molecule(
    symbols=["O", "H"],
    geometry=[0.0, 0.0, 0.0, 0.0, 0.0, 1.83],
    molecular_multiplicity=2,
    fix_com=True,
    fix_orientation=True,
)
TIGHT = {"conv_tol": 1e-11, "conv_tol_normt": 1e-8}


def one_sentence(run, words: str) -> None:
    text = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 2, text
    assert words in text and "Traceback" not in text, text


def pyscf_uccsd_t(frozen: int) -> tuple[float, float]:
    """PySCF's UHF-CCSD and UHF-CCSD(T) total energies of the hydroxyl radical (6-31G)."""
    mol = gto.M(atom="O 0 0 0; H 0 0 1.83", unit="bohr", basis="6-31g", spin=1, verbose=0)
    mf = scf.UHF(mol).run(conv_tol=1e-12)
    ref = cc.UCCSD(mf, frozen=frozen)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    ref.run()
    return ref.e_tot, ref.e_tot + ref.ccsd_t()


def write_input(path: Path, keywords: dict, method: str = "ccsd(t)", version: int = 1) -> Path:
    model = {"method": method, "basis": "6-31g"}
    if version == 1:
        data = v1.AtomicInput(molecule=HYDROXYL, driver="energy", model=model, keywords=keywords)
    else:
        spec = {"driver": "energy", "model": model, "keywords": keywords}
        data = v2.AtomicInput(molecule=HYDROXYL.convert_v(2), specification=spec)
    path.write_text(data.serialize("json"))
    return path


def test_json_is_an_atomic_result_with_pyscf_energies(tmp_path):
    out = tmp_path / "r.json"
    run = run_cli(
        "run", str(WATER), "--basis", "6-31g", "--method", "ccsd(t)", "--conv-tol", "1e-11",
        "--conv-tol-normt", "1e-8", "--json", str(out),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    result = v1.AtomicResult(**json.loads(out.read_text()))  # validates
    mol = gto.M(atom=str(WATER), basis="6-31g", verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    ref = cc.CCSD(mf, frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-8
    ref.run()
    e_t = ref.ccsd_t()
    p = result.properties
    assert result.success and result.provenance.creator == "tilecc"
    assert p.scf_total_energy == pytest.approx(mf.e_tot, abs=1e-9)
    assert p.ccsd_total_energy == pytest.approx(ref.e_tot, abs=1e-8)
    assert p.ccsd_prt_pr_total_energy == pytest.approx(ref.e_tot + e_t, abs=1e-8)
    assert result.return_result == p.ccsd_prt_pr_total_energy
    assert p.calcinfo_nbasis == mol.nao and p.calcinfo_natom == 3
    assert (p.calcinfo_nalpha, p.calcinfo_nbeta) == mol.nelec
    assert result.extras["e_tot"] == result.return_result
    assert {"timings", "runtime", "blocks", "flops", "communication", "io"} <= set(result.extras)


def test_a_result_that_did_not_converge_says_so(tmp_path):
    out = tmp_path / "r.json"
    run = run_cli("run", str(WATER), "--basis", "sto-3g", "--max-iter", "2", "--json", str(out))
    assert run.returncode == 3
    result = v1.AtomicResult(**json.loads(out.read_text()))
    assert not result.success and result.error.error_type == "convergence_error"
    assert "--max-iter" in result.error.error_message


@pytest.mark.parametrize("version", [1, 2])
def test_an_atomic_input_runs_with_its_keywords(tmp_path, version):
    """UHF-CCSD(T) with every electron correlated, from the input's keywords."""
    given = write_input(tmp_path / "in.json", {"frozen_core": False, **TIGHT}, version=version)
    out = tmp_path / "out.json"
    run = run_cli("run", "--qcschema", str(given), "--json", str(out), "--threads", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    result = v1.AtomicResult(**json.loads(out.read_text()))
    e_ccsd, e_ccsd_t = pyscf_uccsd_t(frozen=0)
    assert result.properties.ccsd_total_energy == pytest.approx(e_ccsd, abs=1e-8)
    assert result.return_result == pytest.approx(e_ccsd_t, abs=1e-8)
    assert result.keywords["frozen_core"] is False
    assert result.extras["reference"] == "uhf" and result.extras["frozen_orbitals"] == [[], []]
    assert result.molecule.molecular_multiplicity == 2


def test_qcengine_computes_with_tilecc():
    register()
    register()  # twice changes nothing
    given = v1.AtomicInput(
        molecule=HYDROXYL, driver="energy", model={"method": "ccsd(t)", "basis": "6-31g"},
        keywords=TIGHT,
    )  # fmt: skip
    result = qcengine.compute(given, "tilecc", task_config={"ncores": 2}, raise_error=True)
    _, e_ccsd_t = pyscf_uccsd_t(frozen=1)
    assert result.success and result.return_result == pytest.approx(e_ccsd_t, abs=1e-8)
    assert result.provenance.creator == "tilecc" and "normal termination" in result.stdout
    failed = qcengine.compute(
        {"molecule": HYDROXYL, "driver": "gradient", "model": {"method": "ccsd", "basis": "6-31g"}},
        "tilecc",
    )
    assert not failed.success and failed.error.error_type == "input_error"
    assert "energies only" in failed.error.error_message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "not a QCSchema AtomicInput"),
        ('{"molecule": {"symbols": ["H"]}}', "is not a valid QCSchema AtomicInput"),
    ],
)
def test_a_broken_input_is_one_sentence(tmp_path, text, words):
    given = tmp_path / "in.json"
    given.write_text(text)
    out = tmp_path / "out.json"
    one_sentence(run_cli("run", "--qcschema", str(given), "--json", str(out)), words)
    assert not out.exists()


@pytest.mark.parametrize(
    ("keywords", "method", "words"),
    [
        ({"colour": "red"}, "ccsd", "unknown keyword 'colour'"),
        ({"tile": "big"}, "ccsd", "keyword 'tile' must be a int"),
        ({"frozen_core": 1}, "ccsd", "keyword 'frozen_core' must be a bool"),
        ({}, "mp2", "unknown method 'mp2'"),
    ],
)
def test_what_tilecc_cannot_run_is_one_sentence(tmp_path, keywords, method, words):
    given = write_input(tmp_path / "in.json", keywords, method=method)
    out = tmp_path / "out.json"
    one_sentence(run_cli("run", "--qcschema", str(given), "--json", str(out)), words)
    assert not out.exists()


def test_other_drivers_and_ghost_atoms_are_refused(tmp_path):
    ghost = HYDROXYL.model_copy(update={"real": [True, False]})
    for molecule, driver, words in (
        (HYDROXYL, "gradient", "computes energies only"),
        (ghost, "energy", "ghost atoms"),
    ):
        given = tmp_path / "in.json"
        data = v1.AtomicInput(
            molecule=molecule, driver=driver, model={"method": "ccsd", "basis": "6-31g"}
        )
        given.write_text(data.serialize("json"))
        one_sentence(run_cli("run", "--qcschema", str(given)), words)


def test_the_input_and_the_command_line_do_not_both_give_the_molecule(tmp_path):
    given = write_input(tmp_path / "in.json", {})
    one_sentence(
        run_cli("run", str(WATER), "--qcschema", str(given), "--basis", "sto-3g"),
        "leave out MOLECULE, --basis",
    )
    one_sentence(run_cli("run", "--basis", "sto-3g"), "no molecule given")
    one_sentence(run_cli("run", str(WATER)), "no basis set given")
