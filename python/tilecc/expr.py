"""Labelled-tensor expressions: ``r2["ijab"] += 0.5 * t2["ijcd"] * v["abcd"]``.

An expression is a sum of terms; a term is a coefficient times one tensor (a permuted addition)
or two tensors (a contraction). Assigning it checks the labels against the spaces and the result
against the output's symmetry, then makes one core call per term.

Label conventions (as in NWChem and PySCF): a label starting with i-o is occupied, a-h virtual,
anything else (p, q, r, s, x1, ...) general. Multi-letter labels are written with separators:
``t2["o1,o2,v1,v2"]`` or ``t2["o1", "o2", "v1", "v2"]``; a plain word such as ``"ijab"`` is one
label per letter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tilecc import _core
from tilecc.context import OperandSpec
from tilecc.typing import LabelKey, Labels

if TYPE_CHECKING:
    from tilecc.tensor import Tensor

_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_']*$")
_OCCUPIED_LETTERS = set("ijklmno")
_VIRTUAL_LETTERS = set("abcdefgh")


def parse_labels(key: LabelKey, tensor: Tensor) -> Labels:
    """Split an index key into labels and check them against the tensor.

    >>> import tilecc
    >>> p = tilecc.Space.spatial(2, tile=2)
    >>> t = tilecc.Tensor([p, p, p, p], context=tilecc.Context(threads=1))
    >>> parse_labels("pqrs", t)
    ('p', 'q', 'r', 's')
    >>> parse_labels("o1, o2,v1 v2", t)
    ('o1', 'o2', 'v1', 'v2')
    """
    if isinstance(key, str):
        labels = (
            tuple(x for x in re.split(r"[,\s]+", key.strip()) if x)
            if re.search(r"[,\s]", key)
            else tuple(key)
        )
    elif isinstance(key, Sequence) and all(isinstance(x, str) for x in key):
        labels = tuple(key)
    else:
        raise ValueError(
            f"{tensor.name}: index it with a label string such as 'ijab' or a tuple "
            f"of labels, got {key!r}."
        )
    if len(labels) != tensor.rank:
        raise ValueError(
            f"{tensor.name}[{','.join(labels)}]: {len(labels)} labels for a tensor "
            f"with {tensor.rank} indices; give one label per index."
        )
    for label in labels:
        if not _LABEL.match(label):
            raise ValueError(
                f"{tensor.name}: label {label!r} is not a name (a letter, then "
                f"letters, digits or _)."
            )
    if len(set(labels)) != len(labels):
        twice = next(x for x in labels if labels.count(x) > 1)
        raise ValueError(
            f"{tensor.name}[{','.join(labels)}] uses label {twice!r} twice; traces "
            f"and diagonals are not supported, so give every index its own label."
        )
    for label, space in zip(labels, tensor.spaces):
        expected = _label_kind(label)
        if expected is not None and space.kind not in ("general", expected):
            raise ValueError(
                f"{tensor.name}[{','.join(labels)}]: label {label!r} names an {expected} index "
                f"but that index runs over the {space.kind} space {space.name!r}; use a label "
                f"from {'i-o' if space.kind == 'occupied' else 'a-h'} or a general one (p, q, ...)."
            )
    return labels


def _label_kind(label: str) -> str | None:
    first = label[0].lower()
    if first in _OCCUPIED_LETTERS:
        return "occupied"
    if first in _VIRTUAL_LETTERS:
        return "virtual"
    return None


class _Summable:
    """Addition and subtraction for labelled tensors and terms: both become a Sum."""

    def __add__(self, other: object) -> Sum:
        return as_sum(self) + other

    def __radd__(self, other: object) -> Sum:
        return as_sum(other) + self

    def __sub__(self, other: object) -> Sum:
        return as_sum(self) - other

    def __rsub__(self, other: object) -> Sum:
        return as_sum(other) - self


@dataclass(frozen=True)
class Labelled(_Summable):
    """A tensor with labels on its indices; multiply and add these to build expressions."""

    tensor: Tensor
    labels: Labels

    def __mul__(self, other: object) -> Term:
        return Term(1.0, (self,)) * other

    def __rmul__(self, other: object) -> Term:
        return Term(1.0, (self,)) * other

    def __neg__(self) -> Term:
        return Term(-1.0, (self,))

    # `t[...] += expr` evaluates in place and hands Tensor.__setitem__ a marker, not a Sum.
    def __iadd__(self, other: object) -> Applied:  # type: ignore[override,misc]
        assign(self.tensor, self.labels, other, accumulate=True)
        return Applied(self.tensor, self.labels)

    def __isub__(self, other: object) -> Applied:  # type: ignore[override,misc]
        assign(self.tensor, self.labels, -as_sum(other), accumulate=True)
        return Applied(self.tensor, self.labels)

    def __float__(self) -> float:
        return float(Term(1.0, (self,)))

    def show(self) -> str:
        return f"{self.tensor.name}[{','.join(self.labels)}]"


@dataclass(frozen=True)
class Term(_Summable):
    """coef * factor (a permuted copy) or coef * factor * factor (a contraction)."""

    coef: float
    factors: tuple[Labelled, ...]

    def __mul__(self, other: object) -> Term:
        if isinstance(other, (int, float, np.floating, np.integer)) and not isinstance(other, bool):
            return Term(self.coef * float(other), self.factors)
        if isinstance(other, Labelled):
            other = Term(1.0, (other,))
        if isinstance(other, Term):
            if len(self.factors) + len(other.factors) > 2:
                raise ValueError(
                    f"{self.show()} * {other.show()} multiplies more than two tensors; store the "
                    f"product of two of them in an intermediate tensor first."
                )
            return Term(self.coef * other.coef, self.factors + other.factors)
        raise ValueError(
            f"cannot multiply {self.show()} by {other!r}; multiply by numbers or labelled tensors."
        )

    __rmul__ = __mul__

    def __neg__(self) -> Term:
        return Term(-self.coef, self.factors)

    def __float__(self) -> float:
        return evaluate_scalar(self)

    def show(self) -> str:
        factors = " * ".join(f.show() for f in self.factors)
        return factors if self.coef == 1.0 else f"{self.coef:g} * {factors}"

    def free_labels(self) -> Labels:
        """Labels that appear once (the term's own indices), in order of appearance."""
        all_labels = [x for f in self.factors for x in f.labels]
        return tuple(x for x in all_labels if all_labels.count(x) == 1)


@dataclass(frozen=True)
class Sum:
    """A sum of terms."""

    terms: tuple[Term, ...] = field(default_factory=tuple)

    def __add__(self, other: object) -> Sum:
        return Sum(self.terms + as_sum(other).terms)

    __radd__ = __add__

    def __sub__(self, other: object) -> Sum:
        return Sum(self.terms + (-as_sum(other)).terms)

    def __rsub__(self, other: object) -> Sum:
        return as_sum(other) - self

    def __neg__(self) -> Sum:
        return Sum(tuple(-t for t in self.terms))

    def __mul__(self, other: object) -> Sum:
        if isinstance(other, (int, float, np.floating, np.integer)) and not isinstance(other, bool):
            return Sum(tuple(t * other for t in self.terms))
        raise ValueError(
            "a sum of terms can be multiplied only by a number; expand the product into terms."
        )

    __rmul__ = __mul__

    def show(self) -> str:
        return " + ".join(t.show() for t in self.terms) or "0"


Expression = Labelled | Term | Sum


@dataclass(frozen=True)
class Applied:
    """What ``t[...] += expr`` leaves behind: the work is done, the assignment is a no-op."""

    target: Tensor
    labels: Labels


def as_sum(x: object) -> Sum:
    if isinstance(x, Sum):
        return x
    if isinstance(x, Term):
        return Sum((x,))
    if isinstance(x, Labelled):
        return Sum((Term(1.0, (x,)),))
    raise ValueError(
        f"{x!r} is not a tensor expression; adding plain numbers to tensors is not supported "
        f"(write terms such as 2.0 * t['ijab'])."
    )


# -- checks ------------------------------------------------------------------------------------
def _check_term(term: Term, target: Labelled) -> None:
    """The term's free labels are the target's, each summed label appears in both factors, and a
    label means one space throughout (the core re-checks the last two with its own messages)."""
    free = term.free_labels()
    all_labels = [x for f in term.factors for x in f.labels]
    too_often = [x for x in set(all_labels) if all_labels.count(x) > 2]
    if too_often:
        raise ValueError(
            f"{target.show()} = {term.show()}: label {too_often[0]!r} appears more "
            f"than twice; a label is either free or summed over two factors."
        )
    if sorted(free) != sorted(target.labels):
        missing = [x for x in target.labels if x not in free]
        extra = [x for x in free if x not in target.labels]
        detail = (
            f"label {missing[0]!r} of the output is not a free label of the term"
            if missing
            else f"label {extra[0]!r} is neither summed nor in the output"
        )
        raise ValueError(
            f"{target.show()} = {term.show()}: {detail}; the free labels of every "
            f"term must be exactly the output's labels."
        )
    spaces: dict[str, object] = {}
    for f in (target, *term.factors):
        for label, space in zip(f.labels, f.tensor.spaces):
            seen = spaces.setdefault(label, space)
            if seen != space:
                raise ValueError(
                    f"{target.show()} = {term.show()}: label {label!r} means space "
                    f"{seen.name!r} ({seen.size} orbitals) in one place and {space.name!r} "  # type: ignore[attr-defined]
                    f"({space.size} orbitals) in {f.show()}; a label must mean one space."
                )


def _equivalence_sign(t1: Term, t2: Term, free: frozenset[str]) -> int | None:
    """s such that t1's tensor product equals s times t2's (coefficients aside), using the
    factors' symmetries and renaming summed labels; None if no such s is found."""
    if len(t1.factors) != len(t2.factors):
        return None
    for order in itertools.permutations(range(len(t2.factors))):
        pairs = [(t1.factors[i], t2.factors[j]) for i, j in enumerate(order)]
        if any(a.tensor is not b.tensor for a, b in pairs):
            continue
        for elements in itertools.product(*(a.tensor.group_elements for a, _ in pairs)):
            rename: dict[str, str] = {}
            sign, ok = 1, True
            for (a, b), (perm, s) in zip(pairs, elements):
                # a[La] = s * a[g.La]; the term matches if g.La, renamed, is Lb.
                for k, p in enumerate(perm):
                    src, dst = a.labels[p], b.labels[k]
                    crosses = (src in free or dst in free) and src != dst
                    if crosses or rename.setdefault(src, dst) != dst:
                        ok = False
                sign *= s
            if ok and len(set(rename.values())) == len(rename):
                return sign
    return None


def _check_output_symmetry(target: Labelled, expr: Sum) -> None:
    """Each symmetry T[x] = s T[g.x] of the output must hold for the expression: renaming its free
    labels by g must give s times the same sum of terms."""
    free = frozenset(target.labels)
    for perm, sign in target.tensor.symmetry:
        rename = {target.labels[k]: target.labels[p] for k, p in enumerate(perm)}
        moved = [
            Term(
                t.coef,
                tuple(
                    Labelled(f.tensor, tuple(rename.get(x, x) for x in f.labels)) for f in t.factors
                ),
            )
            for t in expr.terms
        ]
        buckets: list[tuple[Term, float]] = []

        def add(term: Term, coef: float, buckets: list[tuple[Term, float]] = buckets) -> None:
            for i, (rep, total) in enumerate(buckets):
                s = _equivalence_sign(term, rep, free)
                if s is not None:
                    buckets[i] = (rep, total + s * coef)
                    return
            buckets.append((term, coef))

        for t in expr.terms:
            add(t, t.coef)
        for t in moved:
            add(t, -sign * t.coef)
        scale = max((abs(t.coef) for t in expr.terms), default=1.0)
        if any(abs(total) > 1e-12 * scale for _, total in buckets):
            swapped = [target.labels[p] for p in perm]
            raise ValueError(
                f"{target.show()} has the symmetry {target.tensor.name}[{','.join(target.labels)}]"
                f" = {'+' if sign > 0 else '-'}{target.tensor.name}[{','.join(swapped)}] but "
                f"{expr.show()} does not; make the expression respect it (e.g. add the permuted "
                f"terms) or assign to a tensor without that symmetry."
            )


# -- evaluation --------------------------------------------------------------------------------
def assign(target: Tensor, labels: Labels, value: object, *, accumulate: bool) -> None:
    """target[labels] = value, or += with ``accumulate``."""
    expr = as_sum(value)
    out = Labelled(target, labels)
    for term in expr.terms:
        _check_term(term, out)
    _check_output_symmetry(out, expr)
    aliased = any(f.tensor is target for t in expr.terms for f in t.factors)
    if aliased:
        # The output is read by the expression: evaluate into a fresh tensor, then combine.
        from tilecc.tensor import Tensor

        scratch = Tensor.like(target, name=target.name)
        _accumulate(scratch, labels, expr)
        add_permuted(target, labels, scratch, labels, 1.0, 1.0 if accumulate else 0.0)
        return
    if not accumulate:
        target.context.submit(target._core.zero, (target,))
    _accumulate(target, labels, expr)


def add_permuted(
    target: Tensor, labels: Labels, source: Tensor, source_labels: Labels, alpha: float, beta: float
) -> None:
    """target[labels] = beta * target[labels] + alpha * source[source_labels] (one core call, now
    or at the end of a deferred block)."""
    ctx = target.context

    def run() -> None:
        _core.add(
            (target._shape, list(labels), target.name),
            target._core,
            (source._shape, list(source_labels), source.name),
            source._core,
            alpha,
            beta,
            ctx.executor,
        )

    ctx.submit(run, (target, source))


def _accumulate(target: Tensor, labels: Labels, expr: Sum) -> None:
    ctx = target.context
    for term in expr.terms:
        for f in term.factors:
            if f.tensor.context is not ctx:
                raise ValueError(
                    f"{f.show()} belongs to another context than {target.name}; "
                    f"create all tensors of one calculation in one context."
                )
        if len(term.factors) == 1:
            (a,) = term.factors
            add_permuted(target, labels, a.tensor, a.labels, term.coef, 1.0)
        else:
            a, b = term.factors
            ctx.submit_contraction(
                _plan_specs(Labelled(target, labels), term), term.coef, target, a.tensor, b.tensor
            )


def plan_for(target: Labelled, term: Term) -> Any:
    """The (cached) contraction plan of ``target += term`` for a two-factor term: its repr-like
    ``summary()``, task and flop counts tell what executing it will cost."""
    if len(term.factors) != 2:
        raise ValueError(
            f"{term.show()} is not a contraction of two tensors; only those have plans."
        )
    _check_term(term, target)
    return target.tensor.context.plan(*_plan_specs(target, term))


def _plan_specs(target: Labelled, term: Term) -> tuple[OperandSpec, OperandSpec, OperandSpec]:
    """What the plan of ``target += term`` is built from: c's, a's and b's shape and labels."""
    a, b = term.factors
    t = target.tensor
    return (
        (t._shape_id, t._shape, target.labels, t.name),
        (a.tensor._shape_id, a.tensor._shape, a.labels, a.tensor.name),
        (b.tensor._shape_id, b.tensor._shape, b.labels, b.tensor.name),
    )


def evaluate_scalar(expr: Expression) -> float:
    """The value of an expression with no free labels (a full contraction)."""
    from tilecc.tensor import Tensor

    s = as_sum(expr)
    if not s.terms:
        return 0.0
    ctx = s.terms[0].factors[0].tensor.context
    result = Tensor([], name="scalar", context=ctx)
    assign(result, (), s, accumulate=False)
    return float(result.to_dense())
