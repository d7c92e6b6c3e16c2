"""Placements of a plan's tasks on ranks (paper 004, section 5): the bytes each moves are counted
exactly (checked by hand on a small instance and against the sum over blocks of the ranks that
use them), each placement does what its name says, the hypergraph placement meets the paper's
targets on its C[abcd] case, and a distributed run under any placement gives the one-process
energies (test_mpi.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc
from tilecc import _core
from tilecc.expr import _plan_specs
from tilecc.hypergraph import BlockHypergraph
from tilecc.placement import PLACEMENTS, Placement, Ranks, place, traffic
from tilecc.placement.schemes import EPSILON, hash_owners

BIN = Path(sys.executable).parent
BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def small() -> BlockHypergraph:
    """Four tasks; net 0 (100 bytes, read) by tasks 0, 1, 2; net 1 (10 bytes, read) by 2, 3; net
    2 (1 byte, written) by 3."""
    pins = [np.array([0, 1, 2]), np.array([2, 3]), np.array([3])]
    return BlockHypergraph(
        np.array([1.0, 2.0, 3.0, 4.0]),
        [("a", 0), ("b", 1), ("c", 2)],
        np.array([100, 10, 1]),
        pins,
    )


def test_traffic_counts_each_block_once_per_rank_that_uses_it_away_from_its_owner():
    # Ranks 0-3 in nodes of 2. Tasks on ranks 0, 1, 2, 2; owners of the nets: 0, 3, 2.
    h = small()
    p = Placement("by hand", np.array([0, 1, 2, 2]), np.array([0, 3, 2]))
    t = traffic(h, p, Ranks(4, 2))
    # Net 0 is used on ranks 0 (its owner: local), 1 (same node) and 2 (the other node); net 1
    # on rank 2 only (owner 3, same node); net 2 on its owner, rank 2.
    assert (t.bytes_local, t.bytes_intra_node, t.bytes_inter_node) == (101, 110, 100)
    assert t.loads.tolist() == [1.0, 2.0, 7.0, 0.0]
    assert t.imbalance == pytest.approx(7.0 / 2.5 - 1.0)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_traffic_adds_up_over_blocks_and_ranks(data):
    tasks = data.draw(st.integers(1, 12))
    nets = data.draw(st.integers(1, 8))
    ranks = Ranks(*data.draw(st.sampled_from([(1, 1), (2, 1), (4, 2), (6, 3)])))
    pins = [
        np.array(sorted(data.draw(st.sets(st.integers(0, tasks - 1), min_size=1))))
        for _ in range(nets)
    ]
    sizes = np.array(data.draw(st.lists(st.integers(1, 1000), min_size=nets, max_size=nets)))
    h = BlockHypergraph(np.ones(tasks), [("a", e) for e in range(nets)], sizes, pins)
    task_rank = np.array(data.draw(st.lists(st.integers(0, ranks.size - 1), min_size=tasks,
                                            max_size=tasks)))  # fmt: skip
    owner = np.array(data.draw(st.lists(st.integers(0, ranks.size - 1), min_size=nets,
                                        max_size=nets)))  # fmt: skip
    t = traffic(h, Placement("drawn", task_rank, owner), ranks)
    # Every (block, rank that uses it) pair is counted once, in exactly one class.
    pairs = sum(int(sizes[e]) * len(set(task_rank[pins[e]].tolist())) for e in range(nets))
    assert t.bytes_local + t.bytes_intra_node + t.bytes_inter_node == pairs
    # All on the owners' rank: nothing moves.
    alone = traffic(h, Placement("one", np.zeros(tasks, int), np.zeros(nets, int)), ranks)
    assert alone.bytes_moved == 0 and alone.bytes_local == int(sizes.sum())


def paper_case(k: int) -> BlockHypergraph:
    sys.path.insert(0, str(BENCHMARKS / "locality"))
    try:
        from run import hypergraph
    finally:
        sys.path.pop(0)
    return hypergraph(k)


@pytest.fixture(scope="module")
def c_abcd() -> BlockHypergraph:
    return paper_case(4)


def test_hypergraph_placement_meets_the_papers_targets(c_abcd):
    # Paper 004's C[abcd] = A[abi] B[icd], V = 4 O, at 32 ranks: bytes are exact counts.
    ranks = Ranks(32)
    moved = {name: traffic(c_abcd, place(c_abcd, name, ranks), ranks) for name in PLACEMENTS}
    hyper = moved["hypergraph"]
    assert hyper.bytes_moved <= 0.5 * moved["random"].bytes_moved
    assert hyper.bytes_moved <= 0.8 * moved["owner"].bytes_moved
    assert hyper.imbalance <= 0.05
    # With its blocks left on their hash owners it still moves less than owner's placement.
    fixed = place(c_abcd, "hypergraph", ranks, hash_owners(c_abcd, ranks))
    assert traffic(c_abcd, fixed, ranks).bytes_moved < moved["owner"].bytes_moved


def test_two_levels_cut_inter_node_bytes_first(c_abcd):
    nodes, flat = Ranks(16, 4), Ranks(16)
    two_level = traffic(c_abcd, place(c_abcd, "hypergraph", nodes), nodes)
    # A partition blind to nodes groups its parts into nodes however they fall: its parts
    # numbered at random.
    flat_parts = place(c_abcd, "hypergraph", flat)
    shuffle = np.random.default_rng(7).permutation(16)
    blind = Placement("blind", shuffle[flat_parts.task_rank], shuffle[flat_parts.owner])
    one_level = traffic(c_abcd, blind, nodes)
    hashed = traffic(c_abcd, place(c_abcd, "hash", nodes), nodes)
    assert two_level.bytes_moved == pytest.approx(one_level.bytes_moved, rel=0.25)
    assert two_level.bytes_inter_node < 0.8 * one_level.bytes_inter_node
    assert two_level.bytes_inter_node < 0.5 * hashed.bytes_inter_node
    assert two_level.imbalance <= 2 * EPSILON + 0.01


def test_each_placement_does_what_its_name_says(c_abcd):
    ranks = Ranks(8)
    owners = hash_owners(c_abcd, ranks)
    slots = [slot for _, slot in c_abcd.nets]
    assert owners.tolist() == [_core.hash_owners(max(slots) + 1, 8)[s] for s in slots]
    # owner: every task where its first output block lives.
    p = place(c_abcd, "owner", ranks)
    for e, pins in enumerate(c_abcd.pins):
        if c_abcd.written(e):
            assert all(p.task_rank[t] == owners[e] for t in pins)
    # hash: LPT of the predicted costs, as the static policies split tasks over ranks.
    hashed = place(c_abcd, "hash", ranks)
    assert hashed.task_rank.tolist() == _core.lpt_bins(c_abcd.task_weights.tolist(), 8)
    # random: the same draw on every call (every rank), every rank used.
    a, b = place(c_abcd, "random", ranks), place(c_abcd, "random", ranks)
    assert (a.task_rank == b.task_rank).all() and set(a.task_rank.tolist()) == set(range(8))
    # hypergraph with owners given keeps them; without, each block goes where it is used most.
    fixed = place(c_abcd, "hypergraph", ranks, owners)
    assert (fixed.owner == owners).all()
    free = place(c_abcd, "hypergraph", ranks)
    for e, pins in enumerate(c_abcd.pins):
        uses = np.bincount(free.task_rank[pins], minlength=8)
        assert uses[free.owner[e]] == uses.max()


def test_bad_placement_names_and_nodes_are_one_sentence(c_abcd):
    with pytest.raises(ValueError, match="unknown placement 'nearest'; choose one of"):
        place(c_abcd, "nearest", Ranks(4))
    with pytest.raises(ValueError, match="6 ranks in nodes of 4 is not a whole number"):
        Ranks(6, 4)
    with pytest.raises(ValueError, match="unknown placement 'nearest'; valid ones are"):
        tilecc.Context(threads=1, placement="nearest")
    run = subprocess.run(
        [str(BIN / "tilecc"), "run", "x.xyz", "--basis", "sto-3g", "--placement", "nearest"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "unknown placement 'nearest'; valid ones are: hash, random, owner, hypergraph." in (
        " ".join((run.stdout + run.stderr).split())
    )


def test_a_partitioner_that_fails_falls_back_to_the_hash_placement(monkeypatch, c_abcd):
    from tilecc import context as context_module

    real_place = context_module.place

    def failing(h, name, ranks, owners=None):
        if name == "hypergraph":
            raise RuntimeError("partitioner timed out")
        return real_place(h, name, ranks, owners)

    class World:
        size, ranks_per_node, leader = 4, 2, True

    ctx = tilecc.Context(threads=1, placement="hypergraph", store="none")
    o, v = tilecc.Space.spatial(4, tile=2), tilecc.Space.spatial(6, tile=2)
    a, b = tilecc.Tensor([o, v], context=ctx), tilecc.Tensor([v, v], context=ctx)
    c = tilecc.Tensor([o, v], context=ctx)
    # Plans are placed on rank 0 of (what this process is told is) a run of 4 ranks.
    monkeypatch.setattr(context_module, "place", failing)
    monkeypatch.setattr(context_module.mpi, "world", lambda: World())
    with pytest.warns(UserWarning, match="failed \\(partitioner timed out\\); its tasks take the"):
        plan = tilecc.plan_for(c["ia"], a["ib"] * b["ba"])
    planned = ctx._built(*_plan_specs(c["ia"], a["ib"] * b["ba"]))
    h = BlockHypergraph.of_plan(plan)
    expected = real_place(h, "hash", Ranks(4, 2), hash_owners(h, Ranks(4, 2))).task_rank
    assert list(planned.schedule.placement) == expected.tolist()
