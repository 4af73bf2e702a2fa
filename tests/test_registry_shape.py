"""The copy and shape ops as General entries (Note [The general entry kind] in
npgrad/_ops/registry.py): clone, flip, repeat/tile, cat, stack, ``to``, roll, rot90, tril/triu,
diag_embed/diag, trace, narrow_copy, block_diag, the select/slice/diagonal scatters and the
Select/Slice/DiagonalBackwardBackward0 nodes of the view ops' double backward.

Against torch: values, dtypes, grad_fn names, the ``_saved_*`` names ``dir(grad_fn)`` lists
and their values (a negative int64 read unsigned, as torch reads it), ``next_functions``,
gradients, second-order gradients and the nodes they record, forward-mode tangents (with
``forward_ad``) and error texts; gradcheck in float64.  Also the entry kind itself: the node
classes are the entries' and defined nowhere else, a TensorList entry, hidden kept values,
and the lean record path.
"""
from __future__ import annotations

import pathlib
import re
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad._ops import arrange, shape
from npgrad._ops.registry import REGISTRY, General

from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")

A = np.arange(12, dtype=np.float64).reshape(3, 4) / 5.0 - 1.0
B = np.arange(8, dtype=np.float64).reshape(2, 4) / 3.0 + 0.25
V = np.array([0.5, -1.0, 2.0, 0.75])
C3 = np.array([1.5, -0.5, 0.25])

# name -> (inputs, op on them in either library, the entry whose node it records)
CASES: dict[str, tuple[tuple, Callable[..., Any], General]] = {
    "clone": ((A,), lambda m, x: x.clone(), shape.CLONE),
    "contiguous": ((A,), lambda m, x: x.t().contiguous(), shape.CLONE),
    "flip": ((A,), lambda m, x: x.flip(0, -1), shape.FLIP),
    "flip_fn": ((A,), lambda m, x: m.flip(x, (-1,)), shape.FLIP),
    "fliplr": ((A,), lambda m, x: m.fliplr(x), shape.FLIP),
    "repeat": ((A,), lambda m, x: x.repeat(2, 1, 3), shape.REPEAT),
    "tile": ((A,), lambda m, x: x.tile((2,)), shape.REPEAT),
    "cat": ((A, B), lambda m, x, y: m.cat([x, y]), shape.CAT),
    "cat_neg": ((A, A), lambda m, x, y: m.cat([x, y], -1), shape.CAT),
    "cat_legacy_empty": ((A, np.zeros(0)), lambda m, x, y: m.cat([x, y]), shape.CAT),
    "hstack": ((A, A), lambda m, x, y: m.hstack([x, y]), shape.CAT),
    "stack": ((A, A), lambda m, x, y: m.stack([x, y], 1), shape.STACK),
    "stack_neg": ((A, A), lambda m, x, y: m.stack([x, y], -1), shape.STACK),
    "to_float32": ((A,), lambda m, x: x.to(m.float32), shape.TO_COPY),
    "float": ((A,), lambda m, x: x.float(), shape.TO_COPY),
    "to_complex": ((A,), lambda m, x: (x.to(m.complex128) * (1 + 2j)).real.clone(),
                   shape.TO_COPY),
    "roll": ((A,), lambda m, x: x.roll(1, 0), arrange.ROLL),
    "roll_flat": ((A,), lambda m, x: x.roll(-2), arrange.ROLL),
    "roll_dims": ((A,), lambda m, x: x.roll((1, -3), (0, -1)), arrange.ROLL),
    "rot90": ((A,), lambda m, x: x.rot90(), arrange.ROT90),
    "rot90_neg": ((A,), lambda m, x: x.rot90(-1, [1, 0]), arrange.ROT90),
    "tril": ((A,), lambda m, x: x.tril(1), arrange.TRIL),
    "triu_neg": ((A,), lambda m, x: m.triu(x, -1), arrange.TRIU),
    "diag_embed": ((A,), lambda m, x: m.diag_embed(x, 1, 0, 2), arrange.DIAG_EMBED),
    "diag_embed_neg": ((A,), lambda m, x: m.diag_embed(x, -1, -1, -3), arrange.DIAG_EMBED),
    "diag_vector": ((V,), lambda m, x: m.diag(x, -1), arrange.DIAG_EMBED),
    "diagflat": ((A,), lambda m, x: m.diagflat(x), arrange.DIAG_EMBED),
    "diag_matrix": ((A,), lambda m, x: m.diag(x, 1), arrange.DIAGONAL_COPY),
    "diag_matrix_neg": ((A,), lambda m, x: x.diag(-1), arrange.DIAGONAL_COPY),
    "trace": ((A,), lambda m, x: x.trace(), arrange.TRACE),
    "narrow_copy": ((A,), lambda m, x: x.narrow_copy(1, 1, 2), arrange.NARROW_COPY),
    "narrow_copy_neg": ((A,), lambda m, x: x.narrow_copy(-1, -3, 2), arrange.NARROW_COPY),
    "block_diag": ((A, V, np.array(2.0)), lambda m, x, y, z: m.block_diag(x, y, z),
                   arrange.BLOCK_DIAG),
    "select_scatter": ((A, V), lambda m, x, s: m.select_scatter(x, s, -2, -1),
                       arrange.SELECT_SCATTER),
    "slice_scatter": ((A, A[:, :2] * 3.0), lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2),
                      arrange.SLICE_SCATTER),
    "slice_scatter_open": ((A, A * 2), lambda m, x, s: m.slice_scatter(x, s),
                           arrange.SLICE_SCATTER),
    "diagonal_scatter": ((A, C3), lambda m, x, s: m.diagonal_scatter(x, s),
                         arrange.DIAGONAL_SCATTER),
    "diagonal_scatter_off": ((A, C3), lambda m, x, s: m.diagonal_scatter(x, s, -1, -1, 0),
                             arrange.DIAGONAL_SCATTER),
}

