"""Wisdom: the cost model's coefficients, measured once per machine and BLAS and kept on disk.

The first time a process needs the cost model it looks in the wisdom file (``$TILECC_WISDOM``,
default ``$XDG_CACHE_HOME/tilecc/wisdom.json`` or ``~/.cache/tilecc/wisdom.json``) for an entry
keyed by this machine's CPU, this BLAS and this tilecc version. When there is none, a micro-
benchmark of well under a second times GEMMs and block permutations on one thread, fits the
models of ``include/tilecc/cost.hpp`` to the timings, and adds the entry. A file that is not
valid wisdom is never trusted: it is reported in a warning and rebuilt.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from tilecc import _blas, _core
from tilecc.files import exclusive_lock, is_special, read_text_input, replaced_atomically
from tilecc.memory import peak_rss_bytes, resident_bytes

FORMAT = "tilecc-wisdom"
VERSION = 2  # 2: models linear in the kernels' work (1: quadratics in log sizes)
_REPEATS = 5
_KINDS = 3  # PermuteKind: copy, runs, transpose

#: Wisdom is a few kilobytes per machine; a larger file is not wisdom.
MAX_WISDOM_BYTES = 16 << 20
# One process reads the file once per path.
_models: dict[Path, Any] = {}


#: See before_calibration.
_before_calibration: tuple[int, int] | None = None


def wisdom_path() -> Path:
    """Where wisdom is kept: $TILECC_WISDOM, else the user's cache directory."""
    override = os.environ.get("TILECC_WISDOM")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tilecc" / "wisdom.json"


def machine_key() -> str:
    """What the coefficients depend on: the CPU, the BLAS and its kernels, tilecc's version."""
    _blas.ensure_loaded()
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = _core.blas_info()
    return f"{cpu} | {blas['vendor']} {blas['core']} | tilecc {_core.version()}"


_GEMM_MAX_LOG2 = 10.0  # GEMMs are timed with extents up to 1024
_GEMM_MAX_WORK = 2**25  # and m n k up to this, so that calibration takes well under a second
_PERMUTE_MAX_EXTENT_LOG2 = 6.0
_PERMUTE_MAX_ELEMENTS = 2**21
# Axis orders of a rank-4 block: a copy, ones that keep the innermost axis and transposes.
_AXES = (
    [0, 1, 2, 3],
    [1, 0, 2, 3],
    [0, 2, 1, 3],
    [0, 1, 3, 2],
    [2, 3, 0, 1],
    [3, 2, 1, 0],
    [1, 0, 3, 2],
    [0, 3, 1, 2],
    [2, 0, 3, 1],
)


def gemm_work(shapes: np.ndarray) -> np.ndarray:
    """The work terms CostModel::gemm_seconds weighs: [1, m n k, m k, k n, m n, m, n, k]."""
    m, n, k = shapes.T
    return np.column_stack([np.ones_like(m), m * n * k, m * k, k * n, m * n, m, n, k])


def permute_work(kind: np.ndarray, elements: np.ndarray, inner_loops: np.ndarray) -> np.ndarray:
    """The work terms CostModel::permute_seconds weighs: [1, elements of each kind, loops]."""
    return np.column_stack(
        [np.ones_like(elements), np.eye(_KINDS)[kind] * elements[:, None], inner_loops]
    )


