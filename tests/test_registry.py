"""The op registry (npgrad/_ops/registry.py): each entry is its op's one definition.

What the entries promise beyond the op table's rows (which run every entry's op through
gradcheck, gradgradcheck, forward mode and torch): the node class an entry builds is named as
torch's grad_fn and exists once; its signature is torch's and refuses what torch refuses with
torch's text; tangents are computed at once, so nothing is packed by saved-tensor hooks for a
tangent alone (as in torch); parameters are on the node from the start (``_saved_eps``).
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import npgrad
from npgrad._ops import pointwise, special
from npgrad._ops.registry import REGISTRY, General, Pointwise, PointwiseBinary, View
from npgrad._ops.signature import Overloads

from test_registry_arithmetic import MOVED_GRAD_FNS
from torch_oracle import assert_same_error

GRAD_FN = re.compile(r"[A-Z]\w*Backward\d+(_copy)?")  # torch: DiagonalBackward0_copy
# torch's own C++ nodes beside the generated ones: copy_'s, and unpack_dual's Identity
TORCH_NODES = ("CopyBackwards", "CppFunction")

# entry name -> how npgrad spells the op for a tensor argument
UNARY_SPELLINGS = {
    "angle": npgrad.angle, "sgn": npgrad.sgn,  # npgrad._ops.complex
    "neg": npgrad.neg, "reciprocal": npgrad.reciprocal, "abs": npgrad.abs, "sign": npgrad.sign,
    "exp": npgrad.exp, "log": npgrad.log, "log2": npgrad.log2, "log10": npgrad.log10,
    "log1p": npgrad.log1p, "expm1": npgrad.expm1, "sqrt": npgrad.sqrt, "rsqrt": npgrad.rsqrt,
    "sin": npgrad.sin, "cos": npgrad.cos, "tan": npgrad.tan, "tanh": npgrad.tanh,
    "sigmoid": npgrad.sigmoid, "relu": npgrad.relu, "floor": npgrad.floor,
    "ceil": npgrad.ceil, "trunc": npgrad.trunc, "frac": npgrad.frac, "asin": npgrad.asin,
    "acos": npgrad.acos, "atan": npgrad.atan, "sinh": npgrad.sinh, "cosh": npgrad.cosh,
    "asinh": npgrad.asinh, "acosh": npgrad.acosh, "atanh": npgrad.atanh,
    "erfc": npgrad.erfc, "exp2": npgrad.exp2, "sinc": npgrad.sinc,
    "special_entr": npgrad.special.entr, "nan_to_num": npgrad.nan_to_num,
}
BINARY_SPELLINGS = {"maximum": npgrad.maximum, "minimum": npgrad.minimum,
                    "atan2": npgrad.atan2, "hypot": npgrad.hypot,
                    "logaddexp": npgrad.logaddexp}


def test_every_entry_builds_one_node_class_named_as_torch_names_it() -> None:
    names = [entry.node.__name__ for entry in REGISTRY.values()]
    assert names == list(REGISTRY)
    assert all(GRAD_FN.fullmatch(n) or n in TORCH_NODES for n in names)
    assert len(names) == len(set(names))
    for entry in REGISTRY.values():
        assert entry.node.entry is entry
        assert entry.signature.startswith(entry.name + "(")
        Overloads.parse([entry.signature])  # torch's grammar: it parses


def test_the_entries_are_the_ops_public_spellings_use() -> None:
    x = npgrad.tensor([0.5, 0.25], dtype=npgrad.float64, requires_grad=True)
    y = npgrad.tensor([0.75, 1.5], dtype=npgrad.float64, requires_grad=True)
    by_name = {entry.name: entry for entry in REGISTRY.values()}
    for name, fn in UNARY_SPELLINGS.items():
        assert type(fn(x).grad_fn) is by_name[name].node, name
    for name, fn in BINARY_SPELLINGS.items():
        assert type(fn(x, y).grad_fn) is by_name[name].node, name
    assert type(npgrad.round(x, decimals=1).grad_fn) is pointwise.ROUND_DECIMALS.node
    assert type(npgrad.logit(x, 0.1).grad_fn) is special.LOGIT.node
    assert type((x ** 2).grad_fn) is type(npgrad.pow(x, 0.5).grad_fn) is pointwise.POW_SCALAR.node
    assert type((x ** y).grad_fn) is not pointwise.POW_SCALAR.node  # PowBackward1: not an entry
    assert type(npgrad.round(x).grad_fn) is pointwise.ROUND.node
    assert type(x.clamp(min=0.1).grad_fn) is pointwise.CLAMP_SCALAR.node
    assert type(x.clamp_min(0.1).grad_fn) is pointwise.CLAMP_MIN_SCALAR.node
    assert type(npgrad.clamp_max(x, 0.1).grad_fn) is pointwise.CLAMP_MAX_SCALAR.node
    assert type(x.clamp(min=y).grad_fn) is not pointwise.CLAMP_SCALAR.node  # ClampBackward0
    assert type(npgrad.xlogy(x, y).grad_fn) is special.XLOGY.node
    assert type(npgrad.xlogy(x, 2.0).grad_fn) is special.XLOGY_SCALAR_OTHER.node
    for name in ("asinh_", "acosh_", "atanh_"):  # Note [In-place ops without a derivative]
        assert type(getattr(x * 4, name)().grad_fn) is by_name[name].node, name
    # (``add``: add.Scalar, AddBackward1, which compositions such as pairwise_distance record)
    others = {"round", "logit", "pow", "clamp", "clamp_min", "clamp_max", "xlogy", "asinh_",
              "acosh_", "atanh_", "add"}
    # the View and General entries have their own tests (tests/test_registry_views.py,
    # tests/test_registry_reductions.py)
    # and so have the two-input arithmetic and the activations (tests/test_registry_arithmetic.py)
    elementwise = [entry for entry in REGISTRY.values()
                   if not isinstance(entry, (View, General))
                   and entry.node.__name__ not in MOVED_GRAD_FNS]
    assert (set(UNARY_SPELLINGS) | set(BINARY_SPELLINGS) | others
            == {entry.name for entry in elementwise})
    # round and xlogy are two entries each (``decimals=``; a number ``other``)
    assert len(elementwise) == len(UNARY_SPELLINGS) + len(BINARY_SPELLINGS) + len(others) + 2


def test_an_entry_with_a_parameter_keeps_it_on_its_node_from_the_start() -> None:
    x = npgrad.tensor([0.05, 0.5], requires_grad=True)
    node = npgrad.logit(x, 0.1).grad_fn
    assert node._saved_eps == 0.1
    assert node._saved_self is x or np.array_equal(node._saved_self.numpy(), x.detach().numpy())
    # round(decimals=) reads no parameter in backward: torch keeps none, and neither do we
    assert not hasattr(npgrad.round(x, decimals=1).grad_fn, "_saved_decimals")
    assert (x ** 3).grad_fn._saved_exponent == 3
    # clamp_min keeps min only (torch's ClampMinBackward0 has no _saved_max)
    assert x.clamp_min(0.25).grad_fn._saved_min == 0.25
    assert not hasattr(x.clamp_min(0.25).grad_fn, "_saved_max")
    assert x.clamp(0.0, 1.0).grad_fn._saved_max == 1.0


@pytest.mark.parametrize("name", sorted(UNARY_SPELLINGS))
def test_a_non_tensor_argument_gets_torch_parser_error(name: str) -> None:
    spelled = "special.entr" if name == "special_entr" else name
    for bad in ("1.5", "'x'", "None", "[1.0]"):
        assert_same_error(f"m.{spelled}({bad})", lambda m: {"m": m})


@pytest.mark.parametrize("name", sorted(BINARY_SPELLINGS))
def test_binary_entries_refuse_numbers_as_torch_does(name: str) -> None:
    env = lambda m: {"m": m, "t": m.ones(2)}  # noqa: E731
    assert_same_error(f"m.{name}(t, 1)", env)
    assert_same_error(f"m.{name}(1.5, t)", env)
    assert_same_error(f"m.{name}(t, None)", env)


def test_float_only_binary_entries_name_torch_kernel() -> None:
    env = lambda m: {"m": m, "t": m.tensor([1, 2])}  # noqa: E731
    assert_same_error("m.hypot(t, t)", env)
    assert_same_error("m.logaddexp(t, t)", env)


def _packed_inside_a_dual_level(m: Any) -> tuple:
    """How many tensors saved-tensor hooks see when only tangents flow (nothing recorded)."""
    packed: list = []
    ad = m.autograd.forward_ad
    with ad.dual_level():
        x = ad.make_dual(m.tensor([0.5, 2.0], dtype=m.float64),
                         m.tensor([1.0, -1.0], dtype=m.float64))
        with m.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                  lambda t: t):
            y = m.maximum(m.sin(m.exp(x)), m.logit(x * 0.25, 0.1))
            z = m.hypot(y, m.sqrt(x))
        tangent = ad.unpack_dual(z).tangent
    return len(packed), tangent.numpy()


def test_tangents_computed_at_once_pack_nothing_as_in_torch() -> None:
    count, tangent = _packed_inside_a_dual_level(npgrad)
    assert count == 0
    torch = pytest.importorskip("torch")
    their_count, theirs = _packed_inside_a_dual_level(torch)
    assert their_count == 0
    np.testing.assert_allclose(tangent, theirs, rtol=1e-12)


def test_tangent_of_a_recorded_entry_matches_torch_forward_over_reverse() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for m in (npgrad, torch):
        ad = m.autograd.forward_ad
        x = m.tensor([0.3, 0.7], dtype=m.float64, requires_grad=True)
        with ad.dual_level():
            d = ad.make_dual(x, m.tensor([1.0, 0.5], dtype=m.float64))
            y = m.atan2(m.tanh(d), m.exp2(d))
            (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
            results.append((ad.unpack_dual(y).tangent.detach().numpy(),
                            ad.unpack_dual(g).tangent.detach().numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_bfloat16_pointwise_entries_compute_in_float32_as_torch() -> None:
    """floor and friends on bfloat16 round (before the registry they copied the input)."""
    pytest.importorskip("ml_dtypes", reason="needs the bf16 extra: pip install -e '.[bf16]'")
    torch = pytest.importorskip("torch")
    values = [1.5, -1.5, 2.75, -0.25]
    for name in ("floor", "ceil", "trunc", "round", "frac", "exp", "sqrt", "relu", "abs"):
        mine = getattr(npgrad, name)(npgrad.tensor(values).bfloat16()).float().numpy()
        theirs = getattr(torch, name)(torch.tensor(values).bfloat16()).float().numpy()
        np.testing.assert_array_equal(mine, theirs, err_msg=name)


def test_entries_refuse_a_bad_declaration() -> None:
    with pytest.raises(ValueError, match="saves must be one of"):
        Pointwise("f(Tensor input)", grad_fn="FBackward0", forward=np.exp, saves="input",
                  derivative=lambda grad, x: grad)
    assert "FBackward0" not in REGISTRY


def test_repr_shows_signature_and_grad_fn() -> None:
    assert repr(pointwise.EXP) == "<op exp(Tensor input, *, Tensor out=None) -> ExpBackward0>"
    assert isinstance(special.HYPOT, PointwiseBinary)


# -- torch's names and refusals, through the entries --------------------------------------

ALIAS_AND_CLAMP_CALLS = [
    "m.arctan2('x', t)", "m.arcsin(None)", "m.arccosh(1.5)", "m.arctanh([1.0])",
    "m.absolute(1.5)", "m.negative('a')", "m.clip('x', 0.5)", "m.clamp(None)", "m.clamp(t)",
    "m.clip(t)", "m.clamp(t, 'x')", "m.clamp_min('x', 1.)", "m.clamp_max(1.0, t)",
    "m.clamp(1.5, t, t)", "m.clamp(t, 1.0, t)", "m.clamp_min(t, 'a')", "m.special.erfc(1.)",
    "m.special.expit('a')", "m.special.logit(None)", "m.special.expm1([1.])",
    "m.special.sinc(2)", "m.special.exp2(1.)", "m.special.log1p(1.)",
    "m.pow('x', t)", "m.pow(t, 'x')", "m.pow(1, 2)", "m.pow(t, None)", "m.square(1)",
    "m.square(t, 1)", "m.acos_(1.)", "m.atanh_(None)", "m.exp2_(1)",
]


@pytest.mark.parametrize("call", ALIAS_AND_CLAMP_CALLS)
def test_aliases_and_clamp_overloads_raise_torch_texts(call: str) -> None:
    assert_same_error(call, lambda m: {"m": m, "t": m.ones(2)})


def test_an_alias_names_itself_in_the_error_without_torch() -> None:
    with pytest.raises(TypeError, match=r"^arctan2\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not str$"):
        npgrad.arctan2("x", npgrad.ones(2))
    with pytest.raises(TypeError, match=r"^special_expit\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not float$"):
        npgrad.special.expit(1.0)
    expected = ("clip() received an invalid combination of arguments - got (str, float), but "
                "expected one of:\n"
                " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    with pytest.raises(TypeError) as info:
        npgrad.clip("x", 0.5)
    assert str(info.value) == expected
    assert type(npgrad.arcsin(npgrad.ones(1, requires_grad=True)).grad_fn) is special.ASIN.node


REFUSED_DTYPES = [("abs", "bool"), ("relu", "bool"), ("floor", "bool"), ("ceil", "bool"),
                  ("trunc", "bool"), ("round", "bool"), ("frac", "bool"), ("frac", "int64"),
                  ("frac", "uint8"), ("hypot", "int64"), ("logaddexp", "bool")]


@pytest.mark.parametrize("name,dtype", REFUSED_DTYPES)
def test_dtypes_torch_has_no_kernel_for(name: str, dtype: str) -> None:
    binary = name in BINARY_SPELLINGS
    call = f"m.{name}(x, x)" if binary else f"m.{name}(x)"
    assert_same_error(call, lambda m: {"m": m, "x": m.tensor([1, 0], dtype=getattr(m, dtype))})


def test_dtype_refusals_without_torch() -> None:
    with pytest.raises(NotImplementedError, match="^\"frac_cpu\" not implemented for 'Long'$"):
        npgrad.frac(npgrad.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="^Boolean inputs not supported for relu$"):
        npgrad.relu(npgrad.tensor([True]))
    with pytest.raises(NotImplementedError, match="^\"round_cpu\" not implemented for 'Long'$"):
        npgrad.round(npgrad.tensor([15]), decimals=-1)
    assert npgrad.sign(npgrad.tensor([True, False])).tolist() == [True, False]


def test_half_precision_composites_round_once_as_torch() -> None:
    """sigmoid / sinc on float16 compute in float32 and round once (Note [Half precision
    computes in float32]); NumPy's float16 chain rounded after every step."""
    x = npgrad.tensor([0.0, 1.0, 2.0], dtype=npgrad.float16)
    assert npgrad.sigmoid(x).tolist() == [0.5, 0.73095703125, 0.880859375]  # torch 2.13's
    assert npgrad.sinc(x).tolist() == [1.0, -0.0, 0.0]  # exact zeros at the integers
    torch = pytest.importorskip("torch")
    values = np.linspace(-3, 3, 25)
    for name in ("sigmoid", "sinc", "tanh", "exp", "logit", "atan", "erfc"):
        mine = getattr(npgrad, name)(npgrad.tensor(values, dtype=npgrad.float16)).numpy()
        theirs = getattr(torch, name)(torch.tensor(values, dtype=torch.float16)).numpy()
        np.testing.assert_array_equal(mine, theirs, err_msg=name)