# the view ops whose backward records torch's ``*BackwardBackward0`` node
DOUBLE: dict[str, tuple[Callable[[Any], Any], General]] = {
    "select": (lambda x: x.select(0, 1), shape.SELECT_BACKWARD),
    "select_neg": (lambda x: x.select(-1, -1), shape.SELECT_BACKWARD),
    "slice": (lambda x: x[:, 1:3], shape.SLICE_BACKWARD),
    "slice_neg": (lambda x: x[:, -3:-1], shape.SLICE_BACKWARD),
    "narrow": (lambda x: x.narrow(0, 1, 2), shape.SLICE_BACKWARD),
    "diagonal": (lambda x: x.diagonal(), shape.DIAGONAL_BACKWARD),
    "diagonal_neg": (lambda x: x.diagonal(-1, -1, -2), shape.DIAGONAL_BACKWARD),
    "diag_copy_backward": (lambda x: x.diag(1), shape.DIAGONAL_BACKWARD),
    "narrow_copy_backward": (lambda x: x.narrow_copy(1, -3, 2), shape.SLICE_BACKWARD),
    "narrow_copy_backward_pos": (lambda x: x.narrow_copy(0, 1, 2), shape.SLICE_BACKWARD),
}


def _saved(fn: Any) -> dict:
    """The ``_saved_*`` attributes ``dir`` lists, with their values (tensors as arrays)."""
    out = {}
    for name in dir(fn):
        if name.startswith("_saved_"):
            value = getattr(fn, name)
            out[name] = value.detach().numpy() if hasattr(value, "detach") else value
    return out


def _leaves(m: Any, arrays: tuple) -> list:
    return [m.tensor(a, requires_grad=True) for a in arrays]


def _chain(fn: Any) -> list:
    return [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


@pytest.mark.parametrize("name", CASES)
def test_values_nodes_saved_values_and_grads_match_torch(name: str) -> None:
    arrays, op, entry = CASES[name]
    results = []
    for m in (torch, npgrad):
        xs = _leaves(m, arrays)
        y = op(m, *xs)
        fn = y.grad_fn
        node = fn
        if name == "to_complex":  # Clone, Select, ViewAsReal, Mul, then ToCopy
            for _ in range(4):
                node = node.next_functions[0][0]
        grad = m.tensor(np.linspace(-1.0, 1.0, y.numel()).reshape(tuple(y.shape)),
                        dtype=y.dtype)
        grads = m.autograd.grad(y, xs, grad)
        results.append((y.detach().numpy(), str(y.dtype), type(node).__name__, _saved(node),
                        _chain(node), [g.numpy() for g in grads]))
        if m is npgrad:
            assert type(node) is entry.node
            assert "_saved_fields" not in dir(node)
    (ty, tdt, tname, tsaved, tchain, tgrads), (ny, ndt, nname, nsaved, nchain, ngrads) = results
    np.testing.assert_allclose(ny, ty, rtol=1e-6)
    assert (ndt, nname, nchain) == (tdt.replace("torch", "npgrad"), tname, tchain)
    assert sorted(nsaved) == sorted(tsaved)
    for key in tsaved:
        assert nsaved[key] == tsaved[key], key
    for t, n in zip(tgrads, ngrads):
        np.testing.assert_allclose(n, t, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in CASES if n != "to_float32" and n != "float"])
