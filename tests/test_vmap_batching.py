"""vmap on batched values (Note [Batched values] in npgrad.func._batched): each batching rule
against the loop over samples and against torch.func.vmap (values, dtype, shape), with no
fallback taken; the per-op fallback and its warning; torch's refusals (.item(), control flow,
in-place writes into unbatched tensors); nested vmaps and vmap over the transforms."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.func import _vmap as vmap_module
from npgrad.func._pytree import tree_flatten

B = 3
RNG = np.random.default_rng(7)
A34 = RNG.standard_normal((B, 3, 4))
A4 = RNG.standard_normal((B, 4))
P34 = RNG.standard_normal((3, 4))
P4 = RNG.standard_normal(4)
M45 = RNG.standard_normal((B, 4, 5))
P45 = RNG.standard_normal((4, 5))
LOGITS = RNG.standard_normal((B, 2, 5))
LABELS = RNG.integers(0, 5, (B, 2))


def _case(name: str, fn: Callable, arrays: tuple, in_dims: Any = 0, out_dims: Any = 0) -> Any:
    return pytest.param(fn, arrays, in_dims, out_dims, id=name)


def F(m: Any) -> Any:
    return m.nn.functional


# (fn(m, *tensors), inputs, in_dims, out_dims): each must run on batched values by its rule
RULE_CASES = [
    _case("sin", lambda m, x: m.sin(x), (A34,)),
    _case("method_exp", lambda m, x: x.exp(), (A34,)),
    _case("arith_ops", lambda m, x: x * 2 + 1 - x / 3, (A34,)),
    _case("add_plain", lambda m, x, p: x + p, (A34, P4), (0, None)),
    _case("reflected_sub", lambda m, x, p: p - x, (A4, P34), (0, None)),
    _case("reflected_pow_scalar", lambda m, x: 2 ** x, (A4,)),
    _case("mul_both_in_dim1", lambda m, x, y: x * y, (A34, A34.transpose(1, 0, 2)), (0, 1)),
    _case("compare", lambda m, x: x > 0, (A34,)),
    _case("where", lambda m, x, p: m.where(x > 0, x, p), (A34, P4), (0, None)),
    _case("clamp", lambda m, x: x.clamp(-0.5, 0.5), (A34,)),
    _case("relu_gelu_tanh", lambda m, x: F(m).gelu(F(m).relu(x)).tanh(), (A34,)),
    _case("sigmoid_inplace_clone", lambda m, x: x.clone().sigmoid_(), (A34,)),
    _case("masked_fill", lambda m, x: x.masked_fill(x < 0, 0.5), (A34,)),
    _case("masked_fill_batched_value", lambda m, v: m.tensor(P4).masked_fill(
        m.tensor(P4) > 0, v), (A34[:, 0, 0],)),
    _case("promote_0dim_sample", lambda m, x, p: x * p, (A4[:, 0], P4.astype(np.float32)),
          (0, None)),
    _case("sum_all", lambda m, x: x.sum(), (A34,)),
    _case("sum_dim", lambda m, x: x.sum(0), (A34,)),
    _case("sum_keepdim", lambda m, x: m.sum(x, -1, keepdim=True), (A34,)),
    _case("sum_dim_none", lambda m, x: x.sum(dim=None), (A34,)),
    _case("mean_tuple", lambda m, x: x.mean(dim=(0, 1)), (A34,)),
    _case("mean_0dim", lambda m, x: x.mean(), (A4[:, 0],)),
    _case("amax", lambda m, x: x.amax(1), (A34,)),
    _case("max_dim", lambda m, x: x.max(1), (A34,)),
    _case("max_all", lambda m, x: x.max(), (A34,)),
    _case("argmax_all", lambda m, x: x.argmax(), (A34,)),
    _case("var_std", lambda m, x: (x.var(1), x.std()), (A34,)),
    _case("logsumexp", lambda m, x: m.logsumexp(x, 1), (A34,)),
    _case("cumsum", lambda m, x: x.cumsum(0), (A34,)),
    _case("softmax", lambda m, x: F(m).softmax(x, -1), (A34,)),
    _case("log_softmax", lambda m, x: F(m).log_softmax(x, dim=1), (A34,)),
    _case("sort", lambda m, x: x.sort(0), (A34,)),
    _case("view", lambda m, x: x.view(-1), (A34,)),
    _case("reshape", lambda m, x: x.reshape(2, -1), (A34,)),
    _case("unsqueeze_squeeze", lambda m, x: x.unsqueeze(0).unsqueeze(-1).squeeze(), (A34,)),
    _case("transpose", lambda m, x: x.transpose(0, 1), (A34,)),
    _case("t_and_T", lambda m, x: (x.t(), x.T), (A34,)),
    _case("permute", lambda m, x: x.permute(1, 0), (A34,)),
    _case("flatten", lambda m, x: x.flatten(), (A34,)),
    _case("getitem_int", lambda m, x: x[0], (A34,)),
    _case("getitem_slices", lambda m, x: x[:, 1:], (A34,)),
    _case("getitem_none_ellipsis", lambda m, x: x[..., None, 1], (A34,)),
    _case("getitem_index_tensor", lambda m, x: x[m.tensor([2, 0])], (A34,)),
    _case("expand", lambda m, x: x.expand(2, 4), (A4,)),
    _case("unbind", lambda m, x: x.unbind(1), (A34,)),
    _case("split", lambda m, x: x.split(2, dim=1), (A34,)),
    _case("cat", lambda m, x, p: m.cat([x, p], 1), (A34, P34), (0, None)),
    _case("stack", lambda m, x, y: m.stack([x, y]), (A34, A34 * 2)),
    _case("setitem_batched_self", lambda m, x: _setitem(x.clone(), 0, 1.5), (A34,)),
    _case("mm_both", lambda m, x, y: x.mm(y), (A34, M45)),
    _case("matmul_plain_right", lambda m, x, p: m.matmul(x, p), (A34, P45), (0, None)),
    _case("matmul_plain_left", lambda m, p, x: p @ x, (P34, M45), (None, 0)),
    _case("matmul_vec", lambda m, x, y: x @ y, (A4, M45)),
    _case("mv", lambda m, x, v: m.mv(x, v), (A34, A4)),
    _case("dot", lambda m, x, y: m.dot(x, y), (A4, A4 * 2)),
    _case("bmm", lambda m, x, y: m.bmm(x, y), (A34[:, None], M45[:, None])),
    _case("linear_plain_weight", lambda m, x, w, b: F(m).linear(x, w, b), (A4, P34, P34[:, 0]),
          (0, None, None)),
    _case("linear_batched_weight", lambda m, x, w, b: F(m).linear(x, w, b),
          (A4, A34, A34[:, :, 0])),
    _case("linear_2d_input", lambda m, x, w: F(m).linear(x, w), (A34, A34)),
    _case("einsum_explicit", lambda m, x, p: m.einsum("ij,jk->ik", x, p), (A34, P45),
          (0, None)),
    _case("einsum_implicit_both", lambda m, x, y: m.einsum("ij,jk", x, y), (A34, M45)),
    _case("einsum_ellipsis_list", lambda m, x, p: m.einsum("...j,jk->...k", [x, p]),
          (A34, P45), (0, None)),
    _case("einsum_trace", lambda m, x: m.einsum("ii->", x), (A34[:, :, :3],)),
    _case("elu_entry", lambda m, x: F(m).elu(x, 0.5), (A34,)),
    _case("hardtanh_entry", lambda m, x: F(m).hardtanh(x, -0.5, 0.5), (A34,)),
    _case("cross_entropy", lambda m, x, t: F(m).cross_entropy(x, t), (LOGITS, LABELS)),
    _case("cross_entropy_sum_weight", lambda m, x, t, w: F(m).cross_entropy(
        x, t, w, reduction="sum"), (LOGITS, LABELS, np.abs(P45[0])), (0, 0, None)),
    _case("cross_entropy_none_1d", lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"),
          (LOGITS[:, 0], LABELS[:, 0])),
    _case("nll_loss_ignore", lambda m, x, t: F(m).nll_loss(x, t, ignore_index=1),
          (LOGITS, LABELS)),
    _case("mse_loss", lambda m, x, y: F(m).mse_loss(x, y), (A34, A34 * 0.5)),
    _case("mse_loss_plain_target", lambda m, x, y: F(m).mse_loss(x, y, reduction="sum"),
          (A34, P34), (0, None)),
    _case("in_dim_1_out_dim_1", lambda m, x: x.sum(0), (A34.transpose(1, 0, 2),), 1, 1),
    _case("out_dims_tuple", lambda m, x: (x, x.sum()), (A34,), 0, (1, 0)),
    _case("unbatched_output", lambda m, x, p: p * 2, (A34, P4), (0, None)),
]


def _setitem(x: Any, index: Any, value: Any) -> Any:
    x[index] = value
    return x


def _tensors(m: Any, arrays: tuple) -> list:
    return [m.tensor(a) for a in arrays]


def _run(m: Any, fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> Any:
    return m.func.vmap(lambda *xs: fn(m, *xs), in_dims=in_dims, out_dims=out_dims)(
        *_tensors(m, arrays))


def _leaves(x: Any) -> list:
    if isinstance(x, tuple):
        return [t for item in x for t in _leaves(item)]
    return list(tree_flatten(x)[0])


def _same(mine: Any, theirs: Any, tol: float = 1e-12) -> None:
    a, b = _leaves(mine), _leaves(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(x.detach().numpy(), dtype=float),
                                   np.asarray(y.detach().numpy(), dtype=float),
                                   rtol=tol, atol=tol)


def _loop(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> Any:
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(arrays)
    outs = []
    for b in range(B):
        xs = [npgrad.tensor(np.take(a, b, axis=d) if d is not None else a)
              for a, d in zip(arrays, dims)]
        outs.append(_leaves(fn(npgrad, *xs)))
    n = len(outs[0])
    od = out_dims if isinstance(out_dims, tuple) else (out_dims,) * n
    return [npgrad.stack([o[i] for o in outs], od[i]) for i in range(n)]


@pytest.fixture
def no_slices(monkeypatch: Any) -> list:
    """Fail a test whose vmap runs the function by slices; collect the warnings."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("vmap ran the function by slices")

    monkeypatch.setattr(vmap_module, "_by_slices", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _perf(caught: list) -> list:
    """The performance warnings of the per-op fallback among ``caught``."""
    return [str(w.message) for w in caught if "performance drop" in str(w.message)]


@pytest.mark.parametrize("fn,arrays,in_dims,out_dims", RULE_CASES)
def test_rule_equals_loop(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any,
                          no_slices: list) -> None:
    mine = _run(npgrad, fn, arrays, in_dims, out_dims)
    assert not _perf(no_slices), _perf(no_slices)
    _same(mine, _loop(fn, arrays, in_dims, out_dims))


@pytest.mark.parametrize("fn,arrays,in_dims,out_dims", RULE_CASES)
def test_rule_equals_torch(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> None:
    torch = pytest.importorskip("torch")
    _same(_run(npgrad, fn, arrays, in_dims, out_dims), _run(torch, fn, arrays, in_dims, out_dims),
          1e-10)


def test_batched_value_seen_inside() -> None:
    torch = pytest.importorskip("torch")
    seen = {}
    for m in (npgrad, torch):
        def f(t: Any) -> Any:
            seen[m.__name__] = (repr(t), tuple(t.shape), t.dim(), t.size(-1), len(t),
                                t.numel(), t.requires_grad)
            return t
        m.func.vmap(f)(m.arange(6.).reshape(2, 3))
    assert seen["npgrad"] == seen["torch"]


def test_nested_batched_repr_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    seen = []
    for m in (npgrad, torch):
        found: list = []
        m.func.vmap(m.func.vmap(lambda t: found.append(repr(t)) or t))(
            m.arange(12.).reshape(2, 3, 2))
        seen.append(found[0])
    assert seen[0] == seen[1]


def test_fallback_warns_as_torch() -> None:
    torch = pytest.importorskip("torch")
    outs, texts = [], []
    for m in (npgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs.append(m.func.vmap(lambda t: m.histc(t, bins=4))(m.tensor(A34[:, 0])))
        texts.append([str(x.message) for x in w if "performance drop" in str(x.message)])
    assert texts[0] == texts[1] and len(texts[0]) == 1
    assert "aten::histc" in texts[0][0]
    _same(outs[0], outs[1])


def test_fallback_inside_batched_function(no_slices: list) -> None:
    # histc has no rule: it runs per sample, the ops around it stay batched
    x = npgrad.tensor(A34)
    out = npgrad.func.vmap(lambda t: npgrad.histc(t.exp() * 2, bins=3).sum() + t.sum())(x)
    expected = npgrad.stack([npgrad.histc(s.exp() * 2, bins=3).sum() + s.sum() for s in x])
    _same(out, expected)
    assert len(_perf(no_slices)) == 1 and "aten::histc" in _perf(no_slices)[0]


REFUSALS = [
    pytest.param(lambda m, t: t.sum().item(), id="item_of_computed"),
    pytest.param(lambda m, t: float(t[0]), id="float"),
    pytest.param(lambda m, t: int(t[0] > 0), id="int"),
    pytest.param(lambda m, t: t * 2 if t.sum() > 0 else t, id="control_flow"),
    pytest.param(lambda m, t: t.tolist(), id="tolist"),
    pytest.param(lambda m, t: t.exp().numpy(), id="numpy"),
    pytest.param(lambda m, t: m.zeros(4).mul_(t), id="mul_into_fresh"),
    pytest.param(lambda m, t: m.zeros(4).add_(t), id="add_into_fresh"),
    pytest.param(lambda m, t: m.zeros(4).copy_(t), id="copy_into_fresh"),
    pytest.param(lambda m, t: _setitem(m.zeros(2, 4), 0, t), id="setitem_into_fresh"),
    pytest.param(lambda m, t: _setitem(m.zeros(2, 4), [0], t.unsqueeze(0)),
                 id="index_put_into_fresh"),
]


@pytest.mark.parametrize("fn", REFUSALS)
def test_refusals_match_torch(fn: Callable) -> None:
    torch = pytest.importorskip("torch")
    errors = []
    for m in (torch, npgrad):
        with pytest.raises(Exception) as info:
            m.func.vmap(lambda t: fn(m, t))(m.tensor(A34[:, 0]))
        errors.append(info.value)
    assert isinstance(errors[1], type(errors[0]))
    assert str(errors[1]) == str(errors[0])


def test_inplace_into_batched_writes_every_sample(no_slices: list) -> None:
    x = npgrad.tensor(A34)
    out = npgrad.func.vmap(lambda t: t.clone().mul_(2).add_(1).t_())(x)
    _same(out, (x * 2 + 1).transpose(1, 2))


def test_nested_vmap_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        vm = m.func.vmap
        x, y = m.tensor(A34), m.tensor(M45)
        outs.append(vm(vm(lambda a, b: (a @ b).sum(), in_dims=(0, None)))(x, y))
        outs.append(vm(vm(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
            m.tensor(A4), m.tensor(P34)))
        outs.append(vm(vm(lambda a: a.sum(0), in_dims=1), in_dims=2, out_dims=1)(x))
    _same(outs[:3], outs[3:], 1e-10)


def _mlp_per_sample(m: Any, batch: int = 8) -> dict:
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(6, 5), m.nn.ReLU(), m.nn.Linear(5, 3))
    model.double()
    x = m.tensor(RNG_FIXED.standard_normal((batch, 6)))
    y = m.tensor(np.arange(batch) % 3)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: dict, xi: Any, yi: Any) -> Any:
        out = m.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F(m).cross_entropy(out, yi.unsqueeze(0))

    return m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


RNG_FIXED = np.random.default_rng(11)


def test_per_sample_gradients_batched(no_slices: list) -> None:
    grads = _mlp_per_sample(npgrad)
    assert not _perf(no_slices), _perf(no_slices)
    assert grads["0.weight"].shape == (8, 5, 6)


def test_per_sample_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    global RNG_FIXED
    RNG_FIXED = np.random.default_rng(11)
    mine = _mlp_per_sample(npgrad)
    RNG_FIXED = np.random.default_rng(11)
    theirs = _mlp_per_sample(torch)
    for key in mine:
        _same(mine[key], theirs[key], 1e-10)


TRANSFORMS = [
    pytest.param(lambda m: m.func.vmap(m.func.grad(lambda x, w: (x * w).sin().sum()),
                                       in_dims=(0, None))(m.tensor(A34), m.tensor(P34)),
                 id="vmap_grad"),
    pytest.param(lambda m: m.func.vmap(m.func.grad(lambda x, w: (x @ w).tanh().sum(), argnums=1),
                                       in_dims=(0, None))(m.tensor(A34), m.tensor(P45)),
                 id="vmap_grad_of_unbatched_argument"),
    pytest.param(lambda m: m.func.grad(lambda x: m.func.vmap(lambda r: (r ** 2).sum())(x).sum())(
        m.tensor(A34)), id="grad_vmap"),
    pytest.param(lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()))(m.tensor(A4)),
                 id="vmap_jacrev"),
    pytest.param(lambda m: m.func.vmap(m.func.grad(m.func.grad(lambda x: x.sin() * x)))(
        m.tensor(A4[:, 0])), id="vmap_grad_grad"),
    pytest.param(lambda m: m.func.vmap(m.func.hessian(lambda x: (x ** 3).sum()))(m.tensor(A4)),
                 id="vmap_hessian"),
    pytest.param(lambda m: m.func.vmap(lambda x: m.func.vjp(lambda y: y.exp(), x)[1](x)[0])(
        m.tensor(A4)), id="vmap_vjp"),
    pytest.param(lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()), chunk_size=2)(
        m.tensor(A4)), id="vmap_jacrev_chunked"),
]


