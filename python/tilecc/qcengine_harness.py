"""tilecc as a QCEngine program: ``qcengine.compute(input, "tilecc")`` after ``register()``.

QCEngine drives programs through harnesses in its registry, as it drives Psi4 and NWChem. This
one runs ``tilecc run --qcschema`` in a scratch folder, with QCEngine's cores as threads and its
memory as the memory budget, and hands back the AtomicResult tilecc wrote::

    import qcengine
    from tilecc.qcengine_harness import register

    register()
    result = qcengine.compute(atomic_input, "tilecc")
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from qcelemental.models import v1, v2
from qcengine.config import TaskConfig
from qcengine.exceptions import InputError, UnknownError
from qcengine.programs import get_program, list_all_programs, register_program
from qcengine.programs.model import ProgramHarness

#: The name QCEngine knows tilecc by.
NAME = "tilecc"


class TileccHarness(ProgramHarness):
    """Runs one AtomicInput through ``tilecc run --qcschema`` in a scratch folder."""

    _defaults: ClassVar[dict[str, Any]] = {
        "name": NAME,
        "scratch": True,
        "thread_safe": True,
        "thread_parallel": True,
        "node_parallel": False,
        "managed_memory": True,
    }

    @staticmethod
    def found(raise_error: bool = False) -> bool:
        return True  # this module is part of tilecc: where it imports, tilecc runs

    def get_version(self) -> str:
        from tilecc import _core

        return str(_core.version())

    def compute(self, input_data: v2.AtomicInput, config: TaskConfig) -> v2.AtomicResult:
        given = input_data.convert_v(1)
        scratch = config.scratch_directory
        with tempfile.TemporaryDirectory(prefix="tilecc-qcengine-", dir=scratch) as d:
            folder = Path(d)
            (folder / "input.json").write_text(given.serialize("json"))
            command = [
                sys.executable,
                "-m",
                "tilecc.cli",
                "run",
                "--qcschema",
                "input.json",
                "--json",
                "result.json",
            ]
            if config.ncores:
                command += ["--threads", str(config.ncores)]
            if config.memory:
                command += ["--memory-budget", f"{config.memory}GiB"]
            proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
            written = folder / "result.json"
            if not written.is_file():
                lines = (proc.stdout + proc.stderr).strip().splitlines()
                message = next((x for x in reversed(lines) if x.startswith("tilecc:")), None)
                # The CLI refuses bad input with exit code 2 and one sentence.
                error = InputError if proc.returncode == 2 else UnknownError
                raise error(message or f"tilecc exited with code {proc.returncode}.")
            result = v1.AtomicResult(**json.loads(written.read_text()))
        result = result.model_copy(update={"stdout": proc.stdout or None})
        return result.convert_v(2, external_input_data=input_data)


def register() -> None:
    """Add tilecc to QCEngine's programs (once; later calls change nothing)."""
    if NAME not in list_all_programs():
        register_program(TileccHarness())
    assert isinstance(get_program(NAME, check=False), TileccHarness)
