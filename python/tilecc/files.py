"""Files that behave: outputs written so that nothing is ever lost or half-written, inputs read
so that nothing hangs or floods memory.

Outputs (results, checkpoints, traces, charts, wisdom) go through :func:`replaced_atomically`:
a temporary file beside the target, flushed to disk, renamed over it, and the directory synced,
so that a reader or a restart sees the old file or the new one, never a part. What a rename
would break is handled first: a symlink is written through to its target; ``-`` means standard
output; a device or FIFO (``/dev/null``) is written to directly, never replaced; a read-only
file or one with other hard links is refused. New files get the permissions the umask allows,
and a replaced file keeps its own.

Before a job starts, :func:`check_outputs` refuses outputs that name an input or each other
(the same file, not only the same string) and probes each directory with a file of the very
length the temporary will have.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import os
import secrets
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

#: Standard output, as an output path.
STDOUT = "-"
#: Inputs larger than this are refused before they are read (a molecule, basis, trace or
#: wisdom file is kilobytes to megabytes; /dev/zero is endless).
MAX_INPUT_BYTES = 1 << 30
_SUFFIX_CHARS = 16


def _temporary_name(path: Path) -> Path:
    """The temporary a write of ``path`` goes through: beside it, hidden, of a fixed length,
    naming the process that writes it (so that one a killed process left behind is known)."""
    token = secrets.token_hex(_SUFFIX_CHARS // 2)
    return path.with_name(f".{path.name}.{os.getpid():010d}-{token}.tmp")


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporaries of ``path`` whose writers are no longer running (killed during a
    write, they could not remove their own)."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*-*.tmp"):
        pid_text = tmp.name[len(path.name) + 2 :].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                tmp.unlink()
        except OSError:
            continue  # alive, but another user's


def _resolved(path: Path) -> Path:
    """The file a write to ``path`` lands in: symlinks followed to their final target."""
    return Path(os.path.realpath(path))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _refuse_unwritable(path: Path, what: str) -> None:
    """One sentence for an existing target that a rename would mistreat."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"cannot write the {what} {path}: it is a folder; give a file name.")
    if not stat.S_ISREG(info.st_mode):
        return  # devices and FIFOs are streamed to
    # The mode bits, not access(): root may write anything, but a read-only file says "keep me".
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(
        path, os.W_OK
    ):
        raise ValueError(
            f"cannot write the {what} {path}: the file is read-only; make it writable or give "
            f"another path."
        )
    if info.st_nlink > 1:
        raise ValueError(
            f"cannot write the {what} {path}: it has {info.st_nlink} hard links, which replacing "
            f"it would break; give another path."
        )


def is_special(path: Path) -> bool:
    """Whether ``path`` is standard output or an existing non-regular file (device, FIFO)."""
    if str(path) == STDOUT:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends, then deliver it: for a write that libraries do
    in several steps over one open file (an HDF5 file over a Python file object), which an
    interrupt between those steps would leave with objects that outlive the file (h5py then
    prints tracebacks as they are freed). Only the main thread can hold signals; elsewhere the
    block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, Any]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(*caught[0])


