"""`tilecc simulate`: the discrete-event model gives the times worked out by hand on small
instances (compute, transfers through a network interface, the shared counter, WorkQ's
courier), and the command reports a real job's plans on many ranks, refusing bad platforms and
rank layouts in one sentence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecc.hypergraph import BlockHypergraph
from tilecc.placement import Ranks
from tilecc.simulate import HostWork, load_platform, predict
from tilecc.simulate.engine import simulate_iteration
from tilecc.simulate.host import dispatch_overheads
from tilecc.simulate.platform import Platform
from tilecc.simulate.triples import TriplesWork, simulate_triples
from tilecc.simulate.work import Work

BIN = Path(sys.executable).parent
WATER = Path(__file__).parents[2] / "examples" / "molecules" / "water.xyz"

#: 1 us latency and 1 GB/s between nodes, nothing within one; a counter fetch takes 2 us.
NET = Platform("test", 1, 1.0, 1.0, 0.0, 1e9, 2.0)


def sync(tasks: int) -> float:
    """What ends a contraction on 2 ranks in 2 nodes: an allreduce of the tasks' times (8 bytes
    each) and a barrier, 2 steps each, 1 us a step and the allreduce's bytes at 1 GB/s."""
    return 2 * (1e-6 + 8 * tasks / 1e9) + 2 * 1e-6


def work(seconds: list[float], reads: list[list[int]], net_bytes: list[int], runs: int = 1) -> Work:
    """Tasks of these seconds reading these nets (slots 0, 1, ...), each writing a net of its own
    that lives where it runs... as far as the hash owner allows: tests pick owners through slots."""
    tasks = len(seconds)
    pins = [
        np.array(sorted(t for t in range(tasks) if e in reads[t])) for e in range(len(net_bytes))
    ]
    h = BlockHypergraph(np.array(seconds), [("a", e) for e in range(len(net_bytes))],
                        np.array(net_bytes), pins)  # fmt: skip
    return Work("test", runs, h, [np.array(r) for r in reads], [np.array([], int)] * tasks)


def test_compute_alone_is_the_lpt_makespan_or_the_counters():
    w = work([1.0, 1.0, 1.0, 1.0], [[], [], [], []], [])
    out = simulate_iteration([w], NET, Ranks(2), 1, "static-lpt")
    assert out.seconds == pytest.approx(2.0 + sync(4), rel=1e-12)
    assert [r.compute for r in out.ranks] == [2.0, 2.0]
    # Through the counter on rank 0: every fetch is served one at a time, 2 us each, and rank
    # 1's also cross the network (1 us); each rank takes 3 fetches (the last finds none left).
    out = simulate_iteration([w], NET, Ranks(2), 1, "counter")
    assert out.seconds > 2.0 and out.seconds < 2.0 + 1e-4
    assert out.ranks[0].counter > 0 and out.ranks[1].counter > out.ranks[0].counter


def test_transfers_take_the_latency_and_the_bytes_over_the_bandwidth():
    # One task on each of 2 ranks (nodes of one), each reading net 0 (1e6 bytes); net 0's owner
    # is its hash owner among 2 ranks, so exactly one of the two reads crosses the network.
    w = work([0.5, 0.5], [[0], [0]], [10**6])
    out = simulate_iteration([w], NET, Ranks(2), 1, "static-lpt")
    assert out.bytes == {"local": 10**6, "intra_node": 0, "inter_node": 10**6}
    assert out.seconds == pytest.approx(0.5 + 1e-6 + 1e-3 + sync(2), rel=1e-12)
    assert sum(r.communication for r in out.ranks) == pytest.approx(1e-6 + 1e-3 + 2 * sync(2))
    # Twice per iteration: twice the time and bytes.
    twice = simulate_iteration([work([0.5, 0.5], [[0], [0]], [10**6], runs=2)], NET, Ranks(2),
                               1, "static-lpt")  # fmt: skip
    assert twice.seconds == pytest.approx(2 * out.seconds)
    assert twice.bytes["inter_node"] == 2 * 10**6


