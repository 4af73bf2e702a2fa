"""Elementwise ops on sparse COO tensors (issue 14): the one-input ops torch has sparse kernels
for, products with dense and sparse tensors, the functional spellings of the arithmetic, and
the coalesced flag of a leaf's ``.grad``, each compared with torch (Note [Sparse inputs of
elementwise entries], Note [Sparse products], Note [The first sparse gradient of a leaf] in
npgrad/_ops/sparse.py); hand-derived values and gradchecks where they need no torch."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.autograd import gradcheck


pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


IDX = [[0, 1, 1, 0], [2, 0, 2, 1]]
VALS = [0.3, -0.4, 0.5, 0.2]


def _leaf(lib: Any, coalesced: bool, idx: list = IDX, vals: list = VALS) -> Any:
    s = lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals, dtype=lib.float64), (2, 3))
    return (s.coalesce() if coalesced else s).detach().requires_grad_()


def _dense_of(t: Any) -> Any:
    return t.to_dense() if t.is_sparse else t


def _numbers(a: np.ndarray) -> tuple:
    """An array as comparable data (NaN equal to NaN): its shape and rounded entries."""
    return a.shape, [str(v) for v in np.round(a, 10).ravel().tolist()]


def _describe(t: Any) -> tuple:
    """A result as plain data: layout, dtype, flag, grad_fn, entries (rounded)."""
    name = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    if not t.is_sparse:
        return ("strided", str(t.dtype).split(".")[-1], name, _numbers(t.detach().numpy()))
    return ("sparse", str(t.dtype).split(".")[-1], t.is_coalesced(), name,
            t._indices().tolist(), _numbers(t._values().detach().numpy()))


def _outcome(run: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {str(e)[:160]}".replace("npgrad.", "torch.")


def _forward_and_backward(lib: Any, fn: Callable, coalesced: bool) -> tuple:
    x = _leaf(lib, coalesced)
    out = _outcome(lambda: fn(lib, x))
    if isinstance(out, str):
        return out, None
    grad = _outcome(lambda: (_dense_of(out).sum().backward(), _describe(x.grad))[1])
    return _describe(out), grad


# -- one-input ops ---------------------------------------------------------------------------

UNARY = ["abs", "absolute", "sgn", "sign", "neg", "negative", "relu", "square", "sqrt", "sin",
         "sinh", "tan", "tanh", "asin", "arcsin", "asinh", "atan", "atanh", "expm1", "log1p",
         "erf", "ceil", "floor", "round", "trunc", "frac", "nan_to_num", "exp", "cos",
         "sigmoid", "log", "reciprocal", "rsqrt", "exp2", "cosh", "acos", "erfc"]


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("name", UNARY)
def test_one_input_ops_match_torch(name: str, coalesced: bool, torch: Any) -> None:
    """Values, entries, flag and grad_fn of the result; the input's gradient or torch's
    error from its backward; torch's refusal for ops without a sparse kernel."""
    def fn(lib: Any, x: Any) -> Any:
        return getattr(lib, name)(x)
    assert _forward_and_backward(npgrad, fn, coalesced) == \
        _forward_and_backward(torch, fn, coalesced)


METHODS: dict[str, Callable] = {
    "method_abs": lambda lib, x: x.abs(),
    "method_relu": lambda lib, x: x.relu(),
    "F.relu": lambda lib, x: lib.nn.functional.relu(x),
    "pow_2": lambda lib, x: x.pow(2),
    "pow_2.5": lambda lib, x: x.pow(2.5),
    "pow_-1": lambda lib, x: x.pow(-1),
    "pow_0": lambda lib, x: x.pow(0),
    "operator_pow": lambda lib, x: x ** 3,
    "method_square": lambda lib, x: x.square(),
    "method_sin": lambda lib, x: x.sin(),
    "method_exp": lambda lib, x: x.exp(),
    "abs_then_mul": lambda lib, x: x.abs() * 2,
    "log1p_of_square": lambda lib, x: x.square().log1p(),
}


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("name", list(METHODS))
def test_method_and_operator_spellings_match_torch(name: str, coalesced: bool,
                                                   torch: Any) -> None:
    fn = METHODS[name]
    assert _forward_and_backward(npgrad, fn, coalesced) == \
        _forward_and_backward(torch, fn, coalesced)