def fit_seconds(work: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative seconds per unit of each work term, fitted to the measured ``seconds`` by
    least squares on relative errors (a 1 µs kernel counts as much as a 1 ms one); and the median
    relative error on every other case, which the fit does not see."""
    # Imported here, not with the module: SciPy's optimizers take longer to import than all of
    # tilecc, and only a calibration (once per machine) needs them.
    from scipy.optimize import nnls

    fit, held_out = slice(0, None, 2), slice(1, None, 2)
    weights = 1.0 / seconds[fit]
    coefficients, _ = nnls(work[fit] * weights[:, None], np.ones(len(weights)))
    predicted = work[held_out] @ coefficients
    error = float(np.median(np.abs(predicted - seconds[held_out]) / seconds[held_out]))
    return coefficients, error


def calibrate() -> dict[str, Any]:
    """Time GEMMs and permutations on one thread and fit the cost model; well under a second."""
    start = time.perf_counter()
    # Block sizes are products of tile extents cut by spin and irreps: mostly not multiples of
    # the BLAS micro-kernel, so the shapes are drawn log-uniformly rather than as powers of two.
    rng = np.random.default_rng(2026)
    shapes: list[tuple[int, int, int]] = []
    while len(shapes) < 300:
        m, n, k = (int(x) for x in np.exp2(rng.uniform(0.0, _GEMM_MAX_LOG2, 3)))
        if m * n * k <= _GEMM_MAX_WORK:
            shapes.append((m, n, k))
    gemm_seconds = np.array(_core.time_gemms(shapes, _REPEATS))
    gemm, gemm_error = fit_seconds(gemm_work(np.array(shapes, dtype=float)), gemm_seconds)

    cases: list[tuple[list[int], list[int]]] = []
    while len(cases) < 270:
        extents = [int(x) for x in np.exp2(rng.uniform(0.0, _PERMUTE_MAX_EXTENT_LOG2, 4))]
        if np.prod(extents) <= _PERMUTE_MAX_ELEMENTS:
            cases.append((extents, _AXES[len(cases) % len(_AXES)]))
    permute_seconds = np.array(_core.time_permutes(cases, _REPEATS))
    described = np.array([_core.permute_shape(e, a) for e, a in cases], dtype=float)
    kind, elements, loops = described[:, 0].astype(int), described[:, 1], described[:, 2]
    permute, permute_error = fit_seconds(permute_work(kind, elements, loops), permute_seconds)
    return {
        "gemm": [float(c) for c in gemm],
        "permute": [float(c) for c in permute],
        # Median relative error of each model on the cases it was not fitted to.
        "gemm_error": round(gemm_error, 4),
        "permute_error": round(permute_error, 4),
        "calibrated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "calibration_seconds": round(time.perf_counter() - start, 3),
    }


def _valid_entry(entry: Any) -> bool:
    def numbers(value: Any, count: int) -> bool:
        return (
            isinstance(value, list)
            and len(value) == count
            and all(isinstance(x, int | float) and math.isfinite(x) and x >= 0 for x in value)
        )

    return (
        isinstance(entry, dict)
        and numbers(entry.get("gemm"), 8)
        and numbers(entry.get("permute"), 5)
    )


class _NotWisdomError(ValueError):
    """The file is someone else's: it is read around, and never overwritten."""


def _read(path: Path, warn: bool = True) -> dict[str, Any]:
    """The file's entries; {} when it does not exist. Wisdom of another version or with broken
    entries is reported and treated as empty, so that it is rebuilt; a file that is not tilecc
    wisdom at all raises _NotWisdomError."""
    if not path.exists():
        return {}
    try:
        text = read_text_input(path, "wisdom file", limit=MAX_WISDOM_BYTES)
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _NotWisdomError(f"it is not a tilecc wisdom file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _NotWisdomError("it is not a tilecc wisdom file")
    try:
        if data.get("version") != VERSION:
            raise ValueError(f"it has version {data.get('version')!r}, not {VERSION}")
        entries = data.get("entries")
        if not isinstance(entries, dict):
            raise ValueError("it has no entries")
        return entries
    except ValueError as exc:
        if warn:
            warnings.warn(
                f"ignoring the wisdom file {path} ({exc}); recalibrating the cost model and "
                f"rewriting it.",
                RuntimeWarning,
                stacklevel=3,
            )
        return {}


def add_entry(path: Path, key: str, entry: dict[str, Any]) -> None:
    """Add ``entry`` under ``key``: read, merge and write under the file's lock, so that two
    processes calibrating at once both keep their entries."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(path, "wisdom file", wait=True):
            entries = _read(path, warn=False)
            entries[key] = entry
            with replaced_atomically(path, what="wisdom file") as f:
                json.dump({"format": FORMAT, "version": VERSION, "entries": entries}, f, indent=2)
                f.write("\n")
    except _NotWisdomError as exc:
        warnings.warn(
            f"the wisdom file {path} is not one tilecc wrote ({exc}), so it is left as it is; "
            f"the cost model will be calibrated again next time. Point TILECC_WISDOM elsewhere.",
            RuntimeWarning,
            stacklevel=3,
        )
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        warnings.warn(
            f"cannot write the wisdom file {path} ({reason}); the cost model will be calibrated "
            f"again next time. Set TILECC_WISDOM to a writable path.",
            RuntimeWarning,
            stacklevel=3,
        )


def entries(path: Path) -> dict[str, Any]:
    """The file's entries (cost models, tuned configurations), {} when it has none that can be
    trusted: a file of another version, broken or not tilecc's is reported and read as empty."""
    try:
        return _read(path)
    except _NotWisdomError as exc:
        warnings.warn(f"ignoring the wisdom file {path} ({exc}).", RuntimeWarning, stacklevel=2)
        return {}


def model_from(entry: dict[str, Any]) -> Any:
    model = _core.CostModel()
    model.gemm = entry["gemm"]
    model.permute = entry["permute"]
    return model


def cost_model(path: Path | None = None) -> Any:
    """The calibrated cost model for this machine (a ``_core.CostModel``), from the wisdom file
    or, the first time, from a calibration that is then added to the file."""
    path = path or wisdom_path()
    model = _models.get(path)
    if model is not None:
        return model
    key = machine_key()
    try:
        entries = _read(path)
    except _NotWisdomError as exc:
        warnings.warn(
            f"ignoring the wisdom file {path} ({exc}); recalibrating the cost model.",
            RuntimeWarning,
            stacklevel=2,
        )
        entries = {}
    entry = entries.get(key)
    if entry is not None and not _valid_entry(entry):
        warnings.warn(
            f"the wisdom file {path} holds an invalid entry for this machine; recalibrating.",
            RuntimeWarning,
            stacklevel=2,
        )
        entry = None
    if entry is None:
        global _before_calibration
        if _before_calibration is None:
            _before_calibration = (peak_rss_bytes(), resident_bytes())
        entry = calibrate()
        if not is_special(path):  # /dev/null and the like keep nothing, and are not locked
            add_entry(path, key, entry)
    model = model_from(entry)
    _models[path] = model
    return model


def before_calibration() -> tuple[int, int] | None:
    """The process's peak and current RSS just before it first calibrated the cost model (None:
    it has not): what a later run, which finds the model in the wisdom file, has instead."""
    return _before_calibration


def forget() -> None:
    """Drop the models this process has read (tests that rewrite the wisdom file use this)."""
    _models.clear()
