"""Reductions, scans, softmax and distances as ``General`` entries of npgrad/_ops/registry.py.

What the entries promise beyond the op table's rows: each overload's node class is built by
its entry and named as torch's grad_fn; the node keeps what torch's keeps, under torch's names
(``_saved_dim`` as the op was called, ``_saved_self_sym_sizes``, ``_saved_correction`` ...);
values, gradients, float64 gradcheck / gradgradcheck and forward-mode tangents agree with torch;
tangents are computed at once (no deferred node, nothing packed by saved-tensor hooks).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad._ops import distance as D, reduction as R, softmax as S
from npgrad._ops.registry import REGISTRY, General

_INF = float("inf")


def _values(out: Any) -> tuple:
    """The differentiable outputs of a case (values of a (values, indices) pair)."""
    if isinstance(out, tuple) and type(out).__name__ in ("max", "min", "cummax", "cummin"):
        return (out[0],)
    return tuple(out) if isinstance(out, tuple) else (out,)


# name -> (fn(m, *tensors), input shapes, entry)
CASES: dict[str, tuple[Callable, tuple, General]] = {
    "sum": (lambda m, x: x.sum(), ((2, 3),), R.SUM),
    "sum_neg_dim": (lambda m, x: x.sum(-1), ((2, 3),), R.SUM_DIM),
    "sum_dims_keep": (lambda m, x: m.sum(x, (1, 0), keepdim=True), ((2, 3),), R.SUM_DIM),
    "sum_empty_dims": (lambda m, x: x.sum(()), ((2, 3),), R.SUM_DIM),
    "sum_0dim": (lambda m, x: x.sum(0), ((),), R.SUM_DIM),
    "mean": (lambda m, x: x.mean(), ((2, 3),), R.MEAN),
    "mean_dim": (lambda m, x: m.mean(x, 1), ((2, 3),), R.MEAN_DIM),
    "mean_keep": (lambda m, x: x.mean([0, -1], True), ((2, 3, 2),), R.MEAN_DIM),
    "nansum": (lambda m, x: x.nansum(), ((2, 3),), R.NANSUM),
    "nansum_dim": (lambda m, x: m.nansum(x, -1, keepdim=True), ((2, 3),), R.NANSUM),
    "prod": (lambda m, x: x.prod(), ((2, 3),), R.PROD),
    "prod_dim": (lambda m, x: x.prod(-1, keepdim=True), ((2, 3),), R.PROD_DIM),
    "amax": (lambda m, x: x.amax(), ((2, 3),), R.AMAX),
    "amax_dims": (lambda m, x: m.amax(x, (0, -1)), ((2, 3, 2),), R.AMAX),
    "amin_dim": (lambda m, x: x.amin(1, keepdim=True), ((2, 3),), R.AMIN),
    "max": (lambda m, x: x.max(), ((2, 3),), R.MAX),
    "min": (lambda m, x: m.min(x), ((2, 3),), R.MIN),
    "max_dim": (lambda m, x: x.max(1), ((2, 3),), R.MAX_DIM),
    "min_dim_keep": (lambda m, x: m.min(x, -1, True), ((2, 3),), R.MIN_DIM),
    "var": (lambda m, x: x.var(), ((2, 3),), R.VAR),
    "var_dim_keep": (lambda m, x: x.var(1, keepdim=True), ((2, 3),), R.VAR),
    "var_unbiased_false": (lambda m, x: m.var(x, 0, False), ((3, 2),), R.VAR),
    "var_correction": (lambda m, x: x.var((0, 1), correction=2), ((3, 2),), R.VAR),
    "std": (lambda m, x: x.std(), ((2, 3),), R.STD),
    "std_dim": (lambda m, x: x.std(-1, correction=0), ((2, 3),), R.STD),
    "var_mean": (lambda m, x: m.var_mean(x, 1), ((2, 3),), R.VAR_MEAN),
    "std_mean": (lambda m, x: m.std_mean(x), ((2, 3),), R.STD_MEAN),
    "std_mean_dim_keep": (lambda m, x: m.std_mean(x, 0, keepdim=True), ((3, 2),), R.STD_MEAN),
    "aminmax": (lambda m, x: tuple(m.aminmax(x)), ((2, 3),), R.AMINMAX),
    "aminmax_dim": (lambda m, x: tuple(m.aminmax(x, dim=-1, keepdim=True)), ((2, 3),),
                    R.AMINMAX),
    "logsumexp": (lambda m, x: x.logsumexp(1), ((2, 3),), R.LOGSUMEXP),
    "logsumexp_keep": (lambda m, x: m.logsumexp(x, (0, 1), keepdim=True), ((2, 3),),
                       R.LOGSUMEXP),
    "norm": (lambda m, x: x.norm(), ((2, 3),), R.VECTOR_NORM),
    "norm_p3_dim": (lambda m, x: x.norm(3, 1), ((2, 3),), R.VECTOR_NORM),
    "vector_norm_inf": (lambda m, x: m.linalg.vector_norm(x, _INF, (0,)), ((2, 3),),
                        R.VECTOR_NORM),
    "vector_norm_p1_keep": (lambda m, x: m.linalg.vector_norm(x, 1.0, -1, True), ((2, 3),),
                            R.VECTOR_NORM),
    "pairwise_distance": (lambda m, x, y: m.nn.functional.pairwise_distance(x, y),
                          ((2, 3), (2, 3)), R.NORM_DIM),
    "cumsum": (lambda m, x: x.cumsum(-1), ((2, 3),), R.CUMSUM),
    "cumsum_0dim": (lambda m, x: x.cumsum(0), ((),), R.CUMSUM),
    "cumprod": (lambda m, x: m.cumprod(x, 1), ((2, 3),), R.CUMPROD),
    "cummax": (lambda m, x: x.cummax(0), ((3, 2),), R.CUMMAX),
    "cummin": (lambda m, x: m.cummin(x, -1), ((2, 3),), R.CUMMIN),
    "logcumsumexp": (lambda m, x: x.logcumsumexp(1), ((2, 3),), R.LOGCUMSUMEXP),
    "softmax": (lambda m, x: x.softmax(-1), ((2, 3),), S.SOFTMAX),
    "log_softmax": (lambda m, x: m.log_softmax(x, 0), ((3, 2),), S.LOG_SOFTMAX),
    "dist": (lambda m, x, y: m.dist(x, y), ((2, 3), (3,)), D.DIST),
    "dist_p3": (lambda m, x, y: x.dist(y, 3), ((2, 3), (2, 3)), D.DIST),
    "cdist": (lambda m, x, y: m.cdist(x, y), ((2, 3), (4, 3)), D.CDIST),
    "cdist_p1": (lambda m, x, y: m.cdist(x, y, 1.0), ((3, 2), (2, 2)), D.CDIST),
}
# torch 2.13 has no forward-mode rule for cdist (npgrad has one: see the finite-difference test)
TORCH_HAS_NO_JVP = {"cdist", "cdist_p1"}
# torch's C++ pairwise_distance adds eps with add(Tensor, Scalar), AddBackward1, below its
# NormBackward1; npgrad's composition records AddBackward0 there (npgrad has no AddBackward1)
OTHER_NODES_BELOW = {"pairwise_distance"}


def _arrays(shapes: tuple, seed: int = 0) -> list:
    """Distinct values (no ties, no zeros): every case is differentiable there."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        n = int(np.prod(shape, dtype=np.int64))
        values = rng.permutation(n) * 0.37 + 0.5 + rng.uniform(0, 0.1, n)
        signs = rng.choice([-1.0, 1.0], n)
        out.append((values * signs).reshape(shape))
    return out


