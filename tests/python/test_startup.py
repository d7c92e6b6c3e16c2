"""Start-up: `import tilecc` and `tilecc --version` load the core and its BLAS only (no NumPy,
PySCF, rich or partitioners), which decides how long a small job's start-up takes; the public
names still all resolve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tilecc

HEAVY = ("numpy", "pyscf", "rich", "scipy", "mtkahypar", "h5py")


def loaded_after(code: str) -> list[str]:
    """The heavy modules loaded once ``code`` has run in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[-1].split()[1:]


def test_import_loads_nothing_heavy():
    assert loaded_after("import tilecc") == []


def test_version_answers_before_the_parser_loads():
    code = (
        "import sys\nsys.argv = ['tilecc', '--version']\nfrom tilecc.__main__ import main\nmain()"
    )
    assert loaded_after(code) == []
    script = subprocess.run(
        [str(Path(sys.executable).parent / "tilecc"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert script.stdout.strip() == f"tilecc {tilecc.__version__}"
    module = subprocess.run(
        [sys.executable, "-m", "tilecc", "--version"], capture_output=True, text=True, check=True
    )
    assert module.stdout == script.stdout


def test_every_public_name_resolves():
    for name in tilecc.__all__:
        assert getattr(tilecc, name) is not None, name
    assert set(tilecc.__all__) <= set(dir(tilecc))
    assert tilecc.measure.dgemm_gflops  # submodules, reached as attributes
    assert tilecc.cc.GCCSD and tilecc.trace.read_trace