def test_each_remote_block_is_got_once_per_rank_with_or_without_workq():
    # Four tasks reading the same remote block, two on each rank of 2 workers: the rank that does
    # not own it gets it once, before either of its tasks computes (by its first task, the other
    # waiting for it, or by WorkQ's courier); then both compute at once.
    w = work([0.1] * 4, [[0]] * 4, [10**6])
    for workq in (0, 2):
        out = simulate_iteration([w], NET, Ranks(2), 2, "static-lpt", workq=workq)
        assert out.bytes == {"local": 2 * 10**6, "intra_node": 0, "inter_node": 10**6}
        assert out.seconds == pytest.approx(0.1 + 1e-6 + 1e-3 + sync(4), rel=1e-9)


def test_workq_workers_hand_their_remote_updates_to_the_courier():
    # Four tasks of 0.1 s on 2 ranks of 1 worker (LPT: tasks 0 and 2 on rank 0, 1 and 3 on rank
    # 1), each writing 1000 bytes into a block the other rank owns (nets 0 and 1 hash to rank 1,
    # 2 and 4 to rank 0). Without WorkQ each worker waits for each update (1 us and 1 us of
    # bytes); with it, the worker goes on and its courier sends both at the end, together.
    h = BlockHypergraph(np.array([0.1] * 4), [("c", e) for e in range(5)], np.array([1000] * 5),
                        [np.array([], int)] * 5)  # fmt: skip
    writes = [np.array([e]) for e in (0, 2, 1, 4)]
    w = Work("test", 1, h, [np.array([], int)] * 4, writes)
    alone = simulate_iteration([w], NET, Ranks(2), 1, "static-lpt")
    assert alone.seconds == pytest.approx(0.2 + 2 * (1e-6 + 1e-6) + sync(4), rel=1e-12)
    workq = simulate_iteration([w], NET, Ranks(2), 1, "static-lpt", workq=2)
    assert workq.seconds == pytest.approx(0.2 + 1e-6 + 2e-6 + sync(4), rel=1e-12)
    assert alone.bytes == workq.bytes == {"local": 0, "intra_node": 0, "inter_node": 4000}


class _StreamModel:
    """A cost model whose copy of n elements takes n ns."""

    @staticmethod
    def permute_seconds(extents: list[int], axes: list[int]) -> float:
        return extents[0] * 1e-9


def test_host_work_is_its_python_and_each_ranks_share_of_the_streams():
    # 10 ms of Python, two operations (1 us each to dispatch) and three batches (2 us each).
    host = HostWork(0.01, [1000, 2000], 3, _StreamModel(), dispatch=(1e-6, 2e-6))
    python = 0.01 + 2e-6 + 6e-6
    # One rank: the Python, and each operation's elements streamed over the workers.
    assert host.seconds(NET, Ranks(1), 1) == pytest.approx(python + 3000e-9, rel=1e-12)
    assert host.seconds(NET, Ranks(1), 2) == pytest.approx(python + 1500e-9, rel=1e-12)
    # Two ranks in two nodes: half the elements each, and a barrier (2 steps of 1 us) after
    # each of the two operations.
    assert host.seconds(NET, Ranks(2), 1) == pytest.approx(python + 1500e-9 + 4e-6, rel=1e-12)
    # Four ranks on a node of two cores: all of it twice as slow (its barriers cost nothing).
    two_cores = Platform("two", 4, 0.0, 1.0, 0.0, 1.0, 0.0, cores_per_node=2)
    assert host.seconds(two_cores, Ranks(4, 4), 1) == pytest.approx(2 * (python + 750e-9))


def test_dispatch_overheads_are_measured_and_small():
    # A run's batch calls the engine, which a planning pass does not; an element-wise
    # operation on 4 x 4 tensors dispatches far less than that.
    per_op, per_batch = dispatch_overheads(1)
    assert 0.0 < per_batch < 0.01 and 0.0 <= per_op < per_batch


def test_a_planning_context_lists_the_element_wise_operations():
    from tilecc import Context, Space, Tensor

    # u = t + t^T zeroes u, then adds t into it twice (each touching u's 36 elements and t's).
    ctx = Context(store="none")
    t, u = (Tensor([Space.spatial(6, tile=3)] * 2, context=ctx) for _ in range(2))
    u["ij"] = t["ij"] + t["ji"]
    assert ctx.planned_operations == [36, 72, 72]


def test_oversubscribed_nodes_run_tasks_slower():
    w = work([1.0, 1.0], [[], []], [])
    two_cores = Platform("two", 4, 0.0, 1.0, 0.0, 1.0, 0.0, cores_per_node=2)
    out = simulate_iteration([w], two_cores, Ranks(4, 4), 1, "static-lpt")
    assert out.seconds == pytest.approx(2.0)  # 4 workers on 2 cores: each task twice as long


