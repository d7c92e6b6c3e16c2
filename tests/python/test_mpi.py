"""MPI as a dependency that installs itself: the environment's own mpiexec launches tilecc, which
reports its ranks and (virtual) nodes, prints on rank 0 only, refuses a bad
TILECC_RANKS_PER_NODE, and runs CC jobs distributed: every reference, policy, rank count and
tile size gives the one-process energies, checkpoints do not depend on the rank count, a memory
budget stops every rank at once, and a rank killed ends the job at once with the checkpoint
intact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilecc.testing import run_results

BIN = Path(sys.executable).parent
WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"


def mpiexec(ranks: int, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mpiexec"), "-n", str(ranks), str(BIN / "tilecc"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def job_result(job: Path, ranks: int, *args: str, **env: str) -> dict:
    """Run a Python job script under mpiexec on `ranks` ranks; the JSON its rank 0 printed last."""
    proc = subprocess.run(
        [str(BIN / "mpiexec"), "-n", str(ranks), sys.executable, str(job), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_mpiexec_comes_with_the_environment():
    assert (BIN / "mpiexec").exists()


@pytest.mark.parametrize(
    ("ranks", "per_node", "expected"),
    [(2, "", "2 rank(s), 1 node(s) of 2"), (4, "2", "4 rank(s), 2 virtual node(s) of 2")],
)
def test_info_reports_ranks_and_nodes_once(ranks, per_node, expected):
    run = mpiexec(ranks, "info", TILECC_RANKS_PER_NODE=per_node)
    text = " ".join(run.stdout.split())
    assert run.returncode == 0, run.stdout + run.stderr
    assert expected in text and "MPICH" in text
    assert text.count("tilecc info") == 1  # rank 0 only


def test_bad_ranks_per_node_is_one_sentence():
    run = mpiexec(2, "info", TILECC_RANKS_PER_NODE="3")
    text = " ".join(run.stdout.split())
    assert run.returncode != 0
    assert text.count("TILECC_RANKS_PER_NODE=3 does not divide the 2 ranks") == 1
    run = mpiexec(1, "info", TILECC_RANKS_PER_NODE="two")
    assert "must be a positive whole number" in " ".join(run.stdout.split())


def run_json(tmp_path: Path, name: str, ranks: int, *args: str, **env: str) -> dict:
    """A tilecc run on `ranks` ranks (1: no mpiexec); its JSON results."""
    results = tmp_path / f"{name}.json"
    command = ["run", str(WATER), "--basis", "6-31g", "--json", str(results), "--threads", "1"]
    if ranks == 1:
        proc = subprocess.run(
            [str(BIN / "tilecc"), *command, *args], capture_output=True, text=True, timeout=300
        )
    else:
        proc = mpiexec(ranks, *command, *args, **env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = " ".join(proc.stdout.split())
    assert text.count("normal termination") == 1  # rank 0 alone prints
    return run_results(results)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """The reference jobs, on one process."""
    where = tmp_path_factory.mktemp("one")
    return {
        ("rhf", "ccsd(t)"): run_json(where, "rhf", 1, "--method", "ccsd(t)"),
        ("uhf", "ccsd(t)"): run_json(
            where, "uhf", 1, "--method", "ccsd(t)", "--charge", "1", "--spin", "1"
        ),
        ("rohf", "ccsd(t)"): run_json(
            where,
            "rohf",
            1,
            *("--method", "ccsd(t)", "--charge", "1", "--spin", "1", "--reference", "rohf"),
        ),
    }


def test_the_virtual_triples_loop_across_ranks_gives_the_one_process_energy(tmp_path, one_process):
    # The closed-shell (T) over virtual triples, forced on this small molecule, its tasks shared
    # by 4 ranks in 2 virtual nodes: the one-process job's energy, which the occupied loop
    # computed. Its repacked inputs are held whole once per node, by the node's first rank.
    many = run_json(
        tmp_path, "many", 4, "--method", "ccsd(t)",
        TILECC_TRIPLES_LOOP="virtual", TILECC_RANKS_PER_NODE="2",
    )  # fmt: skip
    one = one_process[("rhf", "ccsd(t)")]
    assert many["e_t"] == pytest.approx(one["e_t"], abs=1e-10)
    held = [r["triples_input_bytes"] for r in many["ranks"]]
    assert held[0] == held[2] > 10 * held[1] and held[1] == held[3] > 0
    assert [r["triples_fetched_bytes"] for r in many["ranks"]] == [0] * 4
    bad = mpiexec(1, "run", str(WATER), "--basis", "6-31g", "--method", "ccsd(t)",
                  TILECC_TRIPLES_LOOP="both")  # fmt: skip
    assert bad.returncode == 2
    assert "set it (or TILECC_TRIPLES_LOOP) to 'occupied' or 'virtual'" in " ".join(
        bad.stdout.split()
    )


@pytest.mark.parametrize(
    ("reference", "ranks", "per_node", "policy", "tile"),
    [
        ("rhf", 2, "", "counter", "4"),
        ("rhf", 4, "2", "static-lpt", "16"),
        ("rhf", 3, "", "tce", "4"),
        ("uhf", 2, "", "steal", "4"),
        ("rohf", 4, "2", "buckets", "16"),
    ],
)
def test_distributed_runs_give_the_one_process_energies(
    tmp_path, one_process, reference, ranks, per_node, policy, tile
):
    # Blocks spread over the ranks (virtual nodes of 2 where given), tasks shared by the policy:
    # the energies are the one-process job's, written once.
    extra = ["--charge", "1", "--spin", "1"] if reference != "rhf" else []
    if reference == "rohf":
        extra += ["--reference", "rohf"]
    many = run_json(
        tmp_path,
        "many",
        ranks,
        *("--method", "ccsd(t)", "--policy", policy, "--tile", tile, *extra),
        TILECC_RANKS_PER_NODE=per_node,
    )
    one = one_process[(reference, "ccsd(t)")]
    assert many["e_tot"] == pytest.approx(one["e_tot"], abs=1e-10)
    assert many["e_t"] == pytest.approx(one["e_t"], abs=1e-10)
    # The (T) kernel's repacked inputs, on each node's first rank: on one node what one process
    # holds; over two, each 4-index array's slices (one per occupied orbital) split between them,
    # nothing held twice but the small vectors every rank has, and every rank's tasks get the
    # slices of their triples that their node does not hold.
    held = [r["triples_input_bytes"] for r in many["ranks"]]
    fetched = [r["triples_fetched_bytes"] for r in many["ranks"]]
    whole = one["ranks"][0]["triples_input_bytes"]
    if per_node:
        assert held[1] == held[3] < whole / 10
        assert sum(held[::2]) == whole + held[1] and max(held[::2]) < 0.6 * whole
        assert all(f > 0 for f in fetched)
    else:
        assert held[0] == whole and all(h < whole for h in held[1:])
        assert fetched == [0] * ranks
    # What moved: nothing between processes alone; gets and accumulates between ranks, across
    # virtual nodes only where they were declared; every rank's figures and their totals.
    assert len(one["ranks"]) == 1 and one["communication"]["gets"] == 0
    assert one["communication"]["bytes_intra_node"] == one["communication"]["bytes_inter_node"] == 0
    moved = many["communication"]
    assert [r["rank"] for r in many["ranks"]] == list(range(ranks))
    assert moved["gets"] > 0 and moved["accumulates"] > 0 and many["peak_rss_bytes"] > 0
    assert (moved["bytes_inter_node"] > 0) == bool(per_node)
    assert moved["bytes_intra_node"] > 0
    assert moved["gets"] == sum(r["communication"]["gets"] for r in many["ranks"])


@pytest.mark.parametrize(
    ("placement", "ranks", "per_node", "policy", "workq", "latency_us"),
    [
        ("hypergraph", 4, "2", "counter", "0", ""),
        ("owner", 2, "", "tce", "0", ""),
        ("random", 3, "", "static-lpt", "4", ""),
        ("", 2, "1", "counter", "4", "5"),
    ],
)
def test_placed_tasks_and_workq_give_the_one_process_energies(
    tmp_path, one_process, placement, ranks, per_node, policy, workq, latency_us
):
    # Each plan's tasks run on the ranks its placement names, the policy ordering each rank's
    # own tasks over its workers (its counter, if any, counts on the rank alone); with WorkQ a
    # courier fetches their blocks ahead, across an emulated network where one is set.
    options = ["--placement", placement] if placement else []
    many = run_json(
        tmp_path,
        "placed",
        ranks,
        *("--method", "ccsd(t)", "--policy", policy, "--tile", "4", "--workq", workq, *options),
        TILECC_RANKS_PER_NODE=per_node,
        TILECC_NET_LATENCY_US=latency_us,
    )
    one = one_process[("rhf", "ccsd(t)")]
    assert many["e_tot"] == pytest.approx(one["e_tot"], abs=1e-10)
    assert many["e_t"] == pytest.approx(one["e_t"], abs=1e-10)
    emulated = many["communication"]["network_emulation"]
    assert emulated == (
        "5 us latency, unlimited bandwidth between nodes (emulated)" if latency_us else "off"
    )


@pytest.mark.parametrize(
    ("grid", "node_grid"), [("default", [1, 2, 1, 1]), ("node-aware", [1, 1, 1, 2])]
)
def test_drccd_on_a_processor_grid_gives_the_one_process_energy(tmp_path, grid, node_grid):
    # Every [o, v, o, v] tensor on a 2 x 2 grid of its virtual indices (the least volume for
    # square (ov) x (ov) products on 4 ranks, no K split), each of 2 virtual nodes a box of it:
    # node-obliviously a column, node-aware the first box of least volume (equal words along
    # rows and columns, so a row: (1, 1, 1, 2) comes first in the search). Tasks run where their
    # output block lives; the energy is one process's.
    one = run_json(tmp_path, "one", 1, "--method", "drccd", "--tile", "4")
    many = run_json(
        tmp_path, "grid", 4, "--method", "drccd", "--tile", "4", "--grid", grid,
        TILECC_RANKS_PER_NODE="2",
    )  # fmt: skip
    assert many["e_corr"] == pytest.approx(one["e_corr"], abs=1e-10)
    assert many["grid"] == {"kind": grid, "grid": [1, 2, 1, 2], "node_grid": node_grid}
    assert one["grid"] is None
    assert many["runtime"]["placement"] == "owner"
    assert many["communication"]["bytes_inter_node"] > 0


def test_tensors_made_like_a_grid_tensor_are_laid_out_on_its_grid():
    """Tensor.like and copy put their blocks where the grid tensor's are (grid_owners over its
    blocks' tiles) and share its layout number, so that a plan placed for one serves the others;
    a tensor made like a hash-placed one stays on the hash owners (layout 0)."""
    job = Path(__file__).with_name("grid_layout_job.py")
    result = job_result(job, 4, TILECC_RANKS_PER_NODE="2")
    assert result["moved"] and result["on_grid"] == [True, True, True]
    layout = result["layouts"][0]
    assert layout > 0 and result["layouts"] == [layout, layout, layout, 0]
    assert result["plain_hashed"] and result["copy_equal"] == 0.0


def test_bad_network_emulation_and_workq_are_one_sentence():
    run = mpiexec(2, "info", TILECC_NET_LATENCY_US="-1")
    text = " ".join((run.stdout + run.stderr).split())
    assert "TILECC_NET_LATENCY_US=-1 is not a non-negative number of microseconds" in text
    run = mpiexec(2, "run", str(WATER), "--basis", "sto-3g", "--workq", "-2")
    assert run.returncode != 0
    assert "workq (tasks a courier fetches ahead) must be" in " ".join(
        (run.stdout + run.stderr).split()
    )


def test_a_checkpoint_written_on_some_ranks_restarts_on_others(tmp_path, one_process):
    checkpoint = tmp_path / "ccsd.h5"
    common = ("--method", "ccsd(t)", "--checkpoint", str(checkpoint))
    # Stopped after 4 iterations on 3 ranks (not converged: exit 3), continued on 2.
    results = tmp_path / "partial.json"
    proc = mpiexec(
        3,
        "run",
        str(WATER),
        *("--basis", "6-31g", "--json", str(results), "--threads", "1", "--max-iter", "4"),
        *common,
    )
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert checkpoint.exists()
    continued = run_json(tmp_path, "continued", 2, *common, "--restart")
    assert continued["e_tot"] == pytest.approx(one_process[("rhf", "ccsd(t)")]["e_tot"], abs=1e-9)


def test_a_job_over_the_memory_budget_stops_on_every_rank(tmp_path):
    # A budget is per rank, and a tensor over it on any rank stops them all at that tensor,
    # with one sentence, rather than leaving the others waiting in a collective.
    run = mpiexec(
        2, "run", str(WATER), "--basis", "6-31g", "--threads", "1", "--memory-budget", "20KB"
    )
    text = " ".join(run.stdout.split())
    assert run.returncode != 0
    assert text.count("over the memory budget") == 1 and "Traceback" not in text
    assert "UCX" not in run.stdout + run.stderr  # no transport noise at the exit


def test_a_rank_killed_ends_the_job_and_leaves_the_checkpoint_intact(tmp_path):
    import signal
    import time

    import h5py

    n2 = tmp_path / "n2.xyz"
    n2.write_text("2\n\nN 0 0 0\nN 0 0 1.0977\n")
    checkpoint = tmp_path / "n2.h5"
    options = ["--basis", "cc-pvtz", "--threads", "1", "--checkpoint", str(checkpoint)]
    tight = ["--conv-tol", "1e-12", "--conv-tol-normt", "1e-10"]
    job = subprocess.Popen(
        [str(BIN / "mpiexec"), "-n", "2", str(BIN / "tilecc"), "run", str(n2), *options, *tight],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert job.poll() is None, "the job ended before a checkpoint was written"
    ranks = subprocess.run(
        ["pgrep", "-f", f"tilecc run {n2}"], capture_output=True, text=True
    ).stdout.split()
    victim = max(int(pid) for pid in ranks)
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    output, _ = job.communicate(timeout=60)
    assert job.returncode != 0 and time.monotonic() - killed < 10  # never a hang
    # The launcher names the dead process by its PID; the run's header maps that to its rank.
    text = " ".join(output.split())
    rank = next(r for r in range(2) if f"{r}: PID {victim} on" in text)
    assert f"PID {victim}" in text.split(f"{rank}: PID {victim}")[1]
    with h5py.File(checkpoint, "r") as h5:  # written atomically: whole, whatever the moment
        assert h5.attrs["cycle"] >= 1


def test_one_trace_holds_every_rank_and_report_reads_it(tmp_path):
    trace = tmp_path / "run.json"
    run = mpiexec(
        2, "run", str(WATER), "--basis", "sto-3g", "--threads", "1", "--trace", str(trace)
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    data = json.loads(trace.read_text())
    assert data["otherData"]["ranks"] == 2 and data["otherData"]["threads"] == 2
    names = {
        e["pid"]: e["args"]["name"] for e in data["traceEvents"] if e["name"] == "process_name"
    }
    assert names == {1: "tilecc rank 0", 2: "tilecc rank 1"}
    workers = {(e["pid"], e["tid"]) for e in data["traceEvents"] if e.get("cat") == "phase"}
    assert workers == {(1, 0), (2, 1)}  # a worker number of its own for every worker of the job
    report = subprocess.run(
        [str(BIN / "tilecc"), "report", str(trace)], capture_output=True, text=True, timeout=60
    )
    assert report.returncode == 0 and "rank" in report.stdout


def test_each_rank_transforms_a_share_of_the_integrals():
    """No rank transforms every integral (or builds them all for the others): each holds a share
    of the batches, and every rank's tensors hold PySCF's integrals."""
    result = job_result(Path(__file__).with_name("integral_share_job.py"), 2)
    assert result["error"] < 1e-10
    assert all(0 < share < result["whole"] for share in result["transformed"])


@pytest.mark.parametrize(
    ("placement", "fetch_once"), [("hash", "on"), ("hypergraph", "on"), ("hash", "off")]
)
def test_a_rank_gets_each_remote_operand_block_once(placement, fetch_once):
    """The bytes of operand blocks a contraction's ranks get from others are exactly what the
    placement's traffic model counts: each block once per rank that uses it away from its owner
    (4 ranks in 2 virtual nodes, 2 threads each). With TILECC_FETCH_ONCE=off every task gets its
    own, more."""
    job = Path(__file__).with_name("kept_fetch_job.py")
    result = job_result(job, 4, placement, TILECC_RANKS_PER_NODE="2", TILECC_FETCH_ONCE=fetch_once)
    assert result["error"] < 1e-10
    if fetch_once == "on":
        assert result["got"] == result["model"] > 0
    else:
        assert result["got"] > result["model"] > 0


def test_a_matrix_product_on_a_node_aware_grid_moves_what_the_model_counts():
    """C = A B laid out block-cyclically on a 2 x 2 processor grid (4 ranks in 2 virtual nodes),
    tasks on their C block's owner: the operand bytes each mapping of the grid onto the nodes
    moves are exactly the traffic model's count for the tensors' owners, and for this shape
    (large M: A's blocks, moving along the grid's rows, are the most) the node-aware mapping
    keeps the rows within nodes and sends 6x fewer bytes between them, moving as much in all."""
    job = Path(__file__).parents[2] / "benchmarks" / "locality" / "grid_job.py"
    out = job_result(job, 4, "48", "8", "12", "4", TILECC_RANKS_PER_NODE="2")
    assert out["default_node_grid"] == [2, 1] and out["node_grid"] == [1, 2]
    default, aware = out["default"], out["node_aware"]
    for run in (default, aware):
        assert run["inter_node"] == run["model_inter_node"]
        assert run["moved"] == run["model_moved"]
        assert run["error"] < 1e-12
    assert default["moved"] == aware["moved"]
    assert 6 * aware["inter_node"] == default["inter_node"] > 0


@pytest.mark.parametrize("switch", ["TILECC_FETCH_ONCE", "TILECC_WORKQ_Q2", "TILECC_WORKQ_SWITCH"])
def test_a_bad_communication_switch_is_one_sentence(switch):
    run = mpiexec(2, "run", str(WATER), "--basis", "sto-3g", **{switch: "sometimes"})
    assert run.returncode != 0
    assert f"{switch} is 'sometimes'; set it to 'on'" in " ".join(run.stdout.split())


def test_a_store_of_one_process_is_refused_on_several_ranks():
    run = mpiexec(2, "run", str(WATER), "--basis", "sto-3g", "--store", "disk")
    text = " ".join(run.stdout.split())
    assert run.returncode == 2
    assert text.count("the 'disk' store keeps a tensor in one process, and this job runs on 2") == 1