# -- operators: NotImplemented for operands the op does not take (Note [Operators give
# NotImplemented]) ----------------------------------------------------------------------

OPERATOR_EXPRESSIONS = [
    "t == None", "t != None", "t == 'x'", "t == [1, 1]", "t / 'x'", "t ** 'x'", "t ** None",
    "t < None", "t >= 'a'", "t & None", "t | 'a'", "t ^ [1]", "t @ 1", "t // 'a'", "t % None",
    "t + None", "t - 'x'", "None + t", "None ** t", "t * [1]", "'a' * t", "t + [1, 2]",
    "2 ** t", "t / 2", "2 / t", "t == np.ones(2)", "t ** np.ones(2)", "t - np.ones(2)",
    "t.bool() & t.bool()", "7 - t", "t // 2", "t % 2",
]


@pytest.mark.parametrize("expression", OPERATOR_EXPRESSIONS)
def test_operators_answer_as_torch_for_every_operand(expression: str) -> None:
    torch = pytest.importorskip("torch")
    outcomes = []
    for m in (npgrad, torch):
        env = {"t": m.ones(2), "np": np}
        try:
            value = eval(expression, env)
        except TypeError as e:
            outcomes.append(("TypeError", str(e)))
        else:
            outcomes.append(("ok", value.tolist() if hasattr(value, "tolist") else value))
    assert outcomes[0] == outcomes[1]


def test_comparing_with_none_is_false_without_torch() -> None:
    t = npgrad.ones(2)
    assert (t == None) is False  # noqa: E711 - what the test is about
    assert (t != None) is True  # noqa: E711
    with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for /: 'Tensor' and "
                                        r"'str'$"):
        t / "x"


INPLACE_OPERATOR_STATEMENTS = ["t **= [1, 2]", "t += None", "t -= 1", "t *= 2.0", "t /= 'a'",
                               "t //= None", "t %= 'x'", "t += np.ones(2)"]


@pytest.mark.parametrize("statement", INPLACE_OPERATOR_STATEMENTS)
def test_inplace_operators_answer_as_torch(statement: str) -> None:
    torch = pytest.importorskip("torch")
    outcomes = []
    for m in (npgrad, torch):
        env = {"t": m.ones(2, dtype=m.float64), "np": np}
        try:
            exec(statement, env)
        except TypeError as e:
            outcomes.append(("TypeError", str(e)))
        else:
            outcomes.append(("ok", env["t"].tolist()))
    assert outcomes[0] == outcomes[1]
