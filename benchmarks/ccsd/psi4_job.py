"""Competitor: Psi4's ccenergy CCSD(T) (Debian's psi4 package, see setup.sh), run as the psi4
program on a generated input; prints JSON with its energy and phase times."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INPUT = """memory 8 gb
set_num_threads({threads})
molecule {{
{charge_multiplicity}
{atoms}
}}
set {{
  reference {reference}
  basis {basis}
  freeze_core true
  scf_type pk
  e_convergence 1e-9
  d_convergence 1e-9
  r_convergence 1e-7
}}
import time
t0 = time.time()
e_scf, wfn = energy('scf', return_wfn=True)
t1 = time.time()
e = energy('ccsd(t)', ref_wfn=wfn)
t2 = time.time()
print_out("TILECC-BENCH {{:.12f}} {{:.6f}} {{:.6f}}\\n".format(e, t1 - t0, t2 - t1))
"""


def main() -> None:
    basis, xyz, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    spin, reference = int(sys.argv[4]), sys.argv[5]
    psi4 = shutil.which("psi4")
    if psi4 is None:
        print(json.dumps({"error": "psi4 is not installed; run benchmarks/ccsd/setup.sh"}))
        return
    atoms = "\n".join(
        line.strip() for line in Path(xyz).read_text().splitlines()[2:] if line.strip()
    )
    with tempfile.TemporaryDirectory() as work:
        inp = Path(work, "input.dat")
        inp.write_text(
            INPUT.format(
                threads=threads,
                charge_multiplicity=f"0 {spin + 1}",
                atoms=atoms,
                basis=basis,
                reference=reference,
            )
        )
        start = time.perf_counter()
        run = subprocess.run(
            [psi4, "-n", str(threads), str(inp), str(Path(work, "output.dat"))],
            capture_output=True,
            text=True,
            check=False,
            cwd=work,
        )
        total = time.perf_counter() - start
        out = Path(work, "output.dat").read_text() if Path(work, "output.dat").exists() else ""
    # Psi4 echoes its input at the top of the output: the printed result is the last match.
    found = re.findall(r"TILECC-BENCH (-?[0-9.]+) ([0-9.]+) ([0-9.]+)", out)
    if run.returncode != 0 or not found:
        print(json.dumps({"error": f"psi4 failed (exit {run.returncode}): {run.stderr[-300:]}"}))
        return
    e, t_scf, t_cc = (float(x) for x in found[-1])
    # Psi4 runs CCSD and (T) in one call: its "ccsd_s" is CCSD(T) together.
    print(json.dumps({"e_tot": e, "scf_s": t_scf, "ccsd_s": t_cc, "t_s": None, "total_s": total}))


if __name__ == "__main__":
    main()
