"""The samplers, histogram and the distances as registry entries (npgrad/_creation.py,
npgrad/_histogram.py, npgrad/_ops/distance.py).

What the entries promise: each sampler records torch's grad_fn (BernoulliBackward0 ...
RandomBackward2, UniformBackward0, NormalBackward0), keeps what torch's node keeps
(``_saved_mean_sym_sizes`` ...), passes back zero gradients shaped as torch's, gives a zero
tangent, and recording never changes what is drawn; ops without a derivative
(``bernoulli(x, p)``, ``histogram``) record torch's one ``NotImplemented`` node;
``pairwise_distance`` records torch's chain through AddBackward1, and
``npgrad.pairwise_distance`` / ``npgrad.cosine_similarity`` are torch's top-level functions.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import npgrad
import npgrad.autograd.forward_ad as fwAD
from npgrad import _creation as C
from npgrad._ops.registry import REGISTRY, General
from torch_oracle import assert_same_error


def _f64(*shape: int, lib: Any = npgrad, requires_grad: bool = True) -> Any:
    x = lib.rand(*shape, dtype=lib.float64) + 0.1
    return x.requires_grad_(requires_grad)


def _inplace(call: Callable) -> Callable:
    """An in-place sampler applied to a recorded copy (a leaf cannot be written in place)."""
    return lambda m, x: call(m, x.clone())


# name -> (call(lib, *inputs), input shapes, entry, torch's ``_saved_`` attributes)
CASES: dict[str, tuple[Callable, tuple, General, tuple]] = {
    "bernoulli": (lambda m, p: m.bernoulli(p * 0.5), ((3,),), C.BERNOULLI, ()),
    "bernoulli_tensor_": (_inplace(lambda m, x: x.bernoulli_(m.full((3,), 0.5))),
                          ((3,),), C.BERNOULLI_TENSOR_, ()),
    "bernoulli_float_": (_inplace(lambda m, x: x.bernoulli_(0.5)), ((3,),), C.BERNOULLI_FLOAT_,
                         ()),
    "normal_tensor_tensor": (lambda m, mean, std: m.normal(mean, std), ((3, 1), (4,)),
                             C.NORMAL_TENSOR_TENSOR, ("_saved_mean_sym_sizes",
                                                      "_saved_std_sym_sizes")),
    "normal_tensor_float": (lambda m, mean: m.normal(mean, 2.0), ((2, 3),),
                            C.NORMAL_TENSOR_FLOAT, ("_saved_mean_sym_sizes",)),
    "normal_float_tensor": (lambda m, std: m.normal(1.0, std), ((2, 3),),
                            C.NORMAL_FLOAT_TENSOR, ("_saved_std_sym_sizes",)),
    "poisson": (lambda m, x: m.poisson(x), ((2, 3),), C.POISSON, ()),
    "exponential_": (_inplace(lambda m, x: x.exponential_(2.0)), ((3,),), C.EXPONENTIAL_, ()),
    "geometric_": (_inplace(lambda m, x: x.geometric_(0.3)), ((3,),), C.GEOMETRIC_, ()),
    "log_normal_": (_inplace(lambda m, x: x.log_normal_()), ((3,),), C.LOG_NORMAL_, ()),
    "cauchy_": (_inplace(lambda m, x: x.cauchy_()), ((3,),), C.CAUCHY_, ()),
    "random_from_to": (_inplace(lambda m, x: x.random_(2, 9)), ((3,),), C.RANDOM_FROM_, ()),
    "random_to": (_inplace(lambda m, x: x.random_(9)), ((3,),), C.RANDOM_TO_, ()),
    "random_": (_inplace(lambda m, x: x.random_()), ((3,),), C.RANDOM_, ()),
    "uniform_": (_inplace(lambda m, x: x.uniform_(-1.0, 2.0)), ((3,),), C.UNIFORM_, ()),
    "normal_": (_inplace(lambda m, x: x.normal_(1.0, 0.5)), ((3,),), C.NORMAL_, ()),
}

GRAD_FNS = {"bernoulli": "BernoulliBackward0", "bernoulli_tensor_": "BernoulliBackward1",
            "bernoulli_float_": "BernoulliBackward2", "normal_tensor_tensor": "NormalBackward3",
            "normal_tensor_float": "NormalBackward1", "normal_float_tensor": "NormalBackward2",
            "poisson": "PoissonBackward0", "exponential_": "ExponentialBackward0",
            "geometric_": "GeometricBackward0", "log_normal_": "LogNormalBackward0",
            "cauchy_": "CauchyBackward0", "random_from_to": "RandomBackward0",
            "random_to": "RandomBackward1", "random_": "RandomBackward2",
            "uniform_": "UniformBackward0", "normal_": "NormalBackward0"}


def _run(name: str, lib: Any = npgrad, seed: int = 0) -> tuple:
    call, shapes, _, _ = CASES[name]
    lib.manual_seed(seed)
    inputs = [_f64(*s, lib=lib) for s in shapes]
    lib.manual_seed(seed + 1)
    return call(lib, *inputs), inputs


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_sampler_records_its_entry_under_torch_name(name: str) -> None:
    _, _, entry, saved = CASES[name]
    out, _ = _run(name)
    assert type(out.grad_fn) is entry.node
    assert REGISTRY[GRAD_FNS[name]] is entry
    assert out.grad_fn.name() == GRAD_FNS[name]
    assert sorted(a for a in dir(out.grad_fn) if a.startswith("_saved_")) == sorted(saved)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_sampler_matches_torch_node_and_gradients(name: str) -> None:
    torch = pytest.importorskip("torch")
    mine, my_inputs = _run(name)
    theirs, their_inputs = _run(name, torch)
    assert mine.grad_fn.name() == theirs.grad_fn.name()
    assert [a for a in dir(mine.grad_fn) if a.startswith("_saved_")] == \
        [a for a in dir(theirs.grad_fn) if a.startswith("_saved_")]
    for attr in CASES[name][3]:
        assert getattr(mine.grad_fn, attr) == getattr(theirs.grad_fn, attr)
    assert [fn is None for fn, _ in mine.grad_fn.next_functions] == \
        [fn is None for fn, _ in theirs.grad_fn.next_functions]
    assert [type(fn).__name__ for fn, _ in mine.grad_fn.next_functions] == \
        [type(fn).__name__ for fn, _ in theirs.grad_fn.next_functions]
    (mine * 3).sum().backward()
    (theirs * 3).sum().backward()
    for x, t in zip(my_inputs, their_inputs):
        assert x.grad is not None and t.grad is not None
        assert x.grad.shape == tuple(t.grad.shape)
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_recording_a_sampler_draws_what_an_unrecorded_one_draws(name: str) -> None:
    call, shapes, _, _ = CASES[name]
    recorded, _ = _run(name)
    npgrad.manual_seed(0)
    inputs = [_f64(*s, requires_grad=False) for s in shapes]
    npgrad.manual_seed(1)
    plain = call(npgrad, *inputs)
    assert plain.grad_fn is None
    np.testing.assert_array_equal(recorded.detach().numpy(), plain.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_recorded_sampler_draws_torch_values(name: str) -> None:
    torch = pytest.importorskip("torch")
    mine, _ = _run(name, seed=5)
    theirs, _ = _run(name, torch, seed=5)
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


def test_normal_zero_gradients_have_each_input_size() -> None:
    mean, std = _f64(3, 1), _f64(4)
    out = npgrad.normal(mean, std)
    assert out.shape == (3, 4)
    assert out.grad_fn._saved_mean_sym_sizes == (3, 1)
    assert out.grad_fn._saved_std_sym_sizes == (4,)
    g_mean, g_std = out.grad_fn(npgrad.ones(3, 4, dtype=npgrad.float64))
    assert g_mean.shape == (3, 1) and g_std.shape == (4,)
    assert not g_mean.numpy().any() and not g_std.numpy().any()


def test_bernoulli_with_a_probability_tensor_that_requires_grad() -> None:
    p = npgrad.full((1,), 0.5, requires_grad=True)  # float32, broadcast over x
    x = npgrad.zeros(3, dtype=npgrad.float64)
    x.bernoulli_(p)
    edges = x.grad_fn.next_functions
    assert x.grad_fn.name() == "BernoulliBackward1"
    assert edges[0] == (None, 0) and type(edges[1][0]).__name__ == "AccumulateGrad"
    assert [a for a in dir(x.grad_fn) if a.startswith("_saved_")] == []
    none, g_p = x.grad_fn(npgrad.ones(3, dtype=npgrad.float64))
    assert none is None and g_p.dtype == npgrad.float32 and g_p.shape == (1,)
    x.sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [0.0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_sampler_tangent_is_zero(name: str) -> None:
    call, shapes, _, _ = CASES[name]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(_f64(*s, requires_grad=False),
                                npgrad.ones(*s, dtype=npgrad.float64)) for s in shapes]
        out = call(npgrad, *duals)
        tangent = fwAD.unpack_dual(out).tangent
        assert tangent is not None and tangent.shape == out.shape
        assert not tangent.numpy().any()


def test_bernoulli_with_a_float_p_records_torch_not_implemented() -> None:
    x = npgrad.rand(3, requires_grad=True)
    out = npgrad.bernoulli(x, 0.5)
    assert out.grad_fn.name() == "torch::autograd::NotImplemented"
    assert type(out.grad_fn).__name__ == "NotImplemented"
    assert [a for a in dir(out.grad_fn) if a.startswith("_saved_")] == []
    with pytest.raises(RuntimeError, match=r"^derivative for aten::bernoulli is not implemented$"):
        out.sum().backward()
    with fwAD.dual_level():
        dual = fwAD.make_dual(npgrad.rand(3), npgrad.ones(3))
        with pytest.raises(NotImplementedError,
                           match=r"^Trying to use forward AD with aten::bernoulli that does not "
                                 r"support it\.$"):
            npgrad.bernoulli(dual, 0.5)


# -- histogram: one NotImplemented node for both outputs ------------------------------------

def _histogram_edges(lib: Any, which: str) -> tuple:
    x = lib.tensor([0.1, 0.4, 0.5, 0.9], requires_grad="x" in which)
    w = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad="w" in which)
    bins = lib.tensor([0.0, 0.5, 1.0], requires_grad="b" in which)
    hist, edges = lib.histogram(x, bins, weight=w) if "b" in which else \
        lib.histogram(x, 2, weight=w)
    return hist, edges


@pytest.mark.parametrize("which", ["x", "w", "xw", "bw", "b"])
def test_histogram_records_one_node_with_edges_to_what_requires_grad(which: str) -> None:
    hist, edges = _histogram_edges(npgrad, which)
    assert hist.grad_fn is edges.grad_fn
    assert hist.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(hist.grad_fn.next_functions) == len(which)
    assert all(fn is not None for fn, _ in hist.grad_fn.next_functions)
    assert (hist._output_nr, edges._output_nr) == (0, 1)
    with pytest.raises(RuntimeError, match=r"^derivative for aten::histogram is not implemented$"):
        (hist.sum() + edges.sum()).backward()


@pytest.mark.parametrize("which", ["x", "w", "xw", "bw", "b"])
def test_histogram_graph_matches_torch(which: str) -> None:
    torch = pytest.importorskip("torch")
    mine, theirs = _histogram_edges(npgrad, which), _histogram_edges(torch, which)
    for a, b in zip(mine, theirs):
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    assert len(mine[0].grad_fn.next_functions) == len(theirs[0].grad_fn.next_functions)


def test_histogram_of_a_dual_tensor_raises_torch_error() -> None:
    assert_same_error("h(m)", lambda m: {"h": _dual_histogram})


def _dual_histogram(m: Any) -> Any:
    fw = m.autograd.forward_ad
    with fw.dual_level():
        return m.histogram(fw.make_dual(m.rand(5), m.ones(5)), 3)


# -- distances: pairwise_distance's chain, the top-level spellings ----------------------------

def test_pairwise_distance_records_add_scalar_as_torch() -> None:
    a, b = _f64(3, 4), _f64(3, 4)
    out = npgrad.pairwise_distance(a, b)
    norm = out.grad_fn
    add = norm.next_functions[0][0]
    assert norm.name() == "NormBackward1" and add.name() == "AddBackward1"
    assert [a for a in dir(add) if a.startswith("_saved_")] == []
    assert [fn.name() for fn, _ in add.next_functions] == ["SubBackward0"]
    assert REGISTRY["AddBackward1"].node is type(add)


def test_pairwise_distance_graph_matches_torch() -> None:
    torch = pytest.importorskip("torch")

    def chain(t: Any) -> list:
        names, fn = [], t.grad_fn
        while fn is not None and fn.next_functions:
            names.append((fn.name(), len(fn.next_functions)))
            fn = fn.next_functions[0][0]
        return names

    for m in (npgrad, torch):
        m.manual_seed(0)
    mine = npgrad.pairwise_distance(_f64(3, 4), _f64(3, 4), p=1.5, eps=0.25, keepdim=True)
    theirs = torch.pairwise_distance(_f64(3, 4, lib=torch), _f64(3, 4, lib=torch), p=1.5,
                                     eps=0.25, keepdim=True)
    assert chain(mine) == chain(theirs)


def test_add_scalar_promotes_an_integer_difference_as_torch() -> None:
    x1, x2 = npgrad.tensor([[1, 2]]), npgrad.tensor([[4, 6]])
    out = npgrad.pairwise_distance(x1, x2, eps=0.0)
    assert out.dtype == npgrad.float32
    np.testing.assert_allclose(out.numpy(), [5.0])


def test_add_scalar_gradient_is_the_identity_and_its_tangent_too() -> None:
    x = _f64(2, 3)
    out = npgrad.pairwise_distance(x, npgrad.zeros(2, 3, dtype=npgrad.float64), p=1)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))  # |x + eps| for x > 0
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), npgrad.full((2, 3), 2.0, dtype=npgrad.float64))
        tangent = fwAD.unpack_dual(npgrad.pairwise_distance(dual, npgrad.zeros(2, 3), p=1))
        np.testing.assert_allclose(tangent.tangent.numpy(), [6.0, 6.0])


def test_top_level_distances_are_the_functional_ones() -> None:
    assert npgrad.pairwise_distance is npgrad.nn.functional.pairwise_distance
    assert npgrad.cosine_similarity is npgrad.nn.functional.cosine_similarity
    assert "pairwise_distance" in npgrad.__all__ and "cosine_similarity" in npgrad.__all__


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.pairwise_distance(a, b),
    lambda m, a, b: m.pairwise_distance(a, b, 1.0, 0.5, True),
    lambda m, a, b: m.pairwise_distance(x1=a, x2=b, p=3.0),
    lambda m, a, b: m.cosine_similarity(a, b),
    lambda m, a, b: m.cosine_similarity(a, b, 0, 1e-3),
    lambda m, a, b: m.cosine_similarity(x1=a, x2=b, dim=-1),
])
def test_top_level_distances_match_torch(call: Callable) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    outs, grads = [], []
    for m in (npgrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        out = call(m, x, y)
        out.sum().backward()
        outs.append(out.detach().numpy())
        grads.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
    for g, h in zip(grads[0], grads[1]):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("expr", [
    "m.pairwise_distance(a)",
    "m.cosine_similarity(a)",
    "m.cosine_similarity(a, a, dim='x')",
    "m.pairwise_distance(a, a, p='x')",
    "m.pairwise_distance(a, [1.0])",
    "m.cosine_similarity(a, a, 1, -1.0)",
])
def test_top_level_distances_raise_torch_errors(expr: str) -> None:
    assert_same_error(expr, lambda m: {"m": m, "a": m.ones(2, 3)})


# -- an entry without a forward rule: torch's two-line error -----------------------------------

def test_an_entry_without_a_tangent_rule_raises_torch_forward_ad_error() -> None:
    entry = General("twice_without_tangent(Tensor input)", grad_fn="TwiceWithoutTangentBackward0",
                    forward=lambda data: data * 2, derivatives={"self": lambda grad: grad * 2},
                    tangent=None)
    try:
        with fwAD.dual_level():
            dual = fwAD.make_dual(npgrad.rand(3), npgrad.ones(3))
            with pytest.raises(NotImplementedError) as info:
                entry((dual,))
        first, second = str(info.value).split("\n")
        assert first == ("Trying to use forward AD with twice_without_tangent that does not "
                         "support it because it has not been implemented yet.")
        assert second.startswith("Please file an issue to PyTorch at https://github.com/")
        assert second.endswith("or submit a PR adding the implementation to derivatives.yaml")
    finally:
        del REGISTRY["TwiceWithoutTangentBackward0"]


def test_the_forward_ad_error_is_torch_text_for_an_op_without_a_forward_formula() -> None:
    torch = pytest.importorskip("torch")
    from npgrad._ops.checks import forward_ad_missing

    fw = torch.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(torch.rand(1, 1, 3, 3), torch.ones(1, 1, 3, 3))
        with pytest.raises(NotImplementedError) as info:
            torch.nn.functional.grid_sample(x, torch.zeros(1, 2, 2, 2), align_corners=False)
    assert str(forward_ad_missing("grid_sampler_2d")) == str(info.value)