def test_gradcheck(name: str) -> None:
    arrays, op, _ = CASES[name]
    xs = _leaves(npgrad, arrays)
    assert npgrad.autograd.gradcheck(lambda *a: op(npgrad, *a), xs)
    assert npgrad.autograd.gradgradcheck(lambda *a: op(npgrad, *a), xs)


@pytest.mark.parametrize("name", CASES)
def test_tangents_match_torch_forward_ad(name: str) -> None:
    arrays, op, _ = CASES[name]
    rng = np.random.default_rng(len(name))
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    outs = []
    for m in (torch, npgrad):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            duals = [fwad.make_dual(m.tensor(a), m.tensor(t)) for a, t in zip(arrays, tangents)]
            primal, tangent = fwad.unpack_dual(op(m, *duals))
            assert tangent is not None
            outs.append((primal.numpy().copy(), tangent.numpy().copy(), str(tangent.dtype)))
    (tp, tt, tdt), (np_, nt, ndt) = outs
    np.testing.assert_allclose(np_, tp, rtol=1e-6)
    np.testing.assert_allclose(nt, tt, rtol=1e-6, atol=1e-12)
    assert ndt == tdt.replace("torch", "npgrad")


def test_tangent_of_one_input_of_two() -> None:
    """A scatter with a tangent on ``src`` only: ``self``'s counts as zeros."""
    outs = []
    for m in (torch, npgrad):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            s = fwad.make_dual(m.tensor(V), m.tensor(V * 3))
            y = m.select_scatter(m.tensor(A), s, 0, 1)
            outs.append(fwad.unpack_dual(y).tangent.numpy().copy())
    np.testing.assert_allclose(outs[1], outs[0])


@pytest.mark.parametrize("name", DOUBLE)
def test_double_backward_records_torchs_node(name: str) -> None:
    op, entry = DOUBLE[name]
    results = []
    for m in (torch, npgrad):
        x = m.tensor(A, requires_grad=True)
        z = op(x)
        g = m.tensor(np.linspace(0.5, 2.0, z.numel()).reshape(tuple(z.shape)),
                     requires_grad=True)
        gx, = m.autograd.grad(z, x, g, create_graph=True)
        fn = gx.grad_fn
        # the gradient's node and what the gradient of gradient is
        ggx, = m.autograd.grad(gx, g, m.tensor(A * 2.0 - 1.0))
        results.append((type(fn).__name__, _saved(fn), _chain(fn), gx.detach().numpy(),
                        ggx.numpy()))
        if m is npgrad:
            assert type(fn) is entry.node
    (tname, tsaved, tchain, tgx, tggx), (nname, nsaved, nchain, ngx, nggx) = results
    assert (nname, nchain) == (tname, tchain)
    assert nsaved == tsaved
    np.testing.assert_allclose(ngx, tgx)
    np.testing.assert_allclose(nggx, tggx)


@pytest.mark.parametrize("name", ["select", "slice", "diagonal"])
def test_double_backward_tangents_match_torch(name: str) -> None:
    """Forward over reverse: the placed gradient's tangent is the placed tangent."""
    op = DOUBLE[name][0]
    outs = []
    for m in (torch, npgrad):
        fwad = m.autograd.forward_ad
        x = m.tensor(A, requires_grad=True)
        z = op(x)
        with fwad.dual_level():
            g = fwad.make_dual(m.ones(tuple(z.shape), dtype=m.float64),
                               m.tensor(np.linspace(-1, 1, z.numel()).reshape(tuple(z.shape))))
            gx, = m.autograd.grad(z, x, g)
            outs.append(fwad.unpack_dual(gx).tangent.numpy().copy())
    np.testing.assert_allclose(outs[1], outs[0])