def _inputs(m: Any, name: str, seed: int = 0) -> list:
    return [m.tensor(a, dtype=m.float64, requires_grad=True)
            for a in _arrays(CASES[name][1], seed)]


def _saved(node: Any) -> dict:
    """A node's ``_saved_*`` / ``_raw_saved_*`` names, with the non-tensor values."""
    out = {}
    for attr in dir(node):
        if not attr.startswith(("_saved_", "_raw_saved_")) or attr == "_saved_fields":
            continue
        value = getattr(node, attr)
        if attr.startswith("_raw_saved_"):
            out[attr] = "raw"
        elif hasattr(value, "detach"):
            out[attr] = tuple(np.asarray(value.detach().numpy()).ravel().tolist())
        else:
            out[attr] = value
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_op_records_the_node_its_entry_builds(name: str) -> None:
    fn, _, entry = CASES[name]
    outs = _values(fn(npgrad, *_inputs(npgrad, name)))
    assert REGISTRY[entry.node.__name__] is entry
    assert entry.node.entry is entry
    for out in outs:
        assert type(out.grad_fn) is entry.node
    if len(outs) > 1:  # several outputs of one node, numbered as torch numbers them
        assert outs[0].grad_fn is outs[1].grad_fn
        assert [o._output_nr for o in outs] == list(range(len(outs)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_fn_name_and_saved_attributes_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn = CASES[name][0]
    mine = _values(fn(npgrad, *_inputs(npgrad, name)))[0].grad_fn
    theirs = _values(fn(torch, *_inputs(torch, name)))[0].grad_fn
    assert type(mine).__name__ == type(theirs).__name__
    if name not in OTHER_NODES_BELOW:
        assert [type(f).__name__ for f, _ in mine.next_functions] == \
            [type(f).__name__ for f, _ in theirs.next_functions]
    mine_saved, their_saved = _saved(mine), _saved(theirs)
    assert mine_saved.keys() == their_saved.keys()
    for key, value in their_saved.items():
        if isinstance(value, tuple) and value and isinstance(value[0], float):
            np.testing.assert_allclose(mine_saved[key], value, rtol=1e-12, err_msg=key)
        else:
            assert mine_saved[key] == value, key
            assert type(mine_saved[key]) is type(value), key


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn = CASES[name][0]
    results = []
    for m in (npgrad, torch):
        xs = _inputs(m, name)
        outs = _values(fn(m, *xs))
        weights = [m.tensor(np.linspace(-1.0, 2.0, max(o.numel(), 1)).reshape(tuple(o.shape)),
                            dtype=m.float64) for o in outs]
        total = sum((o * w).sum() for o, w in zip(outs, weights))
        grads = m.autograd.grad(total, xs)
        results.append(([o.detach().numpy() for o in outs], [g.numpy() for g in grads]))
    for mine, theirs in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck_in_float64(name: str) -> None:
    fn = CASES[name][0]
    xs = _inputs(npgrad, name)
    f = lambda *t: _values(fn(npgrad, *t))  # noqa: E731
    assert npgrad.autograd.gradcheck(f, xs, eps=1e-6, atol=1e-5)
    assert npgrad.autograd.gradgradcheck(f, xs, eps=1e-6, atol=1e-5)


def _tangents(m: Any, name: str, recorded: bool) -> tuple:
    """Forward-mode tangents of a case, inside a dual level; ``recorded``: the primals
    require grad (the tangent is then recorded too) or not."""
    fn = CASES[name][0]
    ad = m.autograd.forward_ad
    arrays = _arrays(CASES[name][1])
    directions = _arrays(CASES[name][1], seed=1)
    with ad.dual_level():
        duals = [ad.make_dual(m.tensor(a, dtype=m.float64, requires_grad=recorded),
                              m.tensor(d, dtype=m.float64)) for a, d in zip(arrays, directions)]
        outs = _values(fn(m, *duals))
        return tuple(ad.unpack_dual(o).tangent.detach().numpy() for o in outs)


@pytest.mark.parametrize("recorded", [False, True], ids=["no_grad_inputs", "recorded"])
@pytest.mark.parametrize("name", sorted(set(CASES) - TORCH_HAS_NO_JVP))
def test_forward_mode_tangents_match_torch(name: str, recorded: bool) -> None:
    torch = pytest.importorskip("torch")
    for mine, theirs in zip(_tangents(npgrad, name, recorded), _tangents(torch, name, recorded),
                            strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_tangents_match_finite_differences(name: str) -> None:
    fn = CASES[name][0]
    arrays = _arrays(CASES[name][1])
    directions = _arrays(CASES[name][1], seed=1)
    eps = 1e-6

    def at(step: float) -> list:
        xs = [npgrad.tensor(a + step * d, dtype=npgrad.float64)
              for a, d in zip(arrays, directions)]
        return [o.numpy() for o in _values(fn(npgrad, *xs))]

    expected = [(p - q) / (2 * eps) for p, q in zip(at(eps), at(-eps))]
    for mine, fd in zip(_tangents(npgrad, name, False), expected, strict=True):
        np.testing.assert_allclose(mine, fd, rtol=1e-5, atol=1e-6)


def test_tangents_via_torch_func_jvp_agree() -> None:
    torch = pytest.importorskip("torch")
    x = _arrays(((3, 4),))[0]
    v = _arrays(((3, 4),), seed=1)[0]

    def f(m: Any) -> Callable:
        return lambda t: (t.softmax(-1) * t.logsumexp(0)).var(1) + t.cumprod(1).amax(1)

    _, mine = npgrad.func.jvp(f(npgrad), (npgrad.tensor(x),), (npgrad.tensor(v),))
    _, theirs = torch.func.jvp(f(torch), (torch.tensor(x),), (torch.tensor(v),))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)


def test_tangents_are_computed_at_once_without_a_node_or_a_packed_tensor() -> None:
    """The tangent is there as soon as the op returns, no node is kept for it, and saved-tensor
    hooks see nothing, as in torch."""
    packed: list = []
    ad = npgrad.autograd.forward_ad
    with ad.dual_level():
        x = ad.make_dual(npgrad.tensor(_arrays(((3, 4),))[0]),
                         npgrad.tensor(_arrays(((3, 4),), seed=1)[0]))
        with npgrad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                       lambda t: t):
            outs = [x.sum(), x.sum(1), x.mean(0), x.prod(1), x.amax(0), x.max(1).values,
                    x.var(1), x.std(), *npgrad.var_mean(x, 0), x.logsumexp(1), x.norm(),
                    x.cumsum(1), x.cumprod(0), x.cummax(1).values, x.logcumsumexp(0),
                    x.softmax(1), x.log_softmax(0), *npgrad.aminmax(x, dim=1),
                    npgrad.dist(x, x * 2)]
        for out in outs:
            assert out.grad_fn is None
            assert out._extra.tangent is not None  # set by the op itself, before any read
            assert ad.unpack_dual(out).tangent is not None
    assert packed == []


def test_saved_dim_reads_as_torch_prints_a_negative_dim() -> None:
    x = npgrad.ones(2, 3, requires_grad=True)
    assert x.sum(-1).grad_fn._saved_dim == (2 ** 64 - 1,)
    assert x.max(-2).values.grad_fn._saved_dim == 2 ** 64 - 2
    assert x.cumsum(1).grad_fn._saved_dim == 1
    assert x.sum([1, 0]).grad_fn._saved_dim == (1, 0)  # as called: not sorted
    assert x.sum(-1).grad_fn.dim == (-1,)  # stored as called


def test_the_node_keeps_no_more_than_torch_keeps() -> None:
    x = npgrad.ones(2, 3, requires_grad=True)
    node = x.sum().grad_fn
    assert node._saved_self_sym_sizes == (2, 3)
    for absent in ("_saved_dim", "_saved_keepdim", "_saved_self", "_saved_result"):
        assert not hasattr(node, absent)
    assert not hasattr(x.max(1).values.grad_fn, "_saved_self")  # only indices and sizes
    assert x.mean(1).grad_fn._saved_self_sym_numel == 6
    assert x.var().grad_fn._saved_correction is None  # torch's default, which means 1
    assert x.var(unbiased=False).grad_fn._saved_correction == 0


def test_a_version_change_of_any_saved_tensor_refuses_backward_as_in_torch() -> None:
    torch = pytest.importorskip("torch")
    messages = []
    for m in (npgrad, torch):
        x = m.ones(2, 3, dtype=m.float64, requires_grad=True)
        y = x * 1
        _, mean = m.var_mean(y, 1)
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            mean.sum().backward()  # only the mean's gradient, which reads no saved tensor
        messages.append(str(info.value).split(";")[0].replace("torch.", ""))
    assert messages[0] == messages[1]


def test_second_backward_through_a_released_entry_node_raises_torch_error() -> None:
    torch = pytest.importorskip("torch")
    texts = []
    for m in (npgrad, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.softmax(0)
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        texts.append(str(info.value))
    assert texts[0] == texts[1]


def test_sum_fast_path_gives_what_the_general_path_gives() -> None:
    for dtype in (npgrad.float32, npgrad.float64, npgrad.float16, npgrad.int32, npgrad.bool):
        x = npgrad.tensor([[1, 0, 3], [4, 5, 6]]).to(dtype)
        fast, general = x.sum(), x.sum(dim=None)
        assert fast.dtype == general.dtype
        assert fast.shape == general.shape == ()
        np.testing.assert_array_equal(fast.numpy(), general.numpy())
    x = npgrad.ones(2, 3, requires_grad=True)
    assert type(x.sum().grad_fn) is R.SumBackward0
    assert type(x.sum(None, True).grad_fn) is R.SumBackward1  # keepdim: the dim overload


# -- the General kind refuses a declaration that does not add up -----------------------------

def _declare(**changes: Any) -> General:
    spec: dict = dict(grad_fn="ZzzBackward0", forward=None, params=("dim",), keeps=("dim",),
                      saves=("self",), derivatives={"self": lambda grad, self, dim: grad},
                      tangent=lambda self_t: self_t)
    spec.update(changes)
    return General("zzz(Tensor input, int64_t dim)", **spec)


@pytest.mark.parametrize("changes, text", [
    (dict(keeps=("eps",)), "kept 'eps' is neither a parameter"),
    (dict(saves=("other",)), "saved 'other' is not an input, an output or a tensor parameter"),
    (dict(derivatives={"other": lambda grad: grad}), "derivatives for unknown inputs"),
    (dict(derivatives={"self": lambda grad, result: grad}), "reads ['result']"),
    (dict(tangent=lambda other_t: other_t), "the tangent rule reads unknown ['other_t']"),
])
def test_a_bad_declaration_is_refused(changes: dict, text: str) -> None:
    with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("]", r"\]")):
        _declare(**changes)
    assert "ZzzBackward0" not in REGISTRY


def test_an_entry_built_elsewhere_records_keeps_and_saves_what_it_declares() -> None:
    """A new op written as a General entry: values, node, kept values, gradient, tangent."""
    entry = General(
        "twice_sum(Tensor input, int64_t dim)", grad_fn="TwiceSumBackward0",
        forward=lambda data, dim: np.asarray(2 * data.sum(axis=dim)), params=("dim",),
        keeps=("dim", "self_sym_sizes"),
        derivatives={"self": lambda grad, dim, self_sym_sizes:
                     (grad * 2).unsqueeze(dim).expand(self_sym_sizes)},
        tangent=lambda self_t, dim: self_t.sum(dim) * 2)
    try:
        x = npgrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=npgrad.float64, requires_grad=True)
        y = entry((x,), (1,))
        np.testing.assert_array_equal(y.detach().numpy(), [6.0, 14.0])
        assert type(y.grad_fn).__name__ == "TwiceSumBackward0"
        assert y.grad_fn._saved_dim == 1 and y.grad_fn._saved_self_sym_sizes == (2, 2)
        (g,) = npgrad.autograd.grad(y.sum(), x)
        np.testing.assert_array_equal(g.numpy(), np.full((2, 2), 2.0))
        assert npgrad.autograd.gradcheck(lambda t: entry((t,), (0,)), [x])
        ad = npgrad.autograd.forward_ad
        with ad.dual_level():
            d = ad.make_dual(x.detach(), npgrad.ones(2, 2, dtype=npgrad.float64))
            np.testing.assert_array_equal(ad.unpack_dual(entry((d,), (0,))).tangent.numpy(),
                                          [4.0, 4.0])
    finally:
        REGISTRY.pop("TwiceSumBackward0", None)


@pytest.mark.parametrize("name", ["prod_dim", "var_dim_keep", "std_mean", "logsumexp",
                                  "norm_p3_dim", "cumprod", "logcumsumexp", "softmax",
                                  "log_softmax", "dist_p3"])
def test_forward_over_reverse_matches_torch(name: str) -> None:
    """The tangent of a gradient (a Hessian-vector product): the entries' tangents and
    backward rules are recorded, so they differentiate again."""
    torch = pytest.importorskip("torch")
    fn = CASES[name][0]
    results = []
    for m in (npgrad, torch):
        ad = m.autograd.forward_ad
        xs = _inputs(m, name)
        directions = [m.tensor(d, dtype=m.float64) for d in _arrays(CASES[name][1], seed=1)]
        with ad.dual_level():
            duals = [ad.make_dual(x, d) for x, d in zip(xs, directions)]
            outs = _values(fn(m, *duals))
            total = sum((o * o).sum() for o in outs)
            grads = m.autograd.grad(total, xs, create_graph=True)
            results.append([ad.unpack_dual(g).tangent.detach().numpy() for g in grads])
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