def test_scaling_and_speedup_come_from_the_same_model():
    w = work([1.0] * 8, [[]] * 8, [])
    p = predict([w], load_platform("infiniband"), 4, None, 1, "static-lpt")
    # One node of 4 (the platform's nodes hold 32): the syncs cost microseconds within it.
    assert [r for r, _ in p.scaling] == [1, 2, 4]
    assert [s for _, s in p.scaling] == pytest.approx([8.0, 4.0, 2.0], abs=1e-5)
    assert p.speedup == pytest.approx(4.0, abs=1e-4) and p.ranks_per_node == 4
    assert p.triples_seconds is None


def test_triples_steps_are_gathered_shared_and_summed():
    # Two steps: 4 tasks of 1 s (costs equal), then 2 of 3 s and 1 of 2 s. On 2 ranks of 1 worker
    # in 2 nodes: the gather of 1 MB in 10 blocks, half of it from the other node (10 x 0.5 x
    # 1 us of latency, 0.5 MB at 1 GB/s), then each step's LPT share and an allreduce (1 us
    # and 8 bytes at 1 GB/s).
    steps = [(np.ones(4), np.ones(4)), (np.array([3.0, 3.0, 2.0]), np.array([3.0, 3.0, 2.0]))]
    w = TriplesWork("test", steps, 10**6, 10)
    out = simulate_triples(w, NET, Ranks(2), 1)
    gather = 10 * 0.5 * 1e-6 + 0.5e6 / 1e9
    allreduce = 1e-6 + 8 / 1e9
    assert out.seconds == pytest.approx(gather + (2 + allreduce) + (5 + allreduce), rel=1e-12)
    assert sum(r.compute for r in out.ranks) == pytest.approx(4 + 8)
    assert out.bytes == {"local": 10**6, "intra_node": 0, "inter_node": 10**6}
    for r in out.ranks:  # every worker's time is accounted for
        assert r.compute + r.communication + r.idle == pytest.approx(out.seconds)
    # 4 ranks in 2 nodes: each node's first rank gathers the node's one copy (a quarter of the
    # blocks its own, a quarter from its node, half through the network); the others wait.
    nodes = simulate_triples(w, NET, Ranks(4, 2), 1)
    assert nodes.bytes == {"local": 5 * 10**5, "intra_node": 5 * 10**5, "inter_node": 10**6}
    # Then a task of 1 s on each rank, and the 3 s one of the second step; each step's
    # allreduce over 4 ranks takes 2 steps.
    assert nodes.seconds == pytest.approx(gather + (1 + 2 * allreduce) + (3 + 2 * allreduce))
    # One rank of 2 workers: largest first, each to the worker free first; nothing moves.
    one = simulate_triples(w, NET, Ranks(1), 2)
    assert one.seconds == pytest.approx(2 + 5)
    assert one.bytes["intra_node"] == one.bytes["inter_node"] == 0


def test_spread_triples_inputs_are_read_per_node_and_got_per_task():
    # Two occupied orbitals whose slices take 400 kB and 200 kB: by LPT, orbital 0's on node 0,
    # orbital 1's on node 1 (2 nodes of 1 rank, 1 worker each). Each node's first rank reads its
    # share of the 1 MB of inputs (at most 2/3 of them, half through the network); then task 0
    # (2 s, on rank 0) gets orbital 1's slices, and task 1 (1 s, on rank 1) orbital 0's, each
    # a latency of 1 us and its bytes at 1 GB/s.
    steps = [(np.array([2.0, 1.0]), np.array([2.0, 1.0]))]
    w = TriplesWork("test", steps, 10**6, 10, np.array([4e5, 2e5]), [[[0, 1], [0]]])
    out = simulate_triples(w, NET, Ranks(2), 1)
    gather = 10 * (2 / 3) * 0.5 * 1e-6 + int(1e6 * (2 / 3) * 0.5) / 1e9
    allreduce = 1e-6 + 8 / 1e9
    step = max(2 + 1e-6 + 2e5 / 1e9, 1 + 1e-6 + 4e5 / 1e9) + allreduce
    assert out.seconds == pytest.approx(gather + step, rel=1e-12)
    assert out.bytes == {"local": 5 * 10**5, "intra_node": 0, "inter_node": 5 * 10**5 + 6 * 10**5}
    assert out.ranks[0].communication == pytest.approx(gather + 1e-6 + 2e-4 + allreduce)
    # On one node, nothing is spread: the inputs are read whole and no task gets anything.
    one_node = simulate_triples(w, NET, Ranks(2, 2), 1)
    assert one_node.bytes["inter_node"] == 0