ERRORS = [
    "m.cat([m.ones(2), m.tensor(1.)])",
    "m.cat([m.ones(2, 3), m.ones(2)])",
    "m.cat([m.ones(2, 3), m.ones(3, 2)], 1)",
    "m.stack([m.ones(2), m.ones(3)])",
    "m.ones(2, 3).repeat(2)",
    "m.ones(3).tril()",
    "m.ones(2, 3).roll((1, 2), (0,))",
    "m.ones(2, 3).rot90(1, (0, 0))",
    "m.diag_embed(m.ones(3), 0, 1, 1)",
    "m.ones(2, 3, 4).trace()",
    "m.ones(2, 3).narrow_copy(1, 2, 2)",
    "m.select_scatter(m.ones(2, 3), m.ones(2), 0, 1)",
    "m.slice_scatter(m.ones(2, 3), m.ones(2, 2), 1)",
    "m.diagonal_scatter(m.ones(2, 3), m.ones(3))",
    "m.block_diag(m.ones(2, 2, 2))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, lambda m: {"m": m})


def test_no_grad_and_integer_results_record_nothing() -> None:
    x = npgrad.tensor(A, requires_grad=True)
    with npgrad.no_grad():
        for y in (x.clone(), x.flip(0), npgrad.cat([x, x]), x.float(), x.tril()):
            assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    for y in (npgrad.cat([npgrad.ones(2, dtype=npgrad.int64)] * 2), x.to(npgrad.int32),
              npgrad.arange(4).reshape(2, 2).trace()):
        assert y.grad_fn is None and not y.requires_grad
    with npgrad.inference_mode():
        assert x.clone().is_inference()


def test_the_node_classes_are_the_entries_and_are_defined_nowhere_else() -> None:
    entries = [e for _, _, e in CASES.values()] + [e for _, e in DOUBLE.values()]
    names = {e.node.__name__ for e in entries}
    assert names == {
        "CloneBackward0", "FlipBackward0", "RepeatBackward0", "CatBackward0", "StackBackward0",
        "ToCopyBackward0", "RollBackward0", "Rot90Backward0", "TrilBackward0", "TriuBackward0",
        "DiagEmbedBackward0", "DiagonalBackward0_copy", "TraceBackward0", "NarrowCopyBackward0",
        "BlockDiagBackward0", "SelectScatterBackward0", "SliceScatterBackward0",
        "DiagonalScatterBackward0", "SelectBackwardBackward0", "SliceBackwardBackward0",
        "DiagonalBackwardBackward0"}
    root = pathlib.Path(npgrad.__file__).parent
    defined = re.compile(r"^\s*class (\w+Backward\d+\w*)\b", re.M)
    classes = {m for p in root.rglob("*.py") for m in defined.findall(p.read_text())}
    assert not names & classes
    for e in entries:
        assert REGISTRY[e.node.__name__] is e and e.node.entry is e


def test_hidden_kept_values_have_no_getter_but_reach_the_rule() -> None:
    x = npgrad.tensor(A, requires_grad=True)
    fn = npgrad.cat([x, x[:1]]).grad_fn
    assert not hasattr(fn, "_saved_sizes") and fn.sizes == (3, 1)
    assert fn._saved_dim == 0
    gx, = npgrad.autograd.grad(npgrad.cat([x, x[:1]]).sum(), x)
    np.testing.assert_array_equal(gx.numpy()[0], [2.0] * 4)
    with pytest.raises(ValueError, match="hidden"):
        General("h(Tensor input)", grad_fn="HiddenTestBackward0", forward=None,
                derivatives={}, tangent=None, hidden=("nothing",))


def test_a_tensor_list_entry_gives_gradients_only_where_an_input_needs_one() -> None:
    x = npgrad.tensor(A, requires_grad=True)
    y = npgrad.tensor(B)  # needs no gradient: no edge, None returned for it
    fn = npgrad.cat([x, y]).grad_fn
    assert fn.next_functions[1] == (None, 0)
    assert fn(npgrad.ones(5, 4, dtype=npgrad.float64))[1] is None
    with pytest.raises(ValueError, match="TensorList"):
        General("t(TensorList tensors)", grad_fn="TensorListTestBackward0", forward=None,
                inputs=("tensors",), tensor_list=True, saves=("tensors",),
                derivatives={}, tangent=None)


def test_lean_record_path_keeps_and_saves_as_the_general_path() -> None:
    """One input, one output: ``record`` in one frame keeps the same values (shapes from the
    input, parameters as given) and saves the same tensors as the general path would."""
    entry = General("lean_check(Tensor input, int64_t dim)", grad_fn="LeanCheckBackward0",
                    forward=lambda data, dim: data * 2.0, params=("dim",),
                    keeps=("dim", "self_sym_sizes"), saves=("self", "result"),
                    derivatives={"self": lambda grad, self, result, dim: grad * 2.0},
                    tangent=lambda self_t: self_t * 2.0)
    REGISTRY.pop("LeanCheckBackward0")
    assert entry.lean
    x = npgrad.tensor(A, requires_grad=True)
    y = entry((x,), (-1,))
    fn = y.grad_fn
    assert type(fn) is entry.node and fn.next_functions[0][0] is not None
    assert fn._saved_dim == (1 << 64) - 1 and fn._saved_self_sym_sizes == (3, 4)
    assert fn._saved_self is x
    np.testing.assert_array_equal(fn._saved_result.detach().numpy(), y.detach().numpy())
    gx, = npgrad.autograd.grad(y, x, npgrad.ones(3, 4, dtype=npgrad.float64))
    np.testing.assert_array_equal(gx.numpy(), np.full((3, 4), 2.0))
    with npgrad.no_grad():
        assert entry((x,), (0,)).grad_fn is None
