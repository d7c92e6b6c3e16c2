"""The inputs chemists write, through ``tilecc run``: SCF that converges where DIIS alone does
not, the SCF controls, effective core potentials, charge and multiplicity from the XYZ comment
line, and bad input of each kind ending in one sentence with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyscf import cc, gto, scf
from pyscf.data import elements

from tilecc.host.scf import SCFOptions, run_scf
from tilecc.testing import run_cli, run_results

WATER = "3\n{comment}\nO 0 0 0.1173\nH 0 0.7572 -0.4692\nH 0 -0.7572 -0.4692\n"


def xyz(tmp_path: Path, text: str, name: str = "mol.xyz") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_uhf_that_diis_does_not_converge_goes_second_order():
    """Psi4's cc9 CN radical: PySCF's DIIS stalls; the second-order solver reaches Psi4's UHF
    energy (-92.21277694979756 at 1.175 angstrom, Psi4's bohr constant 0.52917721067)."""
    mol = gto.M(
        atom=f"C 0 0 0; N 0 0 {1.175 / 0.52917721067}",
        unit="bohr",
        basis="cc-pvdz",
        spin=1,
        symmetry="C2v",
        verbose=0,
    )
    mf, report = run_scf(mol, "uhf", SCFOptions(conv_tol=1e-12))
    assert mf.converged and "second-order" in report.strategy
    assert mf.e_tot == pytest.approx(-92.21277694979756, abs=1e-8)


def test_unstable_solution_is_left_for_a_minimum():
    """Stretched H2: UHF from the closed-shell guess lands on the RHF saddle point; the stability
    analysis finds the broken-symmetry minimum below it."""
    mol = gto.M(atom="H 0 0 0; H 0 0 2.5", basis="6-31g", verbose=0)
    rhf = scf.RHF(mol).run(conv_tol=1e-10).e_tot
    mf, report = run_scf(mol, "uhf")
    assert report.stable and report.notes and mf.e_tot < rhf - 0.1
    mf, report = run_scf(mol, "uhf", SCFOptions(stability=False))
    assert report.stable is None and mf.e_tot == pytest.approx(rhf, abs=1e-8)


def test_linear_open_shell_runs_in_its_d2h_subgroup(tmp_path):
    """OH's 2Pi state: in PySCF's Coov the UHF never converges; in C2v (as Psi4 and NWChem run
    linear molecules) it does, and UHF-CCSD agrees with PySCF's UCCSD on that reference."""
    results = tmp_path / "r.json"
    path = xyz(tmp_path, "2\n0 2\nO 0 0 0\nH 0 0 0.97\n")
    run = run_cli("run", path, "--basis", "cc-pvdz", "--json", str(results), "--conv-tol", "1e-10")
    assert run.returncode == 0, run.stdout
    mine = run_results(results)
    assert mine["point_group"] == "C2v"
    mol = gto.M(atom="O 0 0 0; H 0 0 0.97", basis="cc-pvdz", spin=1, symmetry="C2v", verbose=0)
    mf = scf.UHF(mol).run(conv_tol=1e-10)
    ref = cc.UCCSD(mf, frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-10, 1e-7
    ref.run()
    assert mine["e_scf"] == pytest.approx(mf.e_tot, abs=1e-8)
    assert mine["e_tot"] == pytest.approx(ref.e_tot, abs=1e-7)


def test_scf_chkfile_starts_from_converged_orbitals(tmp_path):
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="sto-3g")
    mol.verbose = 0
    mf = scf.RHF(mol)
    mf.chkfile = str(tmp_path / "scf.chk")
    mf.run(conv_tol=1e-12)
    results = tmp_path / "r.json"
    run = run_cli(
        "run",
        xyz(tmp_path, WATER.format(comment="water")),
        "--basis",
        "sto-3g",
        "--scf-chkfile",
        mf.chkfile,
        "--json",
        str(results),
    )
    assert run.returncode == 0, run.stdout
    mine = run_results(results)
    assert mine["scf"]["cycles"] <= 3 and mine["e_scf"] == pytest.approx(mf.e_tot, abs=1e-9)


def test_ecp_basis_brings_its_core_potential(tmp_path):
    """HI/def2-SVP: iodine's 28 core electrons are replaced by def2's ECP, as Psi4 and ORCA do,
    and the frozen core leaves out the orbitals the ECP already removed."""
    results = tmp_path / "r.json"
    path = xyz(tmp_path, "2\nhydrogen iodide\nH 0 0 0\nI 0 0 1.609\n")
    run = run_cli("run", path, "--basis", "def2-svp", "--json", str(results))
    assert run.returncode == 0, run.stdout
    mine = run_results(results)
    mol = gto.M(atom="H 0 0 0; I 0 0 1.609", basis="def2-svp", ecp="def2-svp", verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    assert mine["ecp"] == ["I"]
    assert mine["e_scf"] == pytest.approx(mf.e_tot, abs=1e-8)
    assert len(mine["frozen_orbitals"][0]) == elements.chemcore(mol)


def test_a_comment_line_of_text_is_ignored(tmp_path):
    results = tmp_path / "r.json"
    path = xyz(tmp_path, WATER.format(comment="water, 2 conformers at 1 angstrom"))
    run = run_cli("run", path, "--basis", "sto-3g", "--json", str(results))
    assert run.returncode == 0, run.stdout
    assert run_results(results)["charge"] == 0


@pytest.mark.parametrize("comment", ["1 2", "charge=1 multiplicity=2"])
def test_charge_and_multiplicity_from_the_comment_line(tmp_path, comment):
    results = tmp_path / "r.json"
    path = xyz(tmp_path, WATER.format(comment=comment))
    run = run_cli("run", path, "--basis", "sto-3g", "--json", str(results))
    assert run.returncode == 0, run.stdout
    mine = run_results(results)
    assert (mine["charge"], mine["spin"], mine["reference"]) == (1, 1, "uhf")


@pytest.mark.parametrize(
    ("comment", "args", "message"),
    [
        ("0 2", [], "10 electrons cannot have 2S = 1 (multiplicity 2)"),
        ("0 1", ["--charge", "1"], "line 2 gives charge 0 but --charge 1 was given"),
        ("water", ["--point-group", "D2h"], "does not have point group D2h"),
        ("water", ["--point-group", "C3v"], "unknown point group 'C3v'"),
        ("water", ["--scf-guess", "magic"], "unknown SCF guess 'magic'"),
        ("water", ["--scf-chkfile", "/nonexistent.chk"], "cannot read the SCF chkfile"),
        ("water", ["--semicanonical"], "--semicanonical applies to ROHF"),
        ("water", ["--grid", "node-aware"], "use --method drccd or leave --grid out"),
        (
            "water",
            ["--method", "drccd", "--grid", "default"],
            "run it under mpiexec -n P with P > 1, or leave the grid out",
        ),
        ("water", ["--frozen", "1", "--no-frozen-core"], "give one of them"),
        ("charge=0 multiplicity=0", [], "the spin multiplicity must be at least 1"),
    ],
)
def test_bad_input_is_one_sentence_and_writes_nothing(tmp_path, comment, args, message):
    results = tmp_path / "r.json"
    path = xyz(tmp_path, WATER.format(comment=comment))
    run = run_cli("run", path, "--basis", "sto-3g", *args, "--json", str(results))
    assert run.returncode == 2, run.stdout
    assert message in " ".join(run.stdout.split()), run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert not results.exists()


@pytest.mark.parametrize(
    ("basis", "message"),
    [
        ("cc-pvdz-pp", "has no functions for H"),
        ("no-such-basis", "is not known to PySCF"),
        ("{bad}", "line 2: expected an exponent and coefficients"),
        ("{partial}", "has no shells for O"),
    ],
)
def test_bad_basis_is_one_sentence(tmp_path, basis, message):
    (tmp_path / "bad.nw").write_text("O S\n 1.0 abc\nH S\n 1.0 1.0\n")
    (tmp_path / "partial.nw").write_text("BASIS\nH S\n 1.0 1.0\nEND\n")
    basis = basis.format(bad=tmp_path / "bad.nw", partial=tmp_path / "partial.nw")
    path = xyz(tmp_path, WATER.format(comment="water"))
    run = run_cli("run", path, "--basis", basis)
    assert run.returncode == 2 and message in " ".join(run.stdout.split()), run.stdout