def test_one_input_op_by_hand() -> None:
    """abs of an uncoalesced tensor: the duplicate entries are summed first, the result is
    coalesced, and the gradient is sign(value) at each coalesced entry."""
    x = npgrad.sparse_coo_tensor(npgrad.tensor([[0, 0, 1]]),
                                 npgrad.tensor([-1.0, 3.0, -2.0], dtype=npgrad.float64),
                                 (3,), requires_grad=True)  # (0) twice: -1 + 3 = 2
    y = x.abs()
    assert y.is_coalesced() and type(y.grad_fn).__name__ == "AbsBackward0"
    assert y._indices().tolist() == [[0, 1]] and y._values().tolist() == [2.0, 2.0]
    y.to_dense().sum().backward()
    assert x.grad.to_dense().tolist() == [1.0, -1.0, 0.0]


def test_one_input_ops_gradcheck() -> None:
    x = npgrad.sparse_coo_tensor(npgrad.tensor([[0, 1, 1], [2, 0, 2]]),
                                 npgrad.tensor([0.7, -0.4, 0.5], dtype=npgrad.float64),
                                 (2, 3)).coalesce().requires_grad_()
    for fn in (lambda s: s.abs().to_dense(), lambda s: (s ** 3).to_dense(),
               lambda s: s.log1p().to_dense(), lambda s: s.square().to_dense()):
        assert gradcheck(fn, (x,), masked=True)


# -- products and the other arithmetic ------------------------------------------------------

def _dense(lib: Any) -> Any:
    return (lib.arange(6., dtype=lib.float64).reshape(2, 3) + 1).requires_grad_()


PRODUCTS: dict[str, Callable] = {
    "sparse*dense": lambda lib, x, d: x * d,
    "dense*sparse": lambda lib, x, d: d * x,
    "sparse*sparse": lambda lib, x, d: x * x,
    "mul(sparse, dense)": lambda lib, x, d: lib.mul(x, d),
    "mul(dense, sparse)": lambda lib, x, d: lib.mul(d, x),
    "multiply": lambda lib, x, d: lib.multiply(x, d),
    "method mul": lambda lib, x, d: x.mul(d),
    "sparse*0-dim": lambda lib, x, d: x * lib.tensor(2., dtype=lib.float64,
                                                     requires_grad=True),
    "sparse*row": lambda lib, x, d: x * lib.ones(3, dtype=lib.float64),
    "sparse*row requiring grad": lambda lib, x, d: x * lib.ones(3, dtype=lib.float64,
                                                                requires_grad=True),
    "sparse*bad shape": lambda lib, x, d: x * lib.ones(4, dtype=lib.float64),
    "sparse*complex number": lambda lib, x, d: x * 2.5j,
    "sparse/dense": lambda lib, x, d: x / d,
    "dense/sparse": lambda lib, x, d: d / x,
    "sparse/sparse": lambda lib, x, d: x / x,
    "div(sparse, number)": lambda lib, x, d: lib.div(x, 2),
    "true_divide": lambda lib, x, d: lib.true_divide(x, 4),
    "add(s, s, alpha)": lambda lib, x, d: lib.add(x, x * 3, alpha=2),
    "sub(s, s)": lambda lib, x, d: lib.sub(x, x * 3),
    "sub(s, s, alpha)": lambda lib, x, d: lib.sub(x, x * 3, alpha=3),
    "subtract": lambda lib, x, d: lib.subtract(x, x * 2),
    "add(d, s)": lambda lib, x, d: lib.add(d, x),
    "add(d, s, alpha)": lambda lib, x, d: lib.add(d, x, alpha=2),
    "sub(d, s)": lambda lib, x, d: lib.sub(d, x),
    "dense - sparse": lambda lib, x, d: d - x,
    "sparse - dense": lambda lib, x, d: x - d,
    "add(s, d)": lambda lib, x, d: lib.add(x, d),
    "neg": lambda lib, x, d: lib.neg(x),
    "atan2": lambda lib, x, d: lib.atan2(x, d),
    "maximum": lambda lib, x, d: lib.maximum(x, x),
}


