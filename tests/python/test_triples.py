"""(T) against PySCF's gccsd_t, uccsd_t and ccsd_t, computed in the test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from pyscf import cc, gto, scf
from pyscf.cc import gccsd_t

import tilecc.cc
from tilecc.cc import triples
from tilecc.space import Space

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"


@pytest.mark.parametrize(
    ("kind", "charge", "spin", "symmetry", "tile"),
    [
        (scf.RHF, 0, 0, True, 4),
        (scf.UHF, 1, 1, True, 4),
        (scf.UHF, 1, 1, False, 3),
        (scf.UHF, -1, 1, True, 100),
    ],
)
def test_matches_pyscf(kind, charge, spin, symmetry, tile):
    # Tiles of 3 and 4 read each tensor through many blocks of every symmetry; 100, one per
    # spin and irrep.
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=symmetry, charge=charge, spin=spin, verbose=0)
    mf = kind(mol).run(conv_tol=1e-12)
    ref = cc.GCCSD(scf.addons.convert_to_ghf(mf), frozen=2)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    ref.run()
    expected = gccsd_t.kernel(ref, ref.ao2mo(), ref.t1, ref.t2)
    mine = tilecc.cc.GCCSD(
        mf, frozen=1, tile=tile, threads=2, conv_tol=1e-11, conv_tol_normt=1e-9
    ).run()
    calls = []
    assert mine.ccsd_t(progress=lambda done, total: calls.append((done, total))) == pytest.approx(
        expected, abs=1e-10
    )
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
    assert mine.e_tot_ccsd_t == pytest.approx(ref.e_tot + expected, abs=1e-8)
    assert calls and calls[-1][0] == calls[-1][1]


def test_uhf_matches_pyscf_uccsd_t():
    # A triplet in C2v: every spin case (aaa, aab, abb, bbb) and several irreps per triple.
    mol = gto.M(
        atom="C 0 0 0; H 0 0.98 0.62; H 0 -0.98 0.62",
        basis="cc-pvdz",
        spin=2,
        symmetry=True,
        verbose=0,
    )
    mf = scf.UHF(mol).run(conv_tol=1e-12)
    ref = cc.UCCSD(mf, frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    ref.run()
    expected = ref.ccsd_t()
    mine = tilecc.cc.CCSD_T(mf, frozen=1, threads=2, conv_tol=1e-11, conv_tol_normt=1e-9).run()
    assert mine.e_t == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("basis", "symmetry", "tile"),
    # cc-pVTZ without symmetry: one symmetry block of W of 150,000 elements per occupied triple.
    [("6-31g", True, 3), ("6-31g", False, 100), ("cc-pvtz", False, 100)],
)
def test_closed_shell_matches_pyscf(basis, symmetry, tile):
    mol = gto.M(atom=WATER, basis=basis, symmetry=symmetry, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    ref = cc.CCSD(mf, frozen=1)
    ref.conv_tol, ref.conv_tol_normt = 1e-11, 1e-9
    ref.run()
    expected = ref.ccsd_t()
    mine = tilecc.cc.CCSD_T(
        mf, frozen=1, tile=tile, threads=2, conv_tol=1e-11, conv_tol_normt=1e-9
    ).run()
    assert isinstance(mine, tilecc.cc.RCCSD)
    assert mine.e_t == pytest.approx(expected, abs=1e-10)
    assert mine.e_tot == pytest.approx(ref.e_tot, abs=1e-8)
    assert mine.e_tot_ccsd_t == pytest.approx(ref.e_tot + expected, abs=1e-8)
    # Both loops, whichever the default chose; the progress reaches its total.
    for loop in ("occupied", "virtual"):
        steps: list[tuple[int, int]] = []
        e_t = triples.restricted_triples(
            mine.t1, mine.t2, mine.problem, lambda *step, seen=steps: seen.append(step), loop
        )
        assert e_t == pytest.approx(expected, abs=1e-10)
        assert steps[-1][0] == steps[-1][1]


def test_closed_shell_executed_flops_are_counted_exactly():
    # Each loop's GEMMs contract over f and m only where both factors are allowed by point group;
    # count those index quadruples independently, from the orbitals' irreps. The occupied loop
    # runs the six orderings of every i <= j <= k; the virtual loop those of every a >= b >= c.
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    mine = tilecc.cc.RCCSD(mf, frozen=1, tile=3, threads=1, conv_tol=1e-6).run()
    occupied, virtual = (
        triples.restricted_kernel(mine.t1, mine.t2, mine.problem, loop)
        for loop in ("occupied", "virtual")
    )
    go = np.asarray(mine.problem.occ.irreps)
    gv = np.asarray(mine.problem.vir.irreps)
    no, nv = len(go), len(gv)
    pair_irreps = np.bitwise_xor.outer(go, go).ravel()  # irrep(q) ^ irrep(r) over all (q, r)

    def vir_loop_flops(x, y, z):
        # f: (px|fy) t_rq^zf; m: (px|mq) t_mr^yz.
        f = sum(
            np.count_nonzero(go == gv[x] ^ gv[y] ^ gv[e])
            * np.count_nonzero(pair_irreps == gv[z] ^ gv[e])
            for e in range(nv)
        )
        m = sum(
            np.count_nonzero((go[:, None] ^ go[None, :]) == gv[x] ^ go[mm])
            * np.count_nonzero(go == go[mm] ^ gv[y] ^ gv[z])
            for mm in range(no)
        )
        return 2 * (f + m)

    def occ_loop_flops(p, q, r):
        # f: (pa|fb) t_rq^cf; m: (pa|mq) t_mr^bc, over all (a, b, c).
        vir_pairs = np.bitwise_xor.outer(gv, gv).ravel()
        f = sum(
            np.count_nonzero(vir_pairs == go[p] ^ gv[e])
            * np.count_nonzero(gv == go[r] ^ go[q] ^ gv[e])
            for e in range(nv)
        )
        m = sum(
            np.count_nonzero(gv == go[p] ^ go[mm] ^ go[q])
            * np.count_nonzero(vir_pairs == go[mm] ^ go[r])
            for mm in range(no)
        )
        return 2 * (f + m)

    def over_orderings(count, triples_):
        return sum(
            count(*(t[s] for s in order))
            for t in triples_
            for order in itertools.permutations(range(3))
        )

    occ_triples = [(i, j, k) for i in range(no) for j in range(i, no) for k in range(j, no)]
    vir_triples = [(a, b, c) for a in range(nv) for b in range(a + 1) for c in range(b + 1)]
    assert occupied.executed_flops == over_orderings(occ_loop_flops, occ_triples)
    assert virtual.executed_flops == over_orderings(vir_loop_flops, vir_triples)


def test_closed_shell_loop_follows_the_cache():
    # The occupied loop while its W of v^3/|G| doubles stays within 2 MiB.
    assert triples.closed_shell_loop(Space.spatial(64)) == "occupied"  # 2.0 MiB
    assert triples.closed_shell_loop(Space.spatial(65)) == "virtual"
    assert triples.closed_shell_loop(Space.spatial(100, irreps=[0, 1, 2, 3] * 25)) == "occupied"


def test_needs_ccsd_amplitudes():
    mol = gto.M(atom="H 0 0 0; H 0 0 0.74", basis="sto-3g", verbose=0)
    mf = scf.RHF(mol).run()
    with pytest.raises(ValueError, match="run CCSD first"):
        tilecc.cc.GCCSD(mf).ccsd_t()
    with pytest.raises(ValueError, match="not DRCCD"):
        tilecc.cc.DRCCD(mf).run().ccsd_t()
    ccd = tilecc.cc.GCCD(mf).run()
    with pytest.raises(ValueError, match="not CCD"):
        ccd.ccsd_t()


def test_executed_flops_are_counted_exactly():
    # The spin-orbital kernel's GEMMs contract over e and m only where both factors are allowed
    # by spin and point group; count those quadruples independently, element by element.
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, charge=1, spin=1, verbose=0)
    mf = scf.UHF(mol).run(conv_tol=1e-10)
    mine = tilecc.cc.GCCSD(mf, frozen=1, tile=3, threads=1, conv_tol=1e-6).run()
    p = mine.problem
    kernel = triples.spin_orbital_kernel(mine.t1, mine.t2, p)
    # What it holds is what the kernel made from the spaces alone says it will (tilecc plan).
    assert kernel.input_bytes == kernel.held_bytes > 0

    def labels(space):
        beta = (np.asarray(space.spins) < 0).astype(int)
        return beta, np.asarray(space.irreps)

    (bo, go), (bv, gv) = labels(p.occ), labels(p.vir)

    def allowed(b1, g1, b2, g2, b3, g3, b4, g4):
        """Whether <12||34>-like elements conserve beta count and irrep (broadcasting)."""
        return (b1 + b2 == b3 + b4) & ((g1 ^ g2) == (g3 ^ g4))

    a, bb, c, e = np.ix_(range(len(bv)), range(len(bv)), range(len(bv)), range(len(bv)))
    m = np.arange(len(bo))[None, None, None, :]
    expected = 0.0
    for i, j, k in itertools.combinations(range(len(bo)), 3):
        for pp, q, r in ((i, j, k), (j, i, k), (k, j, i)):
            # t_qr^ae <pe||bc> and t_pm^bc <qr||ma>
            e_term = allowed(bo[q], go[q], bo[r], go[r], bv[a], gv[a], bv[e], gv[e]) & allowed(
                bo[pp], go[pp], bv[e], gv[e], bv[bb], gv[bb], bv[c], gv[c]
            )
            m_term = allowed(bo[pp], go[pp], bo[m], go[m], bv[bb], gv[bb], bv[c], gv[c]) & allowed(
                bo[q], go[q], bo[r], go[r], bo[m], go[m], bv[a], gv[a]
            )
            expected += 2.0 * (np.count_nonzero(e_term) + np.count_nonzero(m_term))
    assert kernel.executed_flops == expected


def test_the_triples_inputs_are_held_against_the_memory_budget():
    # The kernel's repacked inputs count against the runtime's budget while it lives: with room,
    # the budget holds exactly the bytes the kernel reports and lets them go with it; without,
    # making the kernel is refused in one sentence. Room is taken away by a tensor made to fill
    # the budget but for half the kernel's bytes.
    mol = gto.M(atom=WATER, basis="6-31g", symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    budget = 4 * 10**6
    mine = tilecc.cc.RCCSD(mf, frozen=1, threads=1, conv_tol=1e-6, memory_budget=budget).run()

    def used() -> int:
        return int(mine.context.runtime.memory["used_bytes"])

    before = used()
    for loop in ("occupied", "virtual"):
        kernel = triples.restricted_kernel(mine.t1, mine.t2, mine.problem, loop)
        held = kernel.held_bytes
        assert kernel.input_bytes == held  # known from the spaces alone (tilecc plan)
        assert held > 0 and used() == before + held - 8 * (
            2 * mine.problem.occ.size * mine.problem.vir.size
            + mine.problem.occ.size
            + mine.problem.vir.size
        )  # all but the small vectors (t1, f_ov, orbital energies), which it keeps aside
        del kernel
        assert used() == before
    side = math.isqrt((budget - before - held // 2) // 8)
    filler = tilecc.Tensor([tilecc.Space.spatial(side)] * 2, context=mine.context, name="fill")
    filler.fill_(0.0)
    assert budget - held < used() <= budget
    with pytest.raises(ValueError, match=r"more for the \(T\) step's inputs\); raise the memory"):
        triples.restricted_kernel(mine.t1, mine.t2, mine.problem, "virtual")
    del filler