def test_a_triples_job_is_simulated_from_its_spaces():
    # The kernel tilecc would run, made from the spaces alone; on one rank and one thread the
    # step is the sum of its tasks' predicted seconds, which it also computes; it refuses energies.
    from pyscf import gto, scf

    import tilecc
    from tilecc import _core
    from tilecc.simulate import works_of
    from tilecc.space import Space

    mol = gto.M(atom=str(WATER), basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run()
    cc = tilecc.CCSD(mf, frozen=1, threads=1, store="none")
    _, step, _ = works_of(cc, triples=True)
    assert step is not None and step.kernel == "ClosedShellTriples"
    out = simulate_triples(step, NET, Ranks(1), 1)
    assert out.seconds == pytest.approx(sum(s.sum() for _, s in step.steps), rel=1e-12)
    assert step.input_bytes > 0 and step.input_blocks > 0
    # Its inputs spread over nodes a slice per occupied orbital: water has 4 active ones.
    assert len(step.slice_bytes) == 4 and (step.slice_bytes > 0).all()
    assert len(step.orbitals) == len(step.steps) and step.orbitals[0][0] == [0]
    work_only = _core.ClosedShellVirtualTriples(Space.spatial(3)._core, Space.spatial(5)._core)
    assert work_only.steps >= 1 and work_only.executed_flops > 0
    ctx = tilecc.Context(threads=1)
    with pytest.raises(ValueError, match="made from its spaces only"):
        work_only.energy_for_step(0, ctx.runtime)


def test_simulate_command_reports_a_real_job(tmp_path):
    out = tmp_path / "sim.json"
    png = tmp_path / "scaling.svg"
    run = subprocess.run(
        [str(BIN / "tilecc"), "simulate", str(WATER), "--basis", "6-31g", "--ranks", "8",
         "--ranks-per-node", "4", "--threads", "1", "--json", str(out), "--png", str(png)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["ranks"] == 8 and result["ranks_per_node"] == 4
    assert result["iteration_seconds"] > result["host_seconds"] > 0
    assert result["triples_seconds"] is None
    assert [r["rank"] for r in result["decomposition"]] == list(range(8))
    assert set(result["decomposition"][0]) == {
        "rank",
        "compute",
        "communication",
        "counter",
        "idle",
    }
    assert result["bytes"]["inter_node"] > 0
    assert [p for p, _ in result["scaling"]] == [1, 2, 4, 8]
    assert png.read_text().lstrip().startswith("<?xml")
    # With (T): its time, decomposition per rank and curve.
    run = subprocess.run(
        [str(BIN / "tilecc"), "simulate", str(WATER), "--basis", "6-31g", "--method", "ccsd(t)",
         "--ranks", "8", "--ranks-per-node", "4", "--threads", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["triples_seconds"] > 0
    assert [r["rank"] for r in result["triples"]["decomposition"]] == list(range(8))
    assert [p for p, _ in result["triples"]["scaling"]] == [1, 2, 4, 8]
    assert "(T) (ClosedShellTriples)" in run.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--platform", "moon"], "no platform 'moon': give a bundled one (ethernet, infiniband,"),
        (["--ranks-per-node", "3"], "8 ranks in nodes of 3 is not a whole number of nodes"),
    ],
)
def test_bad_simulations_are_one_sentence(options, message):
    run = subprocess.run(
        [str(BIN / "tilecc"), "simulate", str(WATER), "--basis", "sto-3g", "--ranks", "8",
         *options],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode != 0
    assert message in " ".join((run.stdout + run.stderr).split())


def test_a_platform_file_with_a_bad_value_is_refused(tmp_path):
    bad = tmp_path / "bad.json"
    fields = json.loads((Path(load_platform.__code__.co_filename).parent / "platforms" /
                         "ethernet.json").read_text())  # fmt: skip
    bad.write_text(json.dumps({**fields, "inter_node_latency_us": -1}))
    with pytest.raises(ValueError, match="inter_node_latency_us must be a non-negative number"):
        load_platform(str(bad))
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="is not a JSON object of the fields"):
        load_platform(str(bad))
