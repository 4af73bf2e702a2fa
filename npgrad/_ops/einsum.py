"""einsum: Einstein summation, composed of npgrad ops the way torch composes it.

Note [How einsum is recorded]
torch's ``einsum`` has no node of its own: it takes diagonals for repeated
subscripts, permutes every operand to one label order, multiplies or contracts
the operands pairwise (``bmm`` on reshaped operands) and finishes with a
``view`` or a ``sum``.  So the result's grad_fn depends on the equation:
  * one operand, nothing summed: ``PermuteBackward0`` (a view);
  * one operand, some subscript summed out: ``SumBackward1``;
  * several operands, nothing summed: ``MulBackward0`` (a broadcast product);
  * several operands, some subscript summed out: ``ViewBackward0`` (a view).
npgrad follows the same four shapes of graph, contracting each pair with
``matmul`` over reshaped operands, so the outermost grad_fn and view-ness are
torch's; the nodes below it (and so the graph's inner names) may differ.
Gradients of any order come from the ops used (permute, diagonal, sum, matmul,
view), so there is no einsum-specific derivative code at all.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .matmul import matmul
from .reduction import sum as _sum
from .shape import contiguous, diagonal, expand, permute, reshape, view
from .signature import batchable, checker

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _parse_term(term: str, op_index: int, ndim: int, ell_ndim: int | None) -> list:
    """Labels of one operand's dims: letters as themselves, ellipsis dims as -k (right-aligned)."""
    if "..." in term:
        head, _, tail = term.partition("...")
        n_named = len(head) + len(tail)
        if n_named > ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_named}) "
                               f"is more than the number of dimensions ({ndim}) for operand "
                               f"{op_index}")
        n_ell = ndim - n_named
        return list(head) + [-(n_ell - k) for k in range(n_ell)] + list(tail)
    if len(term) != ndim:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) "
                           f"does not match the number of dimensions ({ndim}) for operand "
                           f"{op_index} and no ellipsis was given")
    return list(term)


def _check_chars(text: str) -> None:
    for i, c in enumerate(text):
        if c not in _LETTERS and c not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")


def _take_diagonals(x: Tensor, labels: list, op_index: int) -> tuple:
    """Repeated subscripts in one operand select its diagonal (as torch does)."""
    while True:
        seen: dict = {}
        pair = None
        for i, label in enumerate(labels):
            if label in seen:
                pair = (seen[label], i)
                break
            seen[label] = i
        if pair is None:
            return x, labels
        p, q = pair
        sp, sq = x._data.shape[p], x._data.shape[q]
        if sp != sq:
            raise RuntimeError(f"einsum(): subscript {labels[p]} is repeated for operand "
                               f"{op_index} but the sizes don't match, {sq} != {sp}")
        x = diagonal(x, 0, p, q)
        labels = [lb for i, lb in enumerate(labels) if i not in (p, q)] + [labels[p]]


def _sum_out(x: Tensor, labels: list, drop: list) -> tuple:
    dims = tuple(i for i, lb in enumerate(labels) if lb in drop)
    if not dims:
        return x, labels
    return _sum(x, dims), [lb for lb in labels if lb not in drop]


def _contract(a: Tensor, la: list, b: Tensor, lb: list, keep: set, sizes: dict) -> tuple:
    """Contract two operands over their shared labels not in ``keep``, with one matmul."""
    batch = [x for x in la if x in lb and x in keep]
    summed = [x for x in la if x in lb and x not in keep]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]

    def arrange(t: Tensor, labels: list, order: list) -> Tensor:
        t = permute(t, [labels.index(x) for x in order])
        target = tuple(sizes[x] for x in order)
        return t if t._data.shape == target else expand(t, target)

    def size(group: list) -> int:
        n = 1
        for x in group:
            n *= sizes[x]
        return n

    a2 = reshape(arrange(a, la, batch + left + summed), (size(batch), size(left), size(summed)))
    b2 = reshape(arrange(b, lb, batch + summed + right),
                 (size(batch), size(summed), size(right)))
    out = reshape(matmul(a2, b2), tuple(sizes[x] for x in batch + left + right))
    return out, batch + left + right


