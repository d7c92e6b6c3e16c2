"""Nothing lost, nothing crashes: output paths that would destroy files, writes a rename would
mistreat, corrupt or foreign files, signals, locks, and the convergence test's independence of
the tiling. Each case failed, lost data or ended in a traceback before it was handled."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pyscf import gto, scf

import tilecc
from tilecc import files
from tilecc.cc import checkpoint as ckpt
from tilecc.testing import run_cli, run_results

WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"
QUICK = ["--basis", "sto-3g"]


def one_sentence(run: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    text = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == code, text
    assert words in text, text
    assert "Traceback" not in text


@pytest.fixture
def molecule(tmp_path: Path) -> Path:
    path = tmp_path / "water.xyz"
    path.write_bytes(WATER.read_bytes())
    return path


# -- 1. outputs that would destroy inputs or each other ------------------------------------------
@pytest.mark.parametrize("flag", ["--json", "--checkpoint", "--trace"])
def test_an_output_naming_the_molecule_is_refused(molecule, flag):
    before = molecule.read_bytes()
    one_sentence(run_cli("run", str(molecule), *QUICK, flag, str(molecule)), 2, "is the molecule")
    assert molecule.read_bytes() == before


def test_an_output_reaching_the_molecule_through_a_hard_link_is_refused(molecule, tmp_path):
    other = tmp_path / "other-name.json"
    os.link(molecule, other)
    one_sentence(run_cli("run", str(molecule), *QUICK, "--json", str(other)), 2, "is the molecule")


@pytest.mark.parametrize("second", ["--checkpoint", "--trace"])
def test_two_outputs_in_one_file_are_refused(molecule, tmp_path, second):
    out = tmp_path / "out"
    run = run_cli("run", str(molecule), *QUICK, "--json", str(out), second, str(out))
    one_sentence(run, 2, "are the same file")
    assert not out.exists()


def test_report_refuses_to_draw_over_its_trace(molecule, tmp_path):
    trace = tmp_path / "t.json"
    assert run_cli("run", str(molecule), *QUICK, "--trace", str(trace)).returncode == 0
    before = trace.read_bytes()
    one_sentence(run_cli("report", str(trace), "--png", str(trace)), 2, "is the trace")
    assert trace.read_bytes() == before


# -- 2. writes that a rename would mistreat ------------------------------------------------------
def test_a_symlinked_output_is_written_through(molecule, tmp_path):
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    assert run_cli("run", str(molecule), *QUICK, "--json", str(link)).returncode == 0
    assert link.is_symlink() and run_results(target)["converged"]


def test_json_to_standard_output_and_devices(molecule):
    run = run_cli("run", str(molecule), *QUICK, "--json", "-")
    assert run.returncode == 0, run.stderr
    assert run_results(run.stdout)["converged"]  # the log went to standard error
    assert not Path("-").exists()
    assert run_cli("run", str(molecule), *QUICK, "--json", os.devnull).returncode == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_read_only_and_hard_linked_outputs_are_refused(molecule, tmp_path):
    locked = tmp_path / "locked.json"
    locked.write_text("keep")
    locked.chmod(0o444)  # root could write it; the mode says to keep it all the same
    one_sentence(run_cli("run", str(molecule), *QUICK, "--json", str(locked)), 2, "read-only")
    assert locked.read_text() == "keep"


def test_hard_linked_output_is_refused(molecule, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("keep")
    os.link(a, b)
    one_sentence(run_cli("run", str(molecule), *QUICK, "--json", str(a)), 2, "hard links")
    assert b.read_text() == "keep"


def test_new_files_get_the_umask_and_replaced_files_keep_their_mode(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.txt"
        with files.replaced_atomically(fresh) as f:
            f.write("x")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.txt"
        kept.write_text("y")
        kept.chmod(0o640)
        with files.replaced_atomically(kept) as f:
            f.write("z")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "z"
    finally:
        os.umask(old)


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "r.json"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".r.json.{int(dead.stdout):010d}-00000000.tmp"
    stale.write_text("half")
    with files.replaced_atomically(target) as f:
        f.write("{}")
    assert not stale.exists() and target.read_text() == "{}"


# -- 4. NaN is not hidden ------------------------------------------------------------------------
def test_norm_of_nan_is_nan():
    o = tilecc.Space.spatial(2, tile=1, kind="occupied", name="o")
    t = tilecc.Tensor([o, o], name="t", context=tilecc.Context(threads=1))
    t.fill_(float("nan"))
    assert np.isnan(t.norm())


def test_diverging_amplitudes_stop_the_solver():
    mol = gto.M(atom="H 0 0 0; H 0 0 0.74", basis="6-31g", verbose=0)
    solver = tilecc.cc.GCCSD(scf.RHF(mol).run(), tile=2, threads=1)
    update = solver.update

    def poisoned(amplitudes, problem):
        new = update(amplitudes, problem)
        new[1].fill_(float("nan"))
        return new

    solver.update = poisoned  # type: ignore[method-assign]
    with pytest.raises(ValueError, match="diverged: the amplitudes became NaN or infinite"):
        solver.run()


# -- 5. damaged checkpoints ----------------------------------------------------------------------
def test_a_damaged_checkpoint_is_refused_before_the_scf(molecule, tmp_path):
    state = tmp_path / "cc.ckpt"
    assert run_cli("run", str(molecule), *QUICK, "--checkpoint", str(state)).returncode == 0
    data = bytearray(state.read_bytes())
    for at in range(len(data) // 7, len(data), len(data) // 7):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        state.write_bytes(bytes(damaged))
        run = run_cli("run", str(molecule), *QUICK, "--checkpoint", str(state), "--restart")
        text = run.stdout + run.stderr
        assert "Traceback" not in text
        if run.returncode != 0:  # a flip in unused padding may leave the file readable
            one_sentence(run, 2, "cannot restart")
            assert "RHF energy" not in text  # refused before any SCF


# -- 6. tracebacks where one sentence is promised -------------------------------------------------
def test_a_broken_blas_does_not_break_info():
    env = {**os.environ, "TILECC_BLAS_LIBRARY": "/nonexistent/libblas.so"}
    run = subprocess.run(
        [sys.executable, "-m", "tilecc.cli", "info"], capture_output=True, text=True, env=env
    )
    one_sentence(run, 2, "cannot load the BLAS library")


def test_brackets_in_a_path_are_not_markup(molecule, tmp_path):
    out = tmp_path / "[red]x[not-a-tag].json"
    run = run_cli("run", str(molecule), *QUICK, "--json", str(out))
    assert run.returncode == 0, run.stdout
    assert run_results(out)["converged"]


def test_deeply_nested_json_is_one_sentence(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    one_sentence(run_cli("report", str(deep)), 2, "is not a tilecc trace")


def test_ctrl_c_exits_130_with_the_checkpoint_intact(molecule, tmp_path):
    state = tmp_path / "cc.ckpt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tilecc.cli", "run", str(molecule), "--basis", "cc-pvdz",
         "--tile", "2", "--conv-tol", "1e-12", "--conv-tol-normt", "1e-10",
         "--checkpoint", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not state.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "interrupted" in out and "Traceback" not in out
    restart = run_cli(
        "run", str(molecule), "--basis", "cc-pvdz", "--checkpoint", str(state), "--restart"
    )
    assert restart.returncode == 0, restart.stdout


# -- 7. wisdom warnings reach the user, and a user's file is never overwritten --------------------
def test_cli_shows_wisdom_warnings_and_keeps_a_foreign_file(molecule, tmp_path):
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes, not wisdom")
    env = {**os.environ, "TILECC_WISDOM": str(mine)}
    run = subprocess.run(
        [sys.executable, "-m", "tilecc.cli", "run", str(molecule), *QUICK],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout
    assert "warning" in run.stdout and "wisdom" in run.stdout
    assert mine.read_text() == "my notes, not wisdom"


# -- 8. checks said to run before the job ---------------------------------------------------------
def test_an_output_name_too_long_for_its_temporary_is_refused_first(molecule, tmp_path):
    too_long = tmp_path / ("r" * 235 + ".json")  # fits, but its temporary's name does not
    run = run_cli("run", str(molecule), *QUICK, "--json", str(too_long))
    one_sentence(run, 2, "cannot write the JSON results file")
    assert "RHF energy" not in run.stdout


def test_results_are_kept_when_the_file_cannot_be_written_at_the_end(monkeypatch, molecule):
    from rich.console import Console

    from tilecc import run as run_module

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_module, "write_json_atomically", full)
    opts = run_module.RunOptions(molecule=molecule, basis="sto-3g", json=Path("/tmp/x.json"))
    console = Console(record=True)
    with pytest.raises(run_module.ResultsNotWrittenError, match="No space left") as caught:
        run_module.run(opts, console)
    assert "printed above" in str(caught.value)
    assert '"converged": true' in console.export_text()


# -- 9. convergence that does not depend on the tiling --------------------------------------------
def test_energy_does_not_depend_on_the_tile_size_at_default_thresholds():
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="6-31g",
                symmetry=True, verbose=0)  # fmt: skip
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    energies = {tile: tilecc.CCSD(mf, tile=tile, threads=1).run() for tile in (1, 4, 16)}
    cycles = {tile: cc.cycles for tile, cc in energies.items()}
    values = [cc.e_tot for cc in energies.values()]
    assert max(values) - min(values) < 1e-11, values
    assert len(set(cycles.values())) == 1, cycles


def test_restart_at_another_tile_keeps_diis_and_a_converged_run_does_not_iterate(
    molecule, tmp_path
):
    straight, state = tmp_path / "a.json", tmp_path / "cc.ckpt"
    assert run_cli("run", str(molecule), *QUICK, "--json", str(straight)).returncode == 0
    first = run_cli("run", str(molecule), *QUICK, "--tile", "1", "--max-iter", "4",
                    "--checkpoint", str(state))  # fmt: skip
    assert first.returncode == 3
    resumed = tmp_path / "b.json"
    second = run_cli("run", str(molecule), *QUICK, "--tile", "16", "--checkpoint", str(state),
                     "--restart", "--json", str(resumed))  # fmt: skip
    assert second.returncode == 0, second.stdout
    a, b = run_results(straight), run_results(resumed)
    assert b["iterations"] == a["iterations"]  # DIIS went on where it stopped
    assert b["e_tot"] == pytest.approx(a["e_tot"], abs=1e-10)
    # Converged: a restart for (T) (killed there, say) goes straight on.
    third = run_cli("run", str(molecule), *QUICK, "--method", "ccsd(t)", "--checkpoint",
                    str(state), "--restart")  # fmt: skip
    assert third.returncode == 0, third.stdout
    assert f"\n  {a['iterations'] + 1:3d}  " not in third.stdout


# -- 10. locks ------------------------------------------------------------------------------------
def test_a_checkpoint_in_use_is_refused(molecule, tmp_path):
    state = tmp_path / "cc.ckpt"
    with files.exclusive_lock(state, "checkpoint", wait=False):
        run = run_cli("run", str(molecule), *QUICK, "--checkpoint", str(state))
    one_sentence(run, 2, "in use by another running tilecc job")


def test_concurrent_wisdom_writers_keep_every_entry(tmp_path):
    path = tmp_path / "wisdom.json"
    script = (
        "import sys; from pathlib import Path; from tilecc import wisdom\n"
        "for i in range(20):\n"
        "    wisdom.add_entry(Path(sys.argv[1]), f'{sys.argv[2]}-{i}', {'gemm': [0.0] * 8})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), name]) for name in "abc"]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    entries = json.loads(path.read_text())["entries"]
    assert len(entries) == 60


# -- 11. inputs that hang or ask for unbounded work -----------------------------------------------
def test_a_fifo_molecule_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "mol.xyz"
    os.mkfifo(fifo)
    one_sentence(run_cli("run", str(fifo), *QUICK), 2, "not a regular file")


@pytest.mark.parametrize(
    ("meta", "event"),
    [
        ({"threads": 10**9, "policy": "counter"}, None),
        ({"threads": 2, "policy": "counter"}, {"dur": float("nan")}),
        ({"threads": 2, "policy": "counter"}, {"dur": -5.0}),
        ({"threads": 2, "policy": "counter"}, {"tid": 7}),
    ],
)
def test_a_trace_is_validated_before_use(tmp_path, meta, event):
    base = {"ph": "X", "cat": "phase", "name": "gemm", "tid": 0, "ts": 0.0, "dur": 1.0,
            "args": {"run": 0, "segment": 0}}  # fmt: skip
    events = [base | event] if event else []
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"otherData": meta, "traceEvents": events}))
    one_sentence(
        run_cli("report", str(trace), "--png", str(tmp_path / "c.png")), 2, "not a tilecc trace"
    )


# -- 12. plausible mistakes -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "args", "words"),
    [
        ("2\n\nH 0 0 0\nH 0 0 0\n", QUICK, "cannot coincide"),
        ("1\n\nHe 0 0 0\n", QUICK, "no virtual orbital"),
        ("3\nO 0 0 0\nH 0 0 1\nH 0 1 0\n", QUICK, "second line is a comment"),
        ("2\n\nH 0 0 0\nH 0 0 0.74\n", ["--basis", ""], "--basis is empty"),
    ],
)
def test_plausible_mistakes_are_one_sentence(tmp_path, text, args, words):
    path = tmp_path / "m.xyz"
    path.write_text(text)
    one_sentence(run_cli("run", str(path), *args), 2, words)


def test_a_byte_order_mark_is_read_past(tmp_path):
    path = tmp_path / "m.xyz"
    path.write_bytes(b"\xef\xbb\xbf" + WATER.read_bytes())
    assert run_cli("run", str(path), *QUICK).returncode == 0


def test_dev_zero_is_refused():
    one_sentence(run_cli("run", "/dev/zero", *QUICK), 2, "not a regular file")


# -- 13. one context per thread --------------------------------------------------------------------
def test_a_context_refuses_a_second_python_thread():
    ctx = tilecc.Context(threads=1)
    o = tilecc.Space.spatial(4, tile=2, kind="occupied", name="o")
    t = tilecc.Tensor([o, o], name="t", context=ctx)
    caught: list[BaseException] = []

    def use() -> None:
        try:
            t.fill_(1.0)
            t["ij"] = 2.0 * t["ij"]
        except BaseException as exc:
            caught.append(exc)

    worker = threading.Thread(target=use)
    worker.start()
    worker.join()
    assert caught and "made in another Python thread" in str(caught[0])


# -- 14. the API and the CLI agree -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"conv_tol": -1.0}, "conv_tol must be a positive finite number"),
        ({"conv_tol_normt": float("nan")}, "conv_tol_normt must be a positive finite number"),
        ({"max_cycle": 2.5}, "max_cycle must be a whole number"),
        ({"tile": True}, "tile must be a whole number"),
    ],
)
def test_api_options_are_checked_as_the_cli_checks_them(options, words):
    mol = gto.M(atom="H 0 0 0; H 0 0 0.74", basis="sto-3g", verbose=0)
    with pytest.raises(ValueError, match=words):
        tilecc.CCSD(scf.RHF(mol).run(), **options)


def test_thread_environment_variables(monkeypatch, molecule):
    env = {**os.environ, "TILECC_THREADS": ""}
    run = subprocess.run([sys.executable, "-m", "tilecc.cli", "run", str(molecule), *QUICK],
                         capture_output=True, text=True, env=env)  # fmt: skip
    assert run.returncode == 0, run.stdout  # empty means unset
    env = {**os.environ, "TILECC_SLOW_WORKER": "9:2", "TILECC_THREADS": "2"}
    run = subprocess.run([sys.executable, "-m", "tilecc.cli", "run", str(molecule), *QUICK],
                         capture_output=True, text=True, env=env)  # fmt: skip
    one_sentence(run, 2, "TILECC_SLOW_WORKER slows worker 9")


def test_checkpoint_loader_fills_only_matching_structures(tmp_path):
    """A checkpoint whose blocks do not match the tensors is damaged or foreign: refused."""
    o = tilecc.Space([0, 1], tile=1, kind="occupied", name="o")
    v = tilecc.Space([0, 1, 1], tile=1, kind="virtual", name="v")
    t1 = tilecc.Tensor([o, v], name="t1")
    scf_solution = ckpt.SCFSolution(np.eye(2), np.ones(2), np.zeros(2), -1.0)
    path = tmp_path / "c.ckpt"
    ckpt.save(path, {"format": ckpt.FORMAT}, ckpt.State(1, 0.0, scf_solution, [t1]))
    other = tilecc.Tensor([o, tilecc.Space([0, 0, 1], tile=1, kind="virtual", name="v")])
    with pytest.raises(ValueError, match="is damaged"):
        ckpt.load(path, {"format": ckpt.FORMAT}, [other])


def test_a_chart_of_more_workers_than_it_can_show_is_refused(tmp_path):
    """Within the workers a trace may claim, but beyond what a chart can draw in reasonable
    time: the tables are printed, the chart refused."""
    event = {"ph": "X", "cat": "phase", "name": "gemm", "tid": 59999, "ts": 0.0, "dur": 1.0,
             "args": {"run": 0, "segment": 0}}  # fmt: skip
    trace = tmp_path / "t.json"
    trace.write_text(
        json.dumps({"otherData": {"threads": 60000, "policy": "counter"}, "traceEvents": [event]})
    )
    run = run_cli("report", str(trace), "--png", str(tmp_path / "c.png"))
    one_sentence(run, 2, "more than a chart can show")
    assert not (tmp_path / "c.png").exists()