@pytest.mark.parametrize("fn", TRANSFORMS)
def test_transforms_under_vmap_match_torch(fn: Callable) -> None:
    torch = pytest.importorskip("torch")
    _same(fn(npgrad), fn(torch), 1e-10)


def test_grad_through_batched_vmap_matches_loop() -> None:
    x = npgrad.tensor(A34, requires_grad=True)
    npgrad.func.vmap(lambda r: (r.exp() * r).sum(1))(x).pow(2).sum().backward()
    y = npgrad.tensor(A34, requires_grad=True)
    npgrad.stack([(r.exp() * r).sum(1) for r in y]).pow(2).sum().backward()
    _same(x.grad, y.grad)


def test_dispatch_is_off_outside_vmap() -> None:
    from npgrad._ops import signature

    assert signature._vmap_dispatch is None
    with pytest.raises(ZeroDivisionError):
        npgrad.func.vmap(lambda t: (t * 2, 1 / 0))(npgrad.tensor(A4))
    assert signature._vmap_dispatch is None
    npgrad.func.vmap(lambda t: t.sum())(npgrad.tensor(A4))
    assert signature._vmap_dispatch is None


def test_randomness_error_and_same_by_slices() -> None:
    npgrad.manual_seed(0)
    out = npgrad.func.vmap(lambda t: t + npgrad.rand(()), randomness="same")(npgrad.zeros(3))
    assert np.unique(out.numpy()).size == 1
    with pytest.raises(RuntimeError, match="randomness error mode"):
        npgrad.func.vmap(lambda t: t + npgrad.rand(()))(npgrad.zeros(3))