@contextmanager
def replaced_atomically(path: Path, mode: str = "w", what: str = "file") -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it is replaced whole or not at all (see the module).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with replaced_atomically(target) as f:
    ...     _ = f.write("done")
    >>> target.read_text()
    'done'
    """
    if str(path) == STDOUT:
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    target = _resolved(Path(path))
    _refuse_unwritable(target, what)
    if is_special(target):
        with open(target, mode.replace("+", "")) as f:
            yield f
        return
    try:
        permissions = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        permissions = 0o666 & ~_umask()
    _remove_stale_temporaries(target)
    tmp = _temporary_name(target)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (a crash after it keeps the new file)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def check_writable(path: Path, what: str) -> None:
    """Fail now, not after the calculation, if ``path`` cannot be written: the folder exists and
    takes a file named as the temporary will be, and the target is not one a rename would harm."""
    if is_special(path):
        return
    target = _resolved(Path(path))
    directory = target.parent
    if not directory.is_dir():
        raise ValueError(f"cannot write the {what} {path}: folder {directory} does not exist.")
    _refuse_unwritable(target, what)
    probe = _temporary_name(target)
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"cannot write the {what} {path}: {exc.strerror or exc}.") from None


def _identity(path: Path) -> tuple[int, int] | Path:
    """What makes two paths the same file: device and inode when it exists, else where it would
    be created."""
    try:
        info = os.stat(path)
        return (info.st_dev, info.st_ino)
    except OSError:
        return _resolved(path)


def check_outputs(inputs: Mapping[str, Path | None], outputs: Mapping[str, Path | None]) -> None:
    """Refuse, before anything runs, an output that is an input or another output (the same
    file, through any name, link or folder), and probe each output's folder."""
    given_outputs = {what: Path(p) for what, p in outputs.items() if p is not None}
    seen: dict[Any, str] = {}
    for what, path in inputs.items():
        if path is not None and str(path) != STDOUT:
            seen.setdefault(_identity(Path(path)), what)
    taken: dict[Any, str] = {}
    for what, path in given_outputs.items():
        if str(path) == STDOUT:
            if STDOUT in taken:
                raise ValueError(
                    f"the {taken[STDOUT]} and the {what} both go to standard output ('-'); "
                    f"give one of them a file name."
                )
            taken[STDOUT] = what
            continue
        key = _identity(path)
        if key in seen and not is_special(path):
            raise ValueError(
                f"the {what} {path} is the {seen[key]}; writing it would destroy the "
                f"{seen[key]}. Give another path."
            )
        if key in taken and not is_special(path):
            raise ValueError(
                f"the {taken[key]} and the {what} are the same file ({path}); one would "
                f"overwrite the other. Give them different paths."
            )
        taken[key] = what
        check_writable(path, what)


def read_text_input(
    path: Path, what: str, limit: int = MAX_INPUT_BYTES, compressed: bool = False
) -> str:
    """The text of an input file, refusing what is not a regular file (a FIFO would hang, a
    device never end) or larger than ``limit`` (also once gunzipped, when ``compressed``), and
    a leading UTF-8 byte-order mark removed."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"cannot read the {what} {path}: it is a folder; give a file.")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"cannot read the {what} {path}: it is not a regular file (a pipe or a device); "
            f"give a file."
        )
    if info.st_size > limit:
        raise ValueError(
            f"cannot read the {what} {path}: it holds {info.st_size} bytes, more than a {what} "
            f"can ({limit}); check the path."
        )
    try:
        data = Path(path).read_bytes()
        if compressed:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(limit + 1)
            if len(data) > limit:
                raise ValueError(
                    f"cannot read the {what} {path}: it unpacks to more than a {what} can "
                    f"({limit} bytes); check the path."
                )
    except (OSError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ValueError(f"cannot read the {what} {path}: {reason}.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"cannot read the {what} {path}: it is not a UTF-8 text file.") from None


class LockedError(ValueError):
    """Another process holds the lock."""


@contextmanager
def exclusive_lock(path: Path, what: str, wait: bool) -> Iterator[None]:
    """Hold an exclusive lock that other tilecc processes see, on a hidden file beside ``path``:
    ``wait`` for it (the wisdom file's read-merge-write), or refuse at once when another process
    holds it (a checkpoint that another running job writes)."""
    import fcntl

    target = _resolved(Path(path))
    lock = target.with_name(f".{target.name}.lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
    except OSError as exc:
        raise ValueError(f"cannot lock the {what} {path}: {exc.strerror or exc}.") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise LockedError(
                f"the {what} {path} is in use by another running tilecc job; give this job "
                f"its own path, or wait for the other to finish."
            ) from None
        yield
    finally:
        os.close(fd)
