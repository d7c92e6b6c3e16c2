"""Fuzzing what users hand tilecc: XYZ files, command lines, checkpoints and traces. Whatever
comes in, the reader returns or raises one ValueError (argparse: exits with code 2); it never
raises anything else, never hangs, and never changes the file it reads."""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilecc import Space, Tensor, antisymmetric_pairs
from tilecc.cc import checkpoint as ckpt
from tilecc.cli import _job_options, build_parser
from tilecc.host.molecule import read_charge_and_multiplicity, read_xyz
from tilecc.run import validate
from tilecc.trace import read_trace

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"

_atom_lines = st.builds(
    lambda s, x, y, z: f"{s} {x} {y} {z}",
    st.sampled_from(["H", "O", "C", "Xx", "h1", "", "He"]),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4)),
    st.floats(-10, 10),
    st.one_of(st.floats(-10, 10), st.just("nan"), st.just("")),
)
_xyz_texts = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda count, comment, atoms: "\n".join([count, comment, *atoms]),
        st.one_of(st.integers(-2, 5).map(str), st.text(max_size=5)),
        st.one_of(st.text(max_size=30), st.just("0 2"), st.just("charge=x multiplicity=2")),
        st.lists(_atom_lines, max_size=5),
    ),
)


@FUZZ
@given(_xyz_texts)
def test_xyz_reader(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.xyz"
        path.write_text(text)
        before = path.read_bytes()
        for read in (read_xyz, read_charge_and_multiplicity):
            with contextlib.suppress(ValueError):
                read(path)
        assert path.read_bytes() == before


_flags = st.sampled_from(
    [
        "--basis", "--method", "--charge", "--spin", "--reference", "--frozen", "--tile",
        "--threads", "--conv-tol", "--max-iter", "--policy", "--quantum", "--group-size",
        "--point-group", "--scf-conv", "--scf-max-iter", "--scf-guess", "--json",
        "--no-frozen-core", "--cartesian", "--semicanonical", "--restart",
    ]
)  # fmt: skip
_values = st.one_of(
    st.integers(-(2**65), 2**65).map(str),
    st.sampled_from(["sto-3g", "ccsd", "uhf", "nan", "inf", "-1e300", "C2v", "counter", ""]),
    st.text(max_size=8),
)


@FUZZ
@given(st.lists(st.one_of(_flags, _values), max_size=10))
def test_option_parser_and_validation(argv):
    """Parsing ends in a namespace or argparse's exit 2; a namespace that parses is then made
    into RunOptions and validated, or refused with one ValueError."""
    parser = build_parser()
    parser.exit_on_error = False
    try:
        args = parser.parse_args(["run", str(WATER), *argv])
    except SystemExit as exc:
        assert exc.code == 2
        return
    except argparse.ArgumentError:
        return
    # The options as the command builds them (cli._job_options), written nowhere.
    args.json = Path(tempfile.gettempdir()) / "fuzz-never-written.json"
    with contextlib.suppress(ValueError):
        validate(_job_options(args, plan_only=False))


@pytest.fixture(scope="module")
def checkpoint_bytes() -> bytes:
    o = Space([0, 1, 0], tile=1, kind="occupied", name="o")
    v = Space([1, 0, 0, 1], tile=1, kind="virtual", name="v")
    t1, t2 = Tensor([o, v], name="t1"), Tensor([o, o, v, v], antisymmetric_pairs(), name="t2")
    t1.fill_random_(1)
    t2.fill_random_(2)
    scf = ckpt.SCFSolution(np.eye(3), np.array([2.0, 2.0, 0.0]), np.arange(3.0), -1.0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.ckpt"
        ckpt.save(path, {"format": ckpt.FORMAT}, ckpt.State(1, -0.1, scf, [t1, t2]))
        return path.read_bytes()


@FUZZ
@given(st.data())
def test_checkpoint_reader(checkpoint_bytes, data):
    damaged = bytearray(checkpoint_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        damaged = damaged[: data.draw(st.integers(0, len(damaged)))]
    o = Space([0, 1, 0], tile=1, kind="occupied", name="o")
    v = Space([1, 0, 0, 1], tile=1, kind="virtual", name="v")
    templates = [Tensor([o, v], name="t1"), Tensor([o, o, v, v], antisymmetric_pairs())]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.ckpt"
        path.write_bytes(bytes(damaged))
        for read in (
            lambda: ckpt.read_scf(path, {"format": ckpt.FORMAT}),
            lambda: ckpt.load(path, {"format": ckpt.FORMAT}, templates),
        ):
            with contextlib.suppress(ValueError):
                read()
        assert path.read_bytes() == bytes(damaged)


_json = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)
_events = st.lists(
    st.fixed_dictionaries(
        {
            "ph": st.sampled_from(["X", "M", 3]),
            "cat": st.sampled_from(["run", "phase", "inspector", None]),
            "name": st.sampled_from(["gemm", "wait", "inspect x", 5]),
            "tid": st.one_of(st.integers(-2, 4), st.text(max_size=2)),
            "ts": st.one_of(st.floats(), st.text(max_size=2)),
            "dur": st.one_of(st.floats(), st.integers(-5, 5)),
            "args": _json,
        }
    ),
    max_size=6,
)


@FUZZ
@given(
    st.one_of(
        _json,
        st.fixed_dictionaries(
            {
                "otherData": st.fixed_dictionaries(
                    {
                        "threads": st.one_of(st.integers(-5, 10**12), st.text(max_size=3)),
                        "policy": _json,
                    }
                ),
                "traceEvents": _events,
            }
        ),
    )
)
def test_trace_reader(document):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(document))
        before = path.read_bytes()
        with contextlib.suppress(ValueError):
            read_trace(path)
        assert path.read_bytes() == before