_EINSUM = checker("einsum(c10::string_view equation, TensorList tensors, *, "
                  "IntArrayRef? path=None)")


def _subscript(n: Any) -> str:
    """One label of the sublist format: 0-25 are ``A``-``Z``, 26-51 ``a``-``z``."""
    if n == Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)")


@batchable  # Note [Batched values] in npgrad.func._batched
def einsum(*args: Any) -> Tensor:
    """Einstein summation over the subscripts of an equation (Note [How einsum is recorded]):
    ``einsum(equation, *operands)``, ``einsum(equation, [operands])`` or the sublist format
    ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``, read as torch's Python reads them; the
    operands are then checked as torch's C op checks them.

    >>> import npgrad
    >>> a = npgrad.tensor([[1., 2.], [3., 4.]])
    >>> npgrad.einsum("ij,jk->ik", a, a)
    tensor([[ 7., 10.],
            [15., 22.]])
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    _EINSUM(equation, operands)
    eq = equation.replace(" ", "")
    _check_chars(eq)
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(operands) < len(terms):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(operands) > len(terms):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    ops: list = []
    sizes: dict = {}
    for k, (term, x) in enumerate(zip(terms, operands)):
        labels = _parse_term(term, k, x._data.ndim, None)
        for i, label in enumerate(labels):
            s = x._data.shape[i]
            prev = sizes.get(label)
            if label in labels[:i]:
                continue  # checked with the diagonal
            if prev is not None and prev != s and prev != 1 and s != 1:
                name = label if isinstance(label, str) else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {s} for operand {k} "
                                   f"which does not broadcast with previously seen size {prev}")
            sizes[label] = s if prev is None or prev == 1 else prev
        ops.append((x, labels))
    n_ell = max([-min([lb for lb in labels if isinstance(lb, int)], default=0)
                 for _, labels in ops], default=0)
    ell = [-(n_ell - k) for k in range(n_ell)]
    if arrow:
        out_labels = []
        for i, c in enumerate(rhs.replace("...", "\0")):
            if c == "\0":
                out_labels += ell
                continue
            if c in out_labels:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            out_labels.append(c)
    else:
        counts: dict = {}
        for _, labels in ops:
            for lb in labels:
                if isinstance(lb, str):
                    counts[lb] = counts.get(lb, 0) + 1
        out_labels = ell + sorted(c for c, n in counts.items() if n == 1)
    ops = [_take_diagonals(x, labels, k) for k, (x, labels) in enumerate(ops)]
    summed: list = []
    for _, labels in ops:
        summed += [lb for lb in labels if lb not in out_labels and lb not in summed]

    if len(ops) == 1:
        x, labels = ops[0]
        canonical = out_labels + summed
        x = permute(x, [labels.index(lb) for lb in canonical])
        if summed:
            return _sum(x, tuple(range(len(out_labels), len(canonical))))
        return x

    if not summed:  # a broadcast product in the output's label order
        result = None
        for x, labels in ops:
            present = [lb for lb in out_labels if lb in labels]
            x = permute(x, [labels.index(lb) for lb in present])
            x = reshape(x, tuple(x._data.shape[present.index(lb)] if lb in present else 1
                                 for lb in out_labels))
            result = x if result is None else result * x
        return result

    cur, lcur = ops[0]
    for k in range(1, len(ops)):
        nxt, lnxt = ops[k]
        keep = set(out_labels)
        for _, later in ops[k + 1:]:
            keep.update(later)
        # a label only one side has and nobody needs later is summed out first
        cur, lcur = _sum_out(cur, lcur, [lb for lb in lcur if lb not in keep and lb not in lnxt])
        nxt, lnxt = _sum_out(nxt, lnxt, [lb for lb in lnxt if lb not in keep and lb not in lcur])
        cur, lcur = _contract(cur, lcur, nxt, lnxt, keep, sizes)
    cur, lcur = _sum_out(cur, lcur, [lb for lb in lcur if lb not in out_labels])
    cur = contiguous(permute(cur, [lcur.index(lb) for lb in out_labels]))
    return view(cur, tuple(sizes[lb] for lb in out_labels))
