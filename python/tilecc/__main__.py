"""``tilecc`` and ``python -m tilecc``: the command line, with ``--version`` answered before the
parser and its option registries (NumPy, the partitioners) are imported."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        from tilecc import __version__

        print(f"tilecc {__version__}")
        return 0
    from tilecc.cli import main as run_command

    return run_command(argv)


if __name__ == "__main__":
    sys.exit(main())