RANDOM_CASES = [
    pytest.param(lambda m, t: t + m.rand(4), (B, 4), 0.0, "different", id="rand"),
    pytest.param(lambda m, t: t + m.randn(20), (B, 20), 0.0, "different", id="randn_vectorized"),
    pytest.param(lambda m, t: t + m.randn((2, 2)).sum(), (B,), 0.0, "different",
                 id="randn_size_tuple"),
    pytest.param(lambda m, t: t + m.randint(0, 10, (4,)), (B, 4), 0.0, "different",
                 id="randint"),
    pytest.param(lambda m, t: t + m.normal(0.0, 2.0, (4,)), (B, 4), 0.0, "different",
                 id="normal"),
    pytest.param(lambda m, t: m.rand_like(t), (B, 4), 0.0, "different", id="rand_like"),
    pytest.param(lambda m, t: m.randn_like(t), (B, 10), 0.0, "different", id="randn_like"),
    pytest.param(lambda m, t: F(m).dropout(t, 0.5), (B, 4), 1.0, "different", id="dropout"),
    pytest.param(lambda m, t: t.clone().normal_(), (B, 4), 0.0, "different", id="normal_"),
    pytest.param(lambda m, t: m.bernoulli(t), (B, 4), 0.5, "different", id="bernoulli"),
    pytest.param(lambda m, t: t + m.rand(4), (B, 4), 0.0, "same", id="same_rand"),
    pytest.param(lambda m, t: F(m).dropout(t, 0.5), (B, 4), 1.0, "same", id="same_dropout"),
    pytest.param(lambda m, t: m.randn_like(t), (B, 20), 0.0, "same", id="same_randn_like"),
]


