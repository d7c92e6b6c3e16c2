"""Writing files so that no reader ever sees half of one: results, checkpoints, records."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def replaced_atomically(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it is flushed to disk and
    renamed over ``path``, on any error it is removed and ``path`` keeps its old content.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with replaced_atomically(target) as f:
    ...     _ = f.write("done")
    >>> target.read_text()
    'done'
    """
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