def _product_outcome(lib: Any, name: str, coalesced: bool) -> tuple:
    x, d = _leaf(lib, coalesced), _dense(lib)
    out = _outcome(lambda: PRODUCTS[name](lib, x, d))
    if isinstance(out, str):
        return out, None
    saved_alpha = getattr(out.grad_fn, "_saved_alpha", None)

    def grads() -> list:
        _dense_of(out).sum().backward()
        return [None if t.grad is None else _describe(t.grad) for t in (x, d)]
    return _describe(out), saved_alpha, _outcome(grads)


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_and_arithmetic_match_torch(name: str, coalesced: bool, torch: Any) -> None:
    assert _product_outcome(npgrad, name, coalesced) == _product_outcome(torch, name, coalesced)


PAIRS = {"A": ([[0, 1, 1, 0], [2, 0, 2, 2]], [3., 4., 5., 1.]),  # (0, 2) twice
         "B": ([[0, 1], [2, 1]], [2., 7.]),
         "C": ([[1, 0, 1], [1, 2, 1]], [2., 7., 1.]),  # (1, 1) twice
         "E": ([[1, 0, 0], [0, 2, 1]], [1., 2., 3.])}  # unique, unsorted


@pytest.mark.parametrize("flags", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("pair", ["AB", "BA", "AC", "CE", "EC", "BE"])
def test_sparse_times_sparse_entries_match_torch(pair: str, flags: tuple, torch: Any) -> None:
    """Which operand's entries the product keeps (Note [Sparse products])."""
    def run(lib: Any) -> tuple:
        a = _leaf(lib, flags[0], *PAIRS[pair[0]])
        b = _leaf(lib, flags[1], *PAIRS[pair[1]])
        out = a * b
        out.to_dense().sum().backward()
        return _describe(out), _describe(a.grad), _describe(b.grad)
    assert _outcome(lambda: run(npgrad)) == _outcome(lambda: run(torch))


def test_sparse_products_by_hand() -> None:
    a = _leaf(npgrad, False, *PAIRS["A"])  # coalesced: (0, 2) -> 4, (1, 0) -> 4, (1, 2) -> 5
    b = _leaf(npgrad, True, *PAIRS["C"])  # coalesced: (0, 2) -> 7, (1, 1) -> 3
    out = a * b  # a's entries as they are, each times b at its index
    assert not out.is_coalesced()
    assert out._indices().tolist() == PAIRS["A"][0]
    assert out._values().tolist() == [21.0, 0.0, 0.0, 7.0]
    both = a.detach().coalesce() * b.detach()  # two coalesced: the intersection
    assert both.is_coalesced() and both._indices().tolist() == [[0], [2]]
    assert both._values().tolist() == [28.0]
    d = npgrad.arange(6., dtype=npgrad.float64).reshape(2, 3)
    dense_product = a * d
    assert dense_product._indices().tolist() == PAIRS["A"][0]
    assert dense_product._values().tolist() == [3 * 2.0, 4 * 3.0, 5 * 5.0, 1 * 2.0]


def test_products_gradcheck() -> None:
    x = npgrad.sparse_coo_tensor(npgrad.tensor([[0, 1, 1], [2, 0, 2]]),
                                 npgrad.tensor([0.7, -0.4, 0.5], dtype=npgrad.float64),
                                 (2, 3)).coalesce().requires_grad_()
    d = npgrad.arange(6., dtype=npgrad.float64).reshape(2, 3)
    assert gradcheck(lambda s: (s * d).to_dense(), (x,), masked=True)
    assert gradcheck(lambda s: (d * s * 2).to_dense(), (x,), masked=True)
    assert gradcheck(lambda s: (s * s).to_dense(), (x,), masked=True)


# -- the coalesced flag of a leaf's gradient -----------------------------------------------------

GRAD_FLAGS: dict[str, Callable] = {
    "to_dense": lambda lib, x: x.to_dense().sum(),
    "double": lambda lib, x: x.double().to_dense().sum(),
    "scaled": lambda lib, x: (x * 2).to_dense().sum(),
    "neg": lambda lib, x: (-x).to_dense().sum(),
    "divided": lambda lib, x: (x / 2).to_dense().sum(),
    "t": lambda lib, x: x.t().to_dense().sum(),
    "sparse.mm": lambda lib, x: lib.sparse.mm(x, lib.ones(3, 2, dtype=lib.float64)).sum(),
    "coalesce then scale": lambda lib, x: (x.coalesce() * 3).to_dense().sum(),
    "two edges": lambda lib, x: (x + x).to_dense().sum(),
    "two to_dense": lambda lib, x: (x.to_dense() + x.to_dense()).sum(),
    "add alpha": lambda lib, x: lib.add(x, x, alpha=2).to_dense().sum(),
    "sparse.sum": lambda lib, x: lib.sparse.sum(x),
    "sparse.sum of scaled": lambda lib, x: lib.sparse.sum(x * 2),
    "values": lambda lib, x: x.coalesce().values().sum(),
    "sum": lambda lib, x: x.sum(),
    "product with itself": lambda lib, x: (x * x).to_dense().sum(),
}


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("name", list(GRAD_FLAGS))
def test_leaf_gradient_coalesced_flag_matches_torch(name: str, coalesced: bool,
                                                    torch: Any) -> None:
    """``.grad`` may read uncoalesced where the gradient a hook sees is coalesced (Note [The
    first sparse gradient of a leaf]); ``autograd.grad`` returns the gradient itself."""
    def run(lib: Any) -> tuple:
        x = _leaf(lib, coalesced)
        seen: list = []
        x.register_hook(lambda g: seen.append(g.is_coalesced() if g.is_sparse else None))
        GRAD_FLAGS[name](lib, x).backward()
        g, = lib.autograd.grad(GRAD_FLAGS[name](lib, x), x)
        return _describe(x.grad), seen, _describe(g)
    assert _outcome(lambda: run(npgrad)) == _outcome(lambda: run(torch))


def test_leaf_gradient_flag_by_hand() -> None:
    x = _leaf(npgrad, True)
    seen: list = []
    x.register_hook(lambda g: seen.append(g.is_coalesced()))
    x.to_dense().sum().backward()
    assert seen == [True] and not x.grad.is_coalesced()
    x.grad = None
    npgrad.sparse.sum(x).backward()
    assert x.grad.is_coalesced()


# -- in-place arithmetic ------------------------------------------------------------------

INPLACE = ["s.zero_()", "s.mul_(2)", "s.div_(2)", "s.neg_()", "s.add_(S())",
           "s.add_(S(True), alpha=2)", "s.sub_(S())", "s.mul_(s)", "s.copy_(S())", "s.add_(d)",
           "d.add_(s)", "d.add_(s, alpha=-0.5)", "d.sub_(s)"]


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("expr", INPLACE)
def test_in_place_arithmetic_matches_torch(expr: str, coalesced: bool, torch: Any) -> None:
    """Note [In-place ops on sparse tensors]: the result is the tensor itself, with torch's
    entries and flag (an optimizer's ``p.add_(grad, alpha=-lr)`` with a sparse grad too)."""
    def run(lib: Any) -> tuple:
        def S(c: bool = False) -> Any:  # noqa: N802 - the name the expressions use
            t = lib.sparse_coo_tensor(lib.tensor(PAIRS["A"][0]), lib.tensor(PAIRS["A"][1]),
                                      (2, 3))
            return t.coalesce() if c else t
        s, d = S(coalesced), lib.ones(2, 3)
        out = eval(expr, {"s": s, "d": d, "S": S})
        return _describe(out), out is s or out is d, _describe(s)
    assert _outcome(lambda: run(npgrad)) == _outcome(lambda: run(torch))


def test_in_place_on_a_leaf_requiring_grad_is_refused() -> None:
    s = _leaf(npgrad, True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used "
                                           "in an in-place operation.$"):
        s.mul_(2)
    with npgrad.no_grad():
        s.mul_(2)
    assert s._values().tolist() == [0.4, 0.6, -0.8, 1.0]


def test_sgd_step_with_a_sparse_gradient_by_hand() -> None:
    w = npgrad.zeros(2, 3, dtype=npgrad.float64)
    g = npgrad.sparse_coo_tensor(npgrad.tensor([[0, 1, 0]]), npgrad.tensor(
        [[1., 2., 3.], [4., 5., 6.], [1., 1., 1.]], dtype=npgrad.float64), (2, 3))
    assert w.add_(g, alpha=-0.5) is w
    assert w.tolist() == [[-1.0, -1.5, -2.0], [-2.0, -2.5, -3.0]]
    g.zero_()
    assert g._nnz() == 0 and g.is_coalesced() and g.to_dense().abs().sum().item() == 0.0
