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
from tilecc.atomic import replaced_atomically

FORMAT = "tilecc-wisdom"
VERSION = 1
_REPEATS = 5
_KINDS = 3  # PermuteKind: copy, inner_kept, transpose

# One process reads the file once per path.
_models: dict[Path, Any] = {}


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


_GEMM_MAX_LOG2 = 10.0  # shapes up to 1024 per extent are timed; larger ones run at that rate
_PERMUTE_MAX_LOG2 = 21.0


def gemm_features(shapes: np.ndarray) -> np.ndarray:
    """The quadratic in log2 m, n, k that CostModel::gemm_seconds evaluates."""
    x, y, z = np.clip(np.log2(shapes.T), 0.0, _GEMM_MAX_LOG2)
    return np.column_stack([np.ones_like(x), x, y, z, x * x, y * y, z * z, x * y, x * z, y * z])


def permute_features(kind: np.ndarray, elements: np.ndarray, run: np.ndarray) -> np.ndarray:
    """One-hot kind, then log2 elements, its square and log2 run length (CostModel)."""
    x = np.clip(np.log2(elements), 0.0, _PERMUTE_MAX_LOG2)
    r = np.clip(np.log2(run), 0.0, _PERMUTE_MAX_LOG2)
    one_hot = np.eye(_KINDS)[kind]
    return np.column_stack([one_hot, x, x * x, r])


def calibrate() -> dict[str, Any]:
    """Time GEMMs and permutations on one thread and fit the cost model; well under a second.

    Both models fit log2(rate) by least squares, so every case counts by its relative error.
    """
    start = time.perf_counter()
    # Block sizes are products of tile extents cut by spin and irreps: mostly not multiples of
    # the BLAS micro-kernel, so the shapes are drawn log-uniformly rather than as powers of two.
    rng = np.random.default_rng(2026)
    shapes: list[tuple[int, int, int]] = []
    while len(shapes) < 200:
        m, n, k = (int(x) for x in np.exp2(rng.uniform(0.0, _GEMM_MAX_LOG2, 3)))
        if m * n * k <= 2**25:
            shapes.append((m, n, k))
    gemm_seconds = np.array(_core.time_gemms(shapes, _REPEATS))
    mnk = np.array(shapes, dtype=float)
    gemm_rate = 2.0 * mnk.prod(axis=1) / gemm_seconds
    gemm, *_ = np.linalg.lstsq(gemm_features(mnk), np.log2(gemm_rate), rcond=None)

    cases: list[tuple[list[int], list[int]]] = []
    four = ([0, 1, 2, 3], [1, 0, 2, 3], [0, 2, 1, 3], [0, 1, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0])
    while len(cases) < 150:
        extents = [int(x) for x in np.exp2(rng.uniform(0.0, 6.0, 4))]
        if np.prod(extents) <= 2**_PERMUTE_MAX_LOG2:
            cases.append((extents, list(four[len(cases) % len(four)])))
    permute_seconds = np.array(_core.time_permutes(cases, _REPEATS))
    described = np.array([_core.permute_shape(e, a) for e, a in cases], dtype=float)
    kind, elements, run = described[:, 0].astype(int), described[:, 1], described[:, 2]
    permute, *_ = np.linalg.lstsq(
        permute_features(kind, elements, run), np.log2(elements / permute_seconds), rcond=None
    )
    return {
        "gemm": [float(c) for c in gemm],
        "permute": [float(c) for c in permute],
        "calibrated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "calibration_seconds": round(time.perf_counter() - start, 3),
    }


def _valid_entry(entry: Any) -> bool:
    def numbers(value: Any, count: int) -> bool:
        return (
            isinstance(value, list)
            and len(value) == count
            and all(isinstance(x, int | float) and math.isfinite(x) for x in value)
        )

    return (
        isinstance(entry, dict)
        and numbers(entry.get("gemm"), 10)
        and numbers(entry.get("permute"), 6)
    )


def _read(path: Path) -> dict[str, Any]:
    """The file's entries; {} when it does not exist. Anything else that is not tilecc wisdom is
    reported and treated as empty, so it gets rebuilt."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("it is not a tilecc wisdom file")
        if data.get("version") != VERSION:
            raise ValueError(f"it has version {data.get('version')!r}, not {VERSION}")
        entries = data.get("entries")
        if not isinstance(entries, dict):
            raise ValueError("it has no entries")
        return entries
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        warnings.warn(
            f"ignoring the wisdom file {path} ({exc}); recalibrating the cost model and "
            f"rewriting it.",
            RuntimeWarning,
            stacklevel=3,
        )
        return {}


def _write(path: Path, entries: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with replaced_atomically(path) as f:
            json.dump({"format": FORMAT, "version": VERSION, "entries": entries}, f, indent=2)
            f.write("\n")
    except OSError as exc:
        warnings.warn(
            f"cannot write the wisdom file {path} ({exc.strerror or exc}); the cost model "
            f"will be calibrated again next time. Set TILECC_WISDOM to a writable path.",
            RuntimeWarning,
            stacklevel=3,
        )


def model_from(entry: dict[str, Any]) -> Any:
    model = _core.CostModel()
    model.gemm = entry["gemm"]
    model.gemm_max_log2 = _GEMM_MAX_LOG2
    model.permute = entry["permute"]
    model.permute_max_log2 = _PERMUTE_MAX_LOG2
    return model


def cost_model(path: Path | None = None) -> Any:
    """The calibrated cost model for this machine (a ``_core.CostModel``), from the wisdom file
    or, the first time, from a calibration that is then added to the file."""
    path = path or wisdom_path()
    model = _models.get(path)
    if model is not None:
        return model
    key = machine_key()
    entries = _read(path)
    entry = entries.get(key)
    if entry is not None and not _valid_entry(entry):
        warnings.warn(
            f"the wisdom file {path} holds an invalid entry for this machine; recalibrating.",
            RuntimeWarning,
            stacklevel=2,
        )
        entry = None
    if entry is None:
        entry = calibrate()
        entries[key] = entry
        _write(path, entries)
    model = model_from(entry)
    _models[path] = model
    return model


def forget() -> None:
    """Drop the models this process has read (tests that rewrite the wisdom file use this)."""
    _models.clear()
