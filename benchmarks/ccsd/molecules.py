"""The benchmark molecules (Ångström) and the jobs run on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One job: basis, atoms, 2S and the SCF reference (rhf, uhf or rohf)."""

    basis: str
    atoms: list[str]
    spin: int = 0
    reference: str = "rhf"


WATER = [
    "O 0.000000 0.000000 0.117300",
    "H 0.000000 0.757200 -0.469200",
    "H 0.000000 -0.757200 -0.469200",
]
NITROGEN = ["N 0.0 0.0 0.0", "N 0.0 0.0 1.0977"]
BENZENE = [
    "C 0.000000 1.396792 0.000000",
    "C 1.209657 0.698396 0.000000",
    "C 1.209657 -0.698396 0.000000",
    "C 0.000000 -1.396792 0.000000",
    "C -1.209657 -0.698396 0.000000",
    "C -1.209657 0.698396 0.000000",
    "H 0.000000 2.484212 0.000000",
    "H 2.151390 1.242106 0.000000",
    "H 2.151390 -1.242106 0.000000",
    "H 0.000000 -2.484212 0.000000",
    "H -2.151390 -1.242106 0.000000",
    "H -2.151390 1.242106 0.000000",
]
# Methanol-like, no symmetry element: C1.
METHANOL = [
    "C -0.046520 0.662558 0.000000",
    "O -0.046520 -0.757813 0.000000",
    "H -1.086272 0.975384 0.000000",
    "H 0.437626 1.071740 0.888447",
    "H 0.437626 1.071740 -0.888447",
    "H 0.861794 -1.046179 0.120000",
]

# Uracil, planar (Cs): the nucleobase library of the Atomes program (github.com/Slookeur/Atomes,
# library/molecules/Nucleobases/uracil.sml), rotated into its plane (it lay 6.5e-5 Å rms out of
# it).
URACIL = [
    "C -1.352134 0.420542 0.000000",
    "C -0.384126 1.360908 0.000000",
    "C 1.375043 -0.362754 0.000000",
    "C -1.025417 -1.008384 0.000000",
    "H -0.606114 2.436421 0.000000",
    "H 1.671076 1.715755 0.000000",
    "H 0.645255 -2.315629 0.000000",
    "H -2.413017 0.693331 0.000000",
    "O 2.565626 -0.650802 0.000000",
    "O -1.814272 -1.938890 0.000000",
    "N 0.973453 1.006531 0.000000",
    "N 0.364629 -1.357029 0.000000",
]

# Radicals and a triplet (experimental geometries, NIST CCCBDB).
NITRIC_OXIDE = ["N 0.0 0.0 0.0", "O 0.0 0.0 1.1508"]
HYDROXYL = ["O 0.0 0.0 0.0", "H 0.0 0.0 0.9697"]
METHYLENE = ["C 0.0 0.0 0.1027", "H 0.0 0.9929 -0.3081", "H 0.0 -0.9929 -0.3081"]

CASES = {
    "h2o/cc-pvtz": Case("cc-pvtz", WATER),
    "n2/cc-pvtz": Case("cc-pvtz", NITROGEN),
    "benzene/cc-pvdz": Case("cc-pvdz", BENZENE),
    "uracil/cc-pvdz (Cs)": Case("cc-pvdz", URACIL),
    "methanol/cc-pvdz (C1)": Case("cc-pvdz", METHANOL),
    "NO/cc-pvtz UHF": Case("cc-pvtz", NITRIC_OXIDE, spin=1, reference="uhf"),
    "OH/cc-pvtz UHF": Case("cc-pvtz", HYDROXYL, spin=1, reference="uhf"),
    "CH2 triplet/cc-pvtz UHF": Case("cc-pvtz", METHYLENE, spin=2, reference="uhf"),
    "NO/cc-pvtz ROHF": Case("cc-pvtz", NITRIC_OXIDE, spin=1, reference="rohf"),
    "OH/cc-pvtz ROHF": Case("cc-pvtz", HYDROXYL, spin=1, reference="rohf"),
    "CH2 triplet/cc-pvtz ROHF": Case("cc-pvtz", METHYLENE, spin=2, reference="rohf"),
}
QUICK = {
    "h2o/cc-pvdz": Case("cc-pvdz", WATER),
    "n2/cc-pvdz": Case("cc-pvdz", NITROGEN),
    "OH/cc-pvdz UHF": Case("cc-pvdz", HYDROXYL, spin=1, reference="uhf"),
}
OPEN_SHELL = {name: case for name, case in CASES.items() if case.reference != "rhf"}