@pytest.mark.parametrize("fn,shape,fill,randomness", RANDOM_CASES)
def test_randomness_draws_what_torch_draws(fn: Callable, shape: tuple, fill: float,
                                           randomness: str) -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        m.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(m.func.vmap(lambda t: fn(m, t), randomness=randomness)(
                m.full(shape, fill)))
    _same(outs[0], outs[1], 1e-6)


def _ensemble(m: Any) -> Any:
    import copy

    m.manual_seed(0)
    models = [m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(), m.nn.Linear(16, 4))
              for _ in range(5)]
    params, buffers = m.func.stack_module_state(models)
    base = copy.deepcopy(models[0])
    if m.__name__ == "torch":
        base = base.to("meta")

    def fmodel(p: Any, b: Any, x: Any) -> Any:
        return m.func.functional_call(base, (p, b), (x,))

    x = m.tensor(np.random.default_rng(0).standard_normal((32, 8)).astype(np.float32))
    return (m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x),
            m.func.vmap(fmodel)(params, buffers, x.expand(5, 32, 8)))


def test_model_ensemble_runs_batched(no_slices: list) -> None:
    same_batch, own_batches = _ensemble(npgrad)
    assert not _perf(no_slices), _perf(no_slices)
    _same(same_batch, own_batches)


def test_model_ensemble_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    _same(_ensemble(npgrad), _ensemble(torch), 1e-6)
