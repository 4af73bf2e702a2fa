"""THE op table: one row per differentiable op overload of npgrad/_ops, for test_op_table.py.

A row is data, not a test.  ``fn(mod, *inputs)`` runs the op with ``mod`` being ``npgrad``
or ``torch``; the inputs are the row's tensors (random data of the given shapes, drawn in
the row's domain, or fixed NumPy arrays).  Everything that is not a differentiable input
(index tensors, masks, targets, scalars) is built inside ``fn`` with ``mod`` so the same
row runs on both libraries.  ``fn`` may return a tensor or a tuple of tensors.

Every row gets, in float64, ``npgrad.autograd.gradcheck`` and ``gradgradcheck``; in
float32 and float64, a torch comparison of values, dtype, shape, ``grad_fn`` name, view-ness
and input gradients (and, in float64, of second-order gradients); a no-grad check; and the
pointwise rows a hypothesis property with random broadcast shapes.

A check a row cannot take says why in the row: ``no_gradcheck`` / ``no_gradgradcheck`` hold
the reason.  Note [Known bugs]: a row that shows a bug in an op names it in ``known_bug``
and lists the checks it breaks in ``bug_in``; those checks are strict xfails, so fixing the
op makes them XPASS and fail until the row is updated.
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable

import numpy as np

# Check names, as used in ``OpRow.bug_in``.
GRADCHECK = "gradcheck"
GRADGRADCHECK = "gradgradcheck"
TORCH_F32 = "torch_float32"
TORCH_F64 = "torch_float64"
TORCH = frozenset({TORCH_F32, TORCH_F64})
SECOND_ORDER = "second_order_torch"
PROPERTY = "property"
NO_GRAD = "no_grad"
FORWARD = "forward_ad"  # forward-mode tangents against reverse-mode Jacobians and finite differences
FORWARD_TORCH = "forward_ad_torch"  # forward-mode tangents against torch's
CHECKS = (GRADCHECK, GRADGRADCHECK, TORCH_F32, TORCH_F64, SECOND_ORDER, PROPERTY, NO_GRAD, FORWARD,
          FORWARD_TORCH)

# Input domains: how random data is drawn (fixed tests) and the ranges hypothesis draws from.
DOMAINS = {
    "real": (-4.0, 4.0),
    "positive": (0.25, 4.0),
    "nonzero": (0.25, 4.0),  # either sign, magnitude in this range
    "unit": (-0.9, 0.9),
    "prob": (0.1, 0.9),  # probabilities, away from 0 and 1
}


@dataclasses.dataclass(frozen=True)
class OpRow:
    name: str
    fn: Callable[..., Any]
    inputs: tuple  # per input: a shape tuple (random data) or a NumPy array (fixed data)
    family: str
    requires_grad: tuple | None = None  # per input; all True when None
    domain: Any = "real"  # one domain for all inputs, or a tuple with one per input
    grad_fn: str | None = None  # asserted on npgrad's first output when given
    no_gradcheck: str = ""  # reason the finite-difference check does not apply
    no_gradgradcheck: str = ""  # reason the second-order check does not apply
    known_bug: str = ""  # Note [Known bugs]
    bug_in: frozenset = frozenset()
    broadcast: str = "mutual"  # property shapes: "mutual", "first" (to input 0), "same",
    # or "scalar_rest" (inputs after the first are 0-dim)
    torch_backward: bool = True  # False: torch itself cannot differentiate this overload
    tol: float = 1.0  # scales the tolerances of the torch comparisons
    # torch's reverse-mode gradient is not the derivative (forward mode's is): the forward
    # tangents are then checked against finite differences, not against reverse mode
    gradient_not_derivative: bool = False

    @property
    def second_order(self) -> bool:
        return not self.no_gradgradcheck

    @property
    def rg(self) -> tuple:
        if self.requires_grad is not None:
            return tuple(self.requires_grad)
        return (True,) * len(self.inputs)

    def domain_of(self, i: int) -> str:
        return self.domain if isinstance(self.domain, str) else self.domain[i]

    def arrays(self, dtype: Any = np.float64, seed: int = 0) -> list:
        """The row's input data: random in its domain (seeded by name) or its fixed arrays."""
        rng = np.random.default_rng(zlib.crc32(self.name.encode()) + seed)
        out = []
        for i, spec in enumerate(self.inputs):
            if isinstance(spec, np.ndarray):
                out.append(spec.astype(dtype))
                continue
            data = draw(rng, tuple(spec), self.domain_of(i))
            out.append(np.asarray(data, dtype=dtype))
        return out


def draw(rng: np.random.Generator, shape: tuple, domain: str) -> np.ndarray:
    data = rng.standard_normal(shape)
    if domain == "positive":
        return np.abs(data) + 0.5
    if domain == "nonzero":
        return np.sign(data + 1e-300) * (np.abs(data) + 0.5)
    if domain in ("unit", "prob"):
        return rng.uniform(*DOMAINS[domain], shape)
    return data


def _arr(*rows: Any) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


def _idx(m: Any, data: Any) -> Any:
    return m.tensor(data)


def _F(m: Any) -> Any:
    return m.nn.functional


# ==============================================================================================
# pointwise.py
# ==============================================================================================

def P(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "pointwise", grad_fn=grad_fn, **kw)


_S = (2, 3)
_ZERO_GRAD_2ND = ""  # zero-gradient ops: gradgradcheck runs and finds no differentiable output

POINTWISE = [
    # add / sub / rsub
    P("add", lambda m, x, y: x + y, (_S, _S), "AddBackward0"),
    P("add_broadcast", lambda m, x, y: m.add(x, y), (_S, (3,)), "AddBackward0"),
    P("add_broadcast_both", lambda m, x, y: x + y, ((2, 1), (1, 3)), "AddBackward0"),
    P("add_0dim", lambda m, x, y: x + y, (_S, ()), "AddBackward0"),
    P("add_scalar", lambda m, x: x + 2.5, (_S,), "AddBackward0"),
    P("radd_scalar", lambda m, x: 2.5 + x, (_S,), "AddBackward0"),
    P("add_alpha", lambda m, x, y: m.add(x, y, alpha=2), (_S, _S), "AddBackward0"),
    P("add_scalar_alpha", lambda m, x: m.add(x, 2, alpha=3), (_S,), "AddBackward0"),
    P("add_same_input", lambda m, x: x + x, (_S,), "AddBackward0"),
    P("add_only_other", lambda m, x, y: x + y, (_S, _S), "AddBackward0",
      requires_grad=(False, True)),
    P("sub", lambda m, x, y: x - y, (_S, _S), "SubBackward0"),
    P("sub_broadcast", lambda m, x, y: m.sub(x, y), (_S, (2, 1)), "SubBackward0"),
    P("sub_scalar", lambda m, x: x - 2.5, (_S,), "SubBackward0"),
    P("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=2), (_S, _S), "SubBackward0"),
    P("rsub_scalar", lambda m, x: 2.5 - x, (_S,), "RsubBackward1"),
    P("rsub_fn_scalar", lambda m, x: m.rsub(x, 2.0), (_S,), "RsubBackward1"),
    P("rsub_fn_scalar_alpha", lambda m, x: m.rsub(x, 2.0, alpha=3), (_S,), "RsubBackward1"),
    P("rsub_tensor", lambda m, x, y: m.rsub(x, y), (_S, _S), "RsubBackward0"),
    P("rsub_tensor_alpha", lambda m, x, y: m.rsub(x, y, alpha=2), (_S, (3,)), "RsubBackward0"),
    # mul / div
    P("mul", lambda m, x, y: x * y, (_S, _S), "MulBackward0"),
    P("mul_broadcast", lambda m, x, y: m.mul(x, y), ((2, 1), (1, 3)), "MulBackward0"),
    P("mul_scalar", lambda m, x: x * 2.5, (_S,), "MulBackward0"),
    P("rmul_scalar", lambda m, x: 2.5 * x, (_S,), "MulBackward0"),
    P("mul_same_input", lambda m, x: x * x, (_S,), "MulBackward0"),
    P("mul_only_self", lambda m, x, y: x * y, (_S, (3,)), "MulBackward0",
      requires_grad=(True, False)),
    P("div", lambda m, x, y: x / y, (_S, _S), "DivBackward0", domain=("real", "nonzero")),
    P("div_broadcast", lambda m, x, y: m.div(x, y), (_S, (3,)), "DivBackward0",
      domain=("real", "nonzero")),
    P("div_scalar", lambda m, x: x / 2.5, (_S,), "DivBackward0"),
    P("rdiv_scalar", lambda m, x: 2.5 / x, (_S,), "MulBackward0", domain="nonzero"),
    P("true_divide", lambda m, x, y: m.true_divide(x, y), (_S, _S), "DivBackward0",
      domain=("real", "nonzero")),
    P("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor"), (_S, _S), "DivBackward2",
      domain=("real", "nonzero")),
    P("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc"), (_S, (3,)), "DivBackward2",
      domain=("real", "nonzero")),
    P("div_floor_scalar", lambda m, x: x.div(0.7, rounding_mode="floor"), (_S,), "DivBackward2"),
    P("div_trunc_scalar", lambda m, x: x.div(0.7, rounding_mode="trunc"), (_S,), "DivBackward2"),
    # pow: scalar exponent (0), tensor exponent (1), scalar base (2)
    P("pow_scalar", lambda m, x: x ** 2, (_S,), "PowBackward0"),
    P("pow_scalar_fn", lambda m, x: m.pow(x, 3), (_S,), "PowBackward0"),
    P("pow_scalar_frac", lambda m, x: x ** 2.5, (_S,), "PowBackward0", domain="positive"),
    P("pow_scalar_negative", lambda m, x: x.pow(-1.5), (_S,), "PowBackward0", domain="positive"),
    P("pow_scalar_zero", lambda m, x: m.pow(x, 0), (_S,), "PowBackward0"),
    P("square", lambda m, x: m.square(x), (_S,), "PowBackward0"),
    P("pow_tensor", lambda m, x, y: x ** y, (_S, _S), "PowBackward1", domain=("positive", "real")),
    P("pow_tensor_broadcast", lambda m, x, y: m.pow(x, y), (_S, (3,)), "PowBackward1",
      domain=("positive", "real")),
    P("pow_tensor_only_exponent", lambda m, x, y: x ** y, (_S, _S), "PowBackward1",
      domain=("positive", "real"), requires_grad=(False, True)),
    P("pow_scalar_base", lambda m, x: 2.0 ** x, (_S,), "PowBackward2"),
    P("pow_scalar_base_fn", lambda m, x: m.pow(1.5, x), (_S,), "PowBackward2"),
    # one-input ops
    P("neg", lambda m, x: -x, (_S,), "NegBackward0"),
    P("neg_fn", lambda m, x: m.neg(x), (_S,), "NegBackward0"),
    P("reciprocal", lambda m, x: x.reciprocal(), (_S,), "ReciprocalBackward0", domain="nonzero"),
    P("abs", lambda m, x: x.abs(), (_S,), "AbsBackward0", domain="nonzero"),
    P("abs_at_zero", lambda m, x: m.abs(x), (_arr([0.0, -1.0, 2.0]),), "AbsBackward0",
      no_gradcheck="abs has a kink at 0 (torch's gradient there is 0)",
      no_gradgradcheck="abs has a kink at 0"),
    P("sign", lambda m, x: x.sign(), (_S,), "SignBackward0", domain="nonzero"),
    P("exp", lambda m, x: x.exp(), (_S,), "ExpBackward0"),
    P("log", lambda m, x: x.log(), (_S,), "LogBackward0", domain="positive"),
    P("log2", lambda m, x: m.log2(x), (_S,), "Log2Backward0", domain="positive"),
    P("log10", lambda m, x: x.log10(), (_S,), "Log10Backward0", domain="positive"),
    P("log1p", lambda m, x: x.log1p(), (_S,), "Log1PBackward0", domain="unit"),
    P("expm1", lambda m, x: m.expm1(x), (_S,), "Expm1Backward0"),
    P("sqrt", lambda m, x: x.sqrt(), (_S,), "SqrtBackward0", domain="positive"),
    P("rsqrt", lambda m, x: m.rsqrt(x), (_S,), "RsqrtBackward0", domain="positive"),
    P("sin", lambda m, x: x.sin(), (_S,), "SinBackward0"),
    P("cos", lambda m, x: m.cos(x), (_S,), "CosBackward0"),
    P("tan", lambda m, x: x.tan(), (_S,), "TanBackward0", domain="unit"),
    P("tanh", lambda m, x: m.tanh(x), (_S,), "TanhBackward0"),
    P("sigmoid", lambda m, x: x.sigmoid(), (_S,), "SigmoidBackward0"),
    P("relu", lambda m, x: x.relu(), (_S,), "ReluBackward0", domain="nonzero"),
    P("relu_fn", lambda m, x: m.relu(x), (_S,), "ReluBackward0", domain="nonzero"),
    P("relu_functional", lambda m, x: _F(m).relu(x), (_S,), "ReluBackward0", domain="nonzero"),
    P("relu_at_zero", lambda m, x: x.relu(), (_arr([0.0, -1.0, 2.0]),), "ReluBackward0",
      no_gradcheck="relu has a kink at 0 (torch's gradient there is 0)",
      no_gradgradcheck="relu has a kink at 0"),
    # rounding: zero gradients
    P("floor", lambda m, x: x.floor(), (_S,), "FloorBackward0"),
    P("ceil", lambda m, x: m.ceil(x), (_S,), "CeilBackward0"),
    P("round", lambda m, x: x.round(), (_S,), "RoundBackward0"),
    P("round_decimals", lambda m, x: m.round(x, decimals=1), (_S,), "RoundBackward1"),
    P("trunc", lambda m, x: m.trunc(x), (_S,), "TruncBackward0"),
    P("frac", lambda m, x: x.frac(), (_S,), "FracBackward0"),
    # clamp: scalar bounds (ClampBackward1), tensor bounds (ClampBackward0)
    P("clamp_scalar", lambda m, x: x.clamp(-0.5, 0.5), (_S,), "ClampBackward1"),
    P("clamp_scalar_min", lambda m, x: m.clamp(x, min=-0.5), (_S,), "ClampBackward1"),
    P("clamp_scalar_max", lambda m, x: x.clamp(max=0.5), (_S,), "ClampBackward1"),
    P("clip", lambda m, x: m.clip(x, -0.5, 0.5), (_S,), "ClampBackward1"),
    P("clamp_min_scalar", lambda m, x: x.clamp_min(0.1), (_S,), "ClampMinBackward0"),
    P("clamp_max_scalar", lambda m, x: m.clamp_max(x, 0.1), (_S,), "ClampMaxBackward0"),
    # broadcast="first": torch's own clamp backward fails when the bounds broadcast x up
    P("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi), (_S, _S, _S), "ClampBackward0",
      broadcast="first"),
    P("clamp_tensor_ordered", lambda m, x, lo: m.clamp(x, lo, lo + 1.0), (_S, _S),
      "ClampBackward0"),
    P("clamp_tensor_broadcast", lambda m, x, lo: x.clamp(lo - 0.5, lo + 0.5), (_S, (3,)),
      "ClampBackward0"),
    P("clamp_tensor_min", lambda m, x, lo: x.clamp(min=lo), (_S, _S), "ClampBackward0"),
    P("clamp_tensor_max", lambda m, x, hi: x.clamp(max=hi), (_S, (3,)), "ClampBackward0"),
    P("clamp_min_tensor", lambda m, x, lo: x.clamp_min(lo), (_S, _S), "ClampMinBackward1"),
    P("clamp_max_tensor", lambda m, x, hi: m.clamp_max(x, hi), (_S, (3,)), "ClampMaxBackward1"),
    # maximum / minimum / where / masked_fill / lerp
    P("maximum", lambda m, x, y: m.maximum(x, y), (_S, _S), "MaximumBackward0"),
    P("maximum_broadcast", lambda m, x, y: x.maximum(y), (_S, (3,)), "MaximumBackward0"),
    P("maximum_ties", lambda m, x, y: m.maximum(x, y),
      (_arr([1.0, 2.0, 3.0]), _arr([1.0, 0.0, 3.0])), "MaximumBackward0",
      no_gradcheck="maximum is not differentiable at ties (torch splits the gradient)",
      no_gradgradcheck="not differentiable at ties"),
    P("minimum", lambda m, x, y: m.minimum(x, y), (_S, _S), "MinimumBackward0"),
    P("minimum_broadcast", lambda m, x, y: x.minimum(y), ((2, 1), (1, 3)), "MinimumBackward0"),
    P("minimum_ties", lambda m, x, y: m.minimum(x, y),
      (_arr([1.0, 2.0, 3.0]), _arr([1.0, 0.0, 3.0])), "MinimumBackward0",
      no_gradcheck="minimum is not differentiable at ties (torch splits the gradient)",
      no_gradgradcheck="not differentiable at ties"),
    P("max_other", lambda m, x, y: m.max(x, y), (_S, _S), "MaximumBackward0"),
    P("min_other", lambda m, x, y: m.min(x, y), (_S, (3,)), "MinimumBackward0"),
    P("where", lambda m, x, y: m.where(x > 0, x, y), (_S, _S), "WhereBackward0"),
    P("where_broadcast", lambda m, x, y: m.where(y > 0, x, y), (_S, (3,)), "WhereBackward0"),
    P("where_method", lambda m, x, y: x.where(y < 0, y), (_S, _S), "WhereBackward0"),
    P("where_scalar_other", lambda m, x: m.where(x > 0, x, 2.0), (_S,), "WhereBackward0"),
    P("where_scalar_input", lambda m, y: m.where(y > 0, -1.5, y), (_S,), "WhereBackward0"),
    P("masked_fill", lambda m, x: x.masked_fill(x > 0.5, 2.0), (_S,), "MaskedFillBackward0"),
    P("masked_fill_broadcast_mask", lambda m, x, y: m.masked_fill(x, y > 0, -1.0), (_S, (3,)),
      "MaskedFillBackward0", requires_grad=(True, False), broadcast="first"),
    P("masked_fill_tensor_value", lambda m, x, v: x.masked_fill(x > 0, v), (_S, ()), "MaskedFillBackward1", broadcast="scalar_rest"),
    P("lerp", lambda m, x, y: m.lerp(x, y, 0.3), (_S, _S), "LerpBackward0"),
    P("lerp_broadcast", lambda m, x, y: x.lerp(y, 0.75), (_S, (3,)), "LerpBackward0"),
    P("lerp_tensor_weight", lambda m, x, y, w: m.lerp(x, y, w), (_S, _S, _S), "LerpBackward1"),
    # remainder / fmod
    P("remainder_scalar", lambda m, x: x.remainder(1.5), (_S,), "RemainderBackward0"),
    P("mod_scalar", lambda m, x: x % 1.5, (_S,), "RemainderBackward0"),
    P("remainder_tensor", lambda m, x, y: m.remainder(x, y), (_S, _S), "RemainderBackward1",
      domain=("real", "nonzero")),
    P("mod_tensor_broadcast", lambda m, x, y: x % y, (_S, (3,)), "RemainderBackward1",
      domain=("real", "nonzero")),
    P("remainder_scalar_self", lambda m, x: m.remainder(2.5, x), (_S,), domain="nonzero",
      torch_backward=False,
      no_gradcheck="torch does not differentiate remainder(Scalar, Tensor) (grad_fn "
                   "NotImplemented)",
      no_gradgradcheck="torch does not differentiate remainder(Scalar, Tensor)"),
    P("floor_divide", lambda m, x, y: m.floor_divide(x, y), (_S, _S), domain=("real", "nonzero"),
      torch_backward=False,
      no_gradcheck="torch does not differentiate floor_divide (grad_fn NotImplemented)",
      no_gradgradcheck="torch does not differentiate floor_divide"),
    P("fmod_scalar", lambda m, x: x.fmod(1.5), (_S,), "FmodBackward0"),
    P("fmod_tensor", lambda m, x, y: m.fmod(x, y), (_S, _S), "FmodBackward1",
      domain=("real", "nonzero")),
]


# ==============================================================================================
# reduction.py and linalg.py (migrated from tests/test_reduction_linalg.py)
# ==============================================================================================

def R(name: str, fn: Callable, inputs: tuple, rg: tuple | None = None, fd: bool = True,
      positive: bool = False, **kw: Any) -> OpRow:
    """A reduction/linalg row; ``fd=False`` marks inputs at a tie or kink (no finite differences)."""
    if not fd:
        kw.setdefault("no_gradcheck", "evaluated at a tie or kink: finite differences do not "
                                      "apply (torch's subgradient is compared instead)")
        kw.setdefault("no_gradgradcheck", "evaluated at a tie or kink")
    if positive:
        kw.setdefault("domain", "positive")
    return OpRow(name, fn, tuple(inputs), "reduction", requires_grad=rg, **kw)


TIES = _arr([1.0, 3.0, 3.0], [2.0, 2.0, -1.0])
ZEROS1 = _arr([1.5, 0.0, 2.0], [0.5, -2.0, 3.0])
ZEROS2 = _arr([0.0, 0.0, 2.0], [0.5, 0.0, 3.0])
BIG = _arr([1000.0, 1001.0, -1000.0], [-5.0, 0.0, 5.0])
NORM_ZERO = _arr([0.0, 0.0, 0.0], [3.0, 4.0, 0.0])

REDUCTION = [
    # sum / mean / prod
    R("sum", lambda m, x: m.sum(x), ((2, 3),)),
    R("sum_dim", lambda m, x: x.sum(1), ((2, 3),)),
    R("sum_dim_none", lambda m, x: x.sum(dim=None), ((2, 3),)),  # SumBackward1, as torch
    R("mean_dim_none", lambda m, x: m.mean(x, None), ((2, 3),)),  # MeanBackward1
    R("sum_neg_dim_keep", lambda m, x: x.sum(-1, keepdim=True), ((2, 3),)),
    R("sum_tuple", lambda m, x: m.sum(x, (0, 2)), ((2, 3, 4),)),
    R("sum_list_keep", lambda m, x: x.sum([0, 2], True), ((2, 3, 4),)),
    R("sum_empty_tuple", lambda m, x: x.sum(()), ((2, 3),)),
    R("sum_0dim", lambda m, x: x.sum(0), ((),)),
    R("sum_dtype", lambda m, x: x.sum(dtype=m.float64), ((2, 3),)),
    R("sum_f32", lambda m, x: x.sum(0), ((4, 3),)),
    R("mean", lambda m, x: x.mean(), ((2, 3),)),
    R("mean_dim", lambda m, x: m.mean(x, 0), ((2, 3),)),
    R("mean_tuple_keep", lambda m, x: x.mean((0, 1), keepdim=True), ((2, 3, 2),)),
    R("mean_dtype", lambda m, x: x.mean(1, dtype=m.float64), ((2, 3),)),
    R("prod", lambda m, x: x.prod(), ((2, 3),)),
    R("prod_dim", lambda m, x: m.prod(x, 1, True), ((2, 3),)),
    R("prod_one_zero", lambda m, x: x.prod(1), (ZEROS1,)),
    R("prod_zeros_all", lambda m, x: x.prod(), (ZEROS1,)),
    R("prod_two_zeros", lambda m, x: x.prod(), (ZEROS2,)),
    R("prod_two_zeros_dim", lambda m, x: x.prod(0), (ZEROS2,)),
    # amax / amin / max / min
    R("amax", lambda m, x: x.amax(), ((2, 3),)),
    R("amax_dim", lambda m, x: m.amax(x, 1), ((2, 3),)),
    R("amin_tuple_keep", lambda m, x: x.amin((0, 2), keepdim=True), ((2, 3, 4),)),
    R("amax_ties", lambda m, x: x.amax(1), (TIES,), fd=False),
    R("amin_ties_all", lambda m, x: x.amin(), (TIES,), fd=False),
    R("max", lambda m, x: x.max(), ((2, 3),)),
    R("min", lambda m, x: m.min(x), ((2, 3),)),
    R("max_ties", lambda m, x: x.max(), (_arr([3.0, 1.0], [3.0, 3.0]),), fd=False),
    R("max_dim", lambda m, x: x.max(1).values, ((2, 3),)),
    R("max_dim_kw", lambda m, x: m.max(x, dim=0, keepdim=True)[0], ((2, 3),)),
    R("max_dim_tuple", lambda m, x: tuple(x.max(1)), ((2, 3),)),
    R("min_dim", lambda m, x: x.min(-1)[0], ((3, 4),)),
    R("min_dim_tuple", lambda m, x: tuple(m.min(x, 0, True)), ((3, 4),)),
    R("max_dim_ties", lambda m, x: x.max(1).values, (TIES,), fd=False),
    R("max_0dim", lambda m, x: x.max(0).values, ((),)),
    # var / std
    R("var", lambda m, x: x.var(), ((2, 3),)),
    R("var_dim", lambda m, x: m.var(x, 1), ((2, 3),)),
    R("var_biased", lambda m, x: x.var(0, unbiased=False), ((3, 2),)),
    R("var_correction", lambda m, x: x.var((0, 1), correction=2, keepdim=True), ((3, 2, 2),)),
    R("var_bool_positional", lambda m, x: m.var(x, False), ((2, 3),)),
    R("std", lambda m, x: x.std(), ((2, 3),)),
    R("std_dim_keep", lambda m, x: m.std(x, 0, True, True), ((3, 2),)),
    R("std_correction0", lambda m, x: x.std(dim=1, correction=0), ((2, 4),)),
    # logsumexp
    R("logsumexp", lambda m, x: m.logsumexp(x, 1), ((2, 3),)),
    R("logsumexp_tuple_keep", lambda m, x: x.logsumexp((0, 1), keepdim=True), ((2, 3),)),
    R("logsumexp_big", lambda m, x: x.logsumexp(1), (BIG,)),
    R("logsumexp_0dim", lambda m, x: x.logsumexp(0), ((),)),
    # norm
    R("norm", lambda m, x: x.norm(), ((2, 3),)),
    R("norm_p1", lambda m, x: x.norm(1), ((2, 3),)),
    R("norm_inf_dim", lambda m, x: x.norm(float("inf"), 1), ((2, 3),)),
    R("norm_neginf", lambda m, x: m.norm(x, -float("inf")), ((2, 3),)),
    R("norm_p3_keep", lambda m, x: x.norm(3, (0, 1), True), ((2, 3),)),
    R("norm_p_half", lambda m, x: x.norm(0.5, 0), ((2, 3),), positive=True),
    R("norm_dim", lambda m, x: m.norm(x, dim=1), ((2, 3),)),
    R("norm_fro_dims", lambda m, x: x.norm("fro", (1, 2)), ((2, 3, 2),)),
    R("norm_at_zero", lambda m, x: x.norm(dim=1), (NORM_ZERO,), fd=False),
    R("norm_p0", lambda m, x: x.norm(0, 1), ((2, 3),), fd=False),
    R("norm_inf_ties", lambda m, x: x.norm(float("inf")), (_arr([-3.0, 3.0], [1.0, 2.0]),),
      fd=False),
    R("norm_dtype", lambda m, x: x.norm(dtype=m.float64), ((2, 3),)),
    # cumsum / softmax / log_softmax
    R("cumsum", lambda m, x: x.cumsum(1), ((2, 4),)),
    R("cumsum_dim0", lambda m, x: m.cumsum(x, 0), ((3, 2),)),
    R("cumsum_dtype", lambda m, x: m.cumsum(x, -1, dtype=m.float64), ((3, 2),)),
    R("cumsum_0dim", lambda m, x: x.cumsum(0), ((),)),
    R("softmax", lambda m, x: x.softmax(1), ((2, 4),)),
    R("softmax_dim0", lambda m, x: m.softmax(x, 0), ((3, 2, 2),)),
    R("softmax_big", lambda m, x: x.softmax(-1), (BIG,)),
    R("softmax_f32", lambda m, x: x.softmax(1), ((2, 4),)),
    R("softmax_dtype", lambda m, x: m.softmax(x, 1, dtype=m.float64), ((2, 4),)),
    R("softmax_functional", lambda m, x: _F(m).softmax(x, dim=-1), ((2, 4),)),
    R("log_softmax", lambda m, x: x.log_softmax(1), ((2, 4),)),
    R("log_softmax_big", lambda m, x: m.log_softmax(x, 1), (BIG,)),
    R("log_softmax_dim0", lambda m, x: x.log_softmax(0), ((3, 2),)),
    R("log_softmax_functional", lambda m, x: _F(m).log_softmax(x, dim=1), ((2, 4),)),
    # products
    R("dot", lambda m, a, b: m.dot(a, b), ((3,), (3,))),
    R("mv", lambda m, a, b: m.mv(a, b), ((2, 3), (3,))),
    R("mm", lambda m, a, b: m.mm(a, b), ((2, 3), (3, 4))),
    R("mm_f32", lambda m, a, b: a.mm(b), ((2, 3), (3, 4))),
    R("mm_only_mat1", lambda m, a, b: m.mm(a, b), ((2, 3), (3, 4)), rg=(True, False)),
    R("bmm", lambda m, a, b: m.bmm(a, b), ((2, 2, 3), (2, 3, 4))),
    R("outer", lambda m, a, b: m.outer(a, b), ((3,), (2,))),
    R("addmm", lambda m, s, a, b: m.addmm(s, a, b), ((2, 4), (2, 3), (3, 4))),
    R("addmm_bias", lambda m, s, a, b: m.addmm(s, a, b, beta=0.5, alpha=2.0),
      ((4,), (2, 3), (3, 4))),
    R("addmm_beta0", lambda m, s, a, b: m.addmm(s, a, b, beta=0), ((1, 4), (2, 3), (3, 4))),
    R("matmul_1_1", lambda m, a, b: m.matmul(a, b), ((3,), (3,))),
    R("matmul_2_1", lambda m, a, b: a @ b, ((2, 3), (3,))),
    R("matmul_1_2", lambda m, a, b: a @ b, ((3,), (3, 4))),
    R("matmul_2_2", lambda m, a, b: a.matmul(b), ((2, 3), (3, 4))),
    R("matmul_3_3", lambda m, a, b: a @ b, ((5, 2, 3), (5, 3, 4))),
    R("matmul_3_2", lambda m, a, b: a @ b, ((5, 2, 3), (3, 4))),
    R("matmul_2_3", lambda m, a, b: a @ b, ((2, 3), (5, 3, 4))),
    R("matmul_2_3_only_b", lambda m, a, b: a @ b, ((2, 3), (5, 3, 4)), rg=(False, True)),
    R("matmul_2_3_transpose", lambda m, a, b: a @ b, ((2, 3), (5, 3, 1))),
    R("matmul_3_1", lambda m, a, b: a @ b, ((5, 2, 3), (3,))),
    R("matmul_1_3", lambda m, a, b: a @ b, ((3,), (5, 3, 4))),
    R("matmul_1_3_only_a", lambda m, a, b: a @ b, ((3,), (5, 3, 4)), rg=(True, False)),
    R("matmul_4_3", lambda m, a, b: a @ b, ((2, 5, 2, 3), (5, 3, 4))),
    R("matmul_broadcast", lambda m, a, b: a @ b, ((2, 1, 2, 3), (5, 3, 4))),
    R("matmul_batch1_squeeze", lambda m, a, b: a @ b, ((1, 2, 3), (5, 3, 4))),
    R("matmul_batch1_other", lambda m, a, b: a @ b, ((5, 2, 3), (1, 3, 4))),
    R("matmul_4_1", lambda m, a, b: a @ b, ((2, 3, 2, 3), (3,))),
    R("matmul_f32", lambda m, a, b: a @ b, ((4, 2, 3), (3, 2))),
]


# ==============================================================================================
# shape.py and indexing.py (migrated from tests/test_shape_indexing.py)
# ==============================================================================================

def S(name: str, fn: Callable, shapes: list, **kw: Any) -> OpRow:
    return OpRow(name, fn, tuple(tuple(s) for s in shapes), "shape", **kw)


def _setitem(index: Any, value: Any = None) -> Callable:
    """A row function: ``y = x * 1; y[index] = value (or the second input); return y``."""
    def fn(m: Any, x: Any, *vs: Any) -> Any:
        y = x * 1
        y[index(m) if callable(index) else index] = vs[0] if vs else value
        return y
    return fn


SHAPE = [
    # view / reshape / flatten
    S("view", lambda m, x: x.view(4, 6), [(2, 3, 4)]),
    S("view_infer", lambda m, x: x.view(-1, 4), [(2, 3, 4)]),
    S("view_tuple", lambda m, x: x.view((3, 8)), [(2, 3, 4)]),
    S("view_split_noncontig", lambda m, x: x.transpose(0, 1).view(3, 2, 2, 2), [(2, 3, 4)]),
    S("reshape_contig", lambda m, x: x.reshape(6, 4), [(2, 3, 4)]),
    S("reshape_fn", lambda m, x: m.reshape(x, (4, -1)), [(2, 3, 4)]),
    S("reshape_copy", lambda m, x: x.transpose(0, 1).reshape(-1), [(2, 3, 4)]),
    S("reshape_alias", lambda m, x: x.transpose(0, 1).reshape(3, 2, 2, 2), [(2, 3, 4)]),
    S("reshape_as", lambda m, x, y: x.reshape_as(y), [(2, 3), (3, 2)]),
    S("view_as", lambda m, x, y: x.view_as(y), [(2, 3), (6,)]),
    S("flatten", lambda m, x: x.flatten(), [(2, 3, 4)]),
    S("flatten_fn", lambda m, x: m.flatten(x, 0, 1), [(2, 3, 4)]),
    S("flatten_part", lambda m, x: x.flatten(1), [(2, 3, 4)]),
    S("flatten_noop", lambda m, x: x.flatten(1, 1), [(2, 3, 4)]),
    S("flatten_0d", lambda m, x: x.flatten(), [()]),
    S("flatten_noncontig", lambda m, x: x.t().flatten(), [(3, 4)]),
    S("unflatten", lambda m, x: x.unflatten(2, (2, -1)), [(2, 3, 4)]),
    # squeeze / unsqueeze / transpose / permute
    S("squeeze_all", lambda m, x: x.squeeze(), [(2, 1, 3, 1)]),
    S("squeeze_dim", lambda m, x: x.squeeze(1), [(2, 1, 3, 1)]),
    S("squeeze_dim_noop", lambda m, x: x.squeeze(0), [(2, 1, 3, 1)]),
    S("squeeze_dims", lambda m, x: x.squeeze((1, -1)), [(2, 1, 3, 1)]),
    S("squeeze_fn", lambda m, x: m.squeeze(x, 1), [(2, 1, 3)]),
    S("unsqueeze", lambda m, x: x.unsqueeze(1), [(2, 3)]),
    S("unsqueeze_neg", lambda m, x: x.unsqueeze(-1), [(2, 3)]),
    S("unsqueeze_fn", lambda m, x: m.unsqueeze(x, 0), [(2, 3)]),
    S("transpose", lambda m, x: x.transpose(0, 2), [(2, 3, 4)]),
    S("transpose_fn", lambda m, x: m.transpose(x, -1, 0), [(2, 3)]),
    S("swapaxes", lambda m, x: m.swapaxes(x, 0, 1), [(2, 3)]),
    S("t", lambda m, x: x.t(), [(3, 4)]),
    S("t_fn", lambda m, x: m.t(x), [(3, 4)]),
    S("t_1d", lambda m, x: x.t(), [(3,)]),
    S("permute", lambda m, x: x.permute(2, 0, 1), [(2, 3, 4)]),
    S("permute_tuple", lambda m, x: x.permute((1, 2, 0)), [(2, 3, 4)]),
    S("permute_fn", lambda m, x: m.permute(x, (1, 0)), [(2, 3)]),
    S("T", lambda m, x: x.T, [(2, 3)]),
    S("mT", lambda m, x: x.mT, [(2, 3, 4)]),
    # expand / repeat
    S("expand", lambda m, x: x.expand(2, 3, 4), [(3, 1)]),
    S("expand_keep", lambda m, x: x.expand(-1, 5), [(3, 1)]),
    S("expand_tuple", lambda m, x: x.expand((2, 3, 2)), [(3, 1)]),
    S("expand_as", lambda m, x, y: x.expand_as(y), [(1, 4), (3, 4)]),
    S("broadcast_to", lambda m, x: x.broadcast_to((2, 3, 4)), [(3, 1)]),
    S("repeat", lambda m, x: x.repeat(2, 3), [(3, 2)]),
    S("repeat_new_dims", lambda m, x: x.repeat(2, 1, 3), [(3, 2)]),
    # cat / stack
    S("cat", lambda m, a, b: m.cat([a, b], 1), [(2, 3), (2, 4)]),
    S("cat_neg_dim", lambda m, a, b: m.cat((a, b), -2), [(2, 3), (1, 3)]),
    S("cat_legacy_empty", lambda m, a, b: m.cat([a, b]), [(2, 3), (0,)]),
    S("cat_same_input", lambda m, a: m.cat([a, a * 2, a]), [(2, 3)]),
    S("concat", lambda m, a, b: m.concat([a, b]), [(2, 3), (1, 3)]),
    S("stack", lambda m, a, b: m.stack([a, b], 1), [(2, 3), (2, 3)]),
    S("stack_last", lambda m, a, b: m.stack([a, b], -1), [(2, 3), (2, 3)]),
    # multi-output views
    S("split", lambda m, x: x.split(2, 1), [(3, 5)]),
    S("split_sizes", lambda m, x: x.split([1, 4], 1), [(3, 5)]),
    S("split_fn", lambda m, x: m.split(x, 2), [(3, 2)]),
    S("split_one_used", lambda m, x: x.split(2, 1)[1], [(3, 5)]),
    S("chunk", lambda m, x: x.chunk(3, 1), [(3, 5)]),
    S("chunk_fn", lambda m, x: m.chunk(x, 2), [(4, 2)]),
    S("unbind", lambda m, x: x.unbind(1), [(2, 3)]),
    S("unbind_fn", lambda m, x: m.unbind(x), [(2, 3)]),
    S("unbind_one_used", lambda m, x: x.unbind(0)[1] * 2, [(2, 3)]),
    # slicing-like views
    S("narrow", lambda m, x: x.narrow(1, 1, 2), [(2, 4)]),
    S("narrow_neg_start", lambda m, x: x.narrow(1, -2, 2), [(2, 4)]),
    S("narrow_fn", lambda m, x: m.narrow(x, 0, 1, 1), [(2, 4)]),
    S("select", lambda m, x: x.select(1, -1), [(2, 4)]),
    S("select_fn", lambda m, x: m.select(x, 0, 1), [(2, 4)]),
    S("diagonal", lambda m, x: x.diagonal(), [(3, 4)]),
    S("diagonal_offset", lambda m, x: x.diagonal(1, 1, 2), [(2, 3, 4)]),
    S("diagonal_neg_offset", lambda m, x: x.diagonal(-1), [(3, 4)]),
    S("diagonal_fn", lambda m, x: m.diagonal(x, 0, 0, 1), [(3, 3)]),
    # copies
    S("flip", lambda m, x: x.flip(0, 2), [(2, 3, 4)]),
    S("flip_fn", lambda m, x: m.flip(x, (1,)), [(2, 3)]),
    S("gather", lambda m, x: x.gather(1, _idx(m, [[0, 0, 2], [1, 0, 0]])), [(2, 3)]),
    S("gather_dim0", lambda m, x: x.gather(0, _idx(m, [[1, 0, 1]])), [(2, 3)]),
    S("gather_fn", lambda m, x: m.gather(x, 1, _idx(m, [[2], [0]])), [(2, 3)]),
    S("index_select", lambda m, x: x.index_select(0, _idx(m, [2, 0, 2])), [(3, 2)]),
    S("index_select_fn", lambda m, x: m.index_select(x, 1, _idx(m, [1])), [(3, 2)]),
    S("clone", lambda m, x: x.clone(), [(2, 3)]),
    S("clone_fn", lambda m, x: m.clone(x), [(2, 3)]),
    S("contiguous_noncontig", lambda m, x: x.t().contiguous(), [(2, 3)]),
    S("contiguous_noop", lambda m, x: x.contiguous(), [(2, 3)]),
    S("to_same", lambda m, x: x.to(x.dtype), [(2, 3)]),
    S("to_copy", lambda m, x: x.to(x.dtype, copy=True), [(2, 3)]),
    S("to_device_dtype", lambda m, x: x.to("cpu", m.float64), [(2, 3)]),
    S("to_float32_and_back", lambda m, x: x.float().double(), [(2, 3)],
      no_gradcheck="goes through float32: central differences at eps=1e-6 are too coarse",
      no_gradgradcheck="goes through float32"),
    # getitem
    S("getitem_int", lambda m, x: x[0], [(3, 4)]),
    S("getitem_neg_int", lambda m, x: x[-1], [(3, 4)]),
    S("getitem_slice", lambda m, x: x[1:], [(3, 4)]),
    S("getitem_full_slice", lambda m, x: x[:], [(3, 4)]),
    S("getitem_step", lambda m, x: x[::2, 1::2], [(3, 4)]),
    S("getitem_clamped", lambda m, x: x[:, 2:10], [(3, 4)]),
    S("getitem_none", lambda m, x: x[:, None], [(3, 4)]),
    S("getitem_ellipsis", lambda m, x: x[..., 1], [(2, 3, 4)]),
    S("getitem_only_ellipsis", lambda m, x: x[...], [(3, 4)]),
    S("getitem_trivial_tuple", lambda m, x: x[:, :], [(3, 4)]),
    S("getitem_int_slice", lambda m, x: x[0, 1:], [(3, 4)]),
    S("getitem_slice_int", lambda m, x: x[1:, 0], [(3, 4)]),
    S("getitem_none_int_none", lambda m, x: x[None, 0, None], [(3, 4)]),
    S("getitem_ellipsis_slice", lambda m, x: x[0, ..., 1:], [(2, 3, 4)]),
    S("getitem_list", lambda m, x: x[[0, 2, 0]], [(3, 4)]),
    S("getitem_tensor", lambda m, x: x[_idx(m, [2, 2, 1])], [(3, 4)]),
    S("getitem_0d_tensor", lambda m, x: x[_idx(m, 1)], [(3, 4)]),
    S("getitem_mask", lambda m, x: x[_idx(m, [True, False, True])], [(3, 4)]),
    S("getitem_value_mask", lambda m, x: x[x > 0], [(3, 4)]),
    S("getitem_slice_list", lambda m, x: x[:, [1, 1]], [(3, 4)]),
    S("getitem_two_lists", lambda m, x: x[[0, 1], [1, 3]], [(3, 4)]),
    S("getitem_split_adv", lambda m, x: x[[0, 1], :, [1, 0]], [(2, 3, 4)]),
    S("getitem_int_list", lambda m, x: x[0, [1, 1, 2]], [(2, 3, 4)]),
    S("getitem_bool_true", lambda m, x: x[True], [(3, 4)]),
    S("getitem_2d_index", lambda m, x: x[_idx(m, [[0, 1], [2, 2]])], [(3, 4)]),
    # setitem on a non-leaf
    S("setitem_int", _setitem(0), [(3, 4), (4,)]),
    S("setitem_broadcast", _setitem(slice(1, None)), [(3, 4), (4,)]),
    S("setitem_leading_ones", _setitem(0), [(3, 4), (1, 1, 4)]),
    S("setitem_scalar", _setitem((slice(None), 1), 2.0), [(3, 4)]),
    S("setitem_scalar_whole", _setitem((Ellipsis,), 2.0), [(3, 4)]),
    S("setitem_tensor_whole", _setitem(Ellipsis), [(3, 4), (4,)]),
    S("setitem_list", _setitem([0, 2]), [(3, 4), (2, 4)]),
    # Writing one position twice keeps the last value, yet torch gives every written value the
    # gradient of its position: not the derivative, so finite differences cannot check it.
    S("setitem_dup_list", _setitem([0, 0, 1]), [(3,), (3,)], gradient_not_derivative=True,
      no_gradcheck="a position written twice: torch's gradient is not the derivative",
      no_gradgradcheck="a position written twice: torch's gradient is not the derivative"),
    S("setitem_mask", _setitem(lambda m: m.tensor([True, False, True])), [(3, 4), (4,)]),
    S("setitem_view_then_list", _setitem((1, [0, 3])), [(3, 4), (2,)]),
    S("setitem_trivial_then_list", _setitem((slice(None), [0, 3])), [(3, 4), (3, 2)]),
    S("setitem_step", _setitem((slice(None, None, 2), 1)), [(3, 4), (2,)]),
]


# ==============================================================================================
# loss.py
# ==============================================================================================

def L(name: str, fn: Callable, inputs: tuple, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "loss", **kw)


def _targets(m: Any, data: Any) -> Any:
    return m.tensor(data)


_T3 = [0, 2, 1]
_T4 = [3, 0, -100, 1]
_W4 = [0.5, 1.0, 2.0, 1.5]

LOSS = [
    L("mse_loss", lambda m, x, y: _F(m).mse_loss(x, y), (_S, _S), grad_fn="MseLossBackward0"),
    L("mse_loss_sum", lambda m, x, y: _F(m).mse_loss(x, y, reduction="sum"), (_S, _S),
      grad_fn="MseLossBackward0"),
    L("mse_loss_none", lambda m, x, y: _F(m).mse_loss(x, y, reduction="none"), (_S, _S),
      grad_fn="MseLossBackward0"),
    L("mse_loss_only_input", lambda m, x, y: _F(m).mse_loss(x, y), ((3,), (3,)),
      requires_grad=(True, False), grad_fn="MseLossBackward0"),
    L("nll_loss", lambda m, x: _F(m).nll_loss(x, _targets(m, _T3)), ((3, 4),),
      grad_fn="NllLossBackward0"),
    L("nll_loss_sum", lambda m, x: _F(m).nll_loss(x, _targets(m, _T3), reduction="sum"),
      ((3, 4),), grad_fn="NllLossBackward0"),
    L("nll_loss_none", lambda m, x: _F(m).nll_loss(x, _targets(m, _T3), reduction="none"),
      ((3, 4),), grad_fn="NllLossBackward0"),
    L("nll_loss_weight_ignore", lambda m, x: _F(m).nll_loss(
        x, _targets(m, _T4), weight=m.tensor(_W4, dtype=x.dtype)), ((4, 4),),
      grad_fn="NllLossBackward0"),
    L("nll_loss_weight_ignore_none", lambda m, x: _F(m).nll_loss(
        x, _targets(m, _T4), weight=m.tensor(_W4, dtype=x.dtype), reduction="none"), ((4, 4),),
      grad_fn="NllLossBackward0"),
    L("nll_loss_1d", lambda m, x: _F(m).nll_loss(x, _targets(m, 2)), ((4,),),
      grad_fn="NllLossBackward0"),
    L("nll_loss_spatial", lambda m, x: _F(m).nll_loss(x, _targets(m, [[0, 2], [1, 1]])),
      ((2, 3, 2),)),
    L("nll_loss_2d", lambda m, x: _F(m).nll_loss(x, _targets(m, [[[0, 2], [1, 1]],
                                                                  [[2, 2], [0, 1]]])),
      ((2, 3, 2, 2),)),
    L("nll_loss_2d_none", lambda m, x: _F(m).nll_loss(x, _targets(m, [[[0, 2], [1, 1]]]),
                                                      reduction="none"), ((1, 3, 2, 2),)),
    L("l1_loss", lambda m, x, y: _F(m).l1_loss(x, y), (_S, _S)),
    L("l1_loss_sum", lambda m, x, y: _F(m).l1_loss(x, y, reduction="sum"), (_S, _S)),
    L("l1_loss_none", lambda m, x, y: _F(m).l1_loss(x, y, reduction="none"), (_S, _S)),
    L("smooth_l1_loss", lambda m, x, y: _F(m).smooth_l1_loss(x, y), (_S, _S)),
    L("smooth_l1_loss_beta_sum", lambda m, x, y: _F(m).smooth_l1_loss(x, y, reduction="sum",
                                                                      beta=0.5), (_S, _S)),
    L("smooth_l1_loss_none", lambda m, x, y: _F(m).smooth_l1_loss(x, y, reduction="none"),
      (_S, _S)),
    L("huber_loss", lambda m, x, y: _F(m).huber_loss(x, y), (_S, _S)),
    L("huber_loss_delta_sum", lambda m, x, y: _F(m).huber_loss(x, y, reduction="sum",
                                                               delta=0.5), (_S, _S)),
    L("huber_loss_none", lambda m, x, y: _F(m).huber_loss(x, y, reduction="none"), (_S, _S)),
    L("binary_cross_entropy", lambda m, p, t: _F(m).binary_cross_entropy(p, t), (_S, _S),
      domain="prob"),
    L("binary_cross_entropy_sum", lambda m, p, t: _F(m).binary_cross_entropy(
        p, t, reduction="sum"), (_S, _S), domain="prob"),
    L("binary_cross_entropy_weight_none", lambda m, p, t: _F(m).binary_cross_entropy(
        p, t, weight=m.tensor([0.5, 1.0, 2.0], dtype=p.dtype), reduction="none"), (_S, _S),
      domain="prob"),
    L("bce_with_logits", lambda m, x, t: _F(m).binary_cross_entropy_with_logits(x, t), (_S, _S),
      domain=("real", "prob")),
    L("bce_with_logits_sum", lambda m, x, t: _F(m).binary_cross_entropy_with_logits(
        x, t, reduction="sum"), (_S, _S), domain=("real", "prob")),
    L("bce_with_logits_pos_weight_none", lambda m, x, t: _F(m).binary_cross_entropy_with_logits(
        x, t, pos_weight=m.tensor([1.0, 2.0, 0.5], dtype=x.dtype), reduction="none"), (_S, _S),
      domain=("real", "prob")),
    L("cross_entropy", lambda m, x: _F(m).cross_entropy(x, _targets(m, _T3)), ((3, 4),),
      grad_fn="NllLossBackward0"),
    L("cross_entropy_sum", lambda m, x: _F(m).cross_entropy(x, _targets(m, _T3),
                                                           reduction="sum"), ((3, 4),),
      grad_fn="NllLossBackward0"),
    L("cross_entropy_none", lambda m, x: _F(m).cross_entropy(x, _targets(m, _T3),
                                                            reduction="none"), ((3, 4),),
      grad_fn="NllLossBackward0"),
    L("cross_entropy_weight_ignore", lambda m, x: _F(m).cross_entropy(
        x, _targets(m, _T4), weight=m.tensor(_W4, dtype=x.dtype)), ((4, 4),),
      grad_fn="NllLossBackward0"),
    L("cross_entropy_1d", lambda m, x: _F(m).cross_entropy(x, _targets(m, 1)), ((4,),)),
    L("cross_entropy_spatial", lambda m, x: _F(m).cross_entropy(x, _targets(m, [[0, 2],
                                                                               [1, 1]])),
      ((2, 3, 2),)),
    L("cross_entropy_label_smoothing", lambda m, x: _F(m).cross_entropy(
        x, _targets(m, _T3), label_smoothing=0.1), ((3, 4),)),
    L("cross_entropy_probabilities", lambda m, x, p: _F(m).cross_entropy(x, p.softmax(1)),
      ((3, 4), (3, 4))),
]


# Rows of later op families live in files of their own (they import the helpers above).
from op_rows_special import ROWS as SPECIAL  # noqa: E402
from op_rows_shape import ROWS as MORE_SHAPE  # noqa: E402
from op_rows_sorting import ROWS as SORTING  # noqa: E402
from op_rows_linalg import ROWS as LINALG  # noqa: E402
from op_rows_vision import ROWS as VISION  # noqa: E402
from op_rows_nn import ROWS as NN  # noqa: E402
from op_rows_sampling import ROWS as SAMPLING  # noqa: E402
from op_rows_complex import ROWS as COMPLEX  # noqa: E402

ROWS: list[OpRow] = (POINTWISE + REDUCTION + SHAPE + LOSS + SPECIAL + MORE_SHAPE + SORTING + LINALG
                     + VISION + NN + SAMPLING + COMPLEX)


def _check_unique() -> None:
    seen: set = set()
    for row in ROWS:
        assert row.name not in seen, f"duplicate op-table row {row.name!r}"
        assert row.bug_in <= set(CHECKS), f"{row.name}: unknown check in bug_in"
        assert bool(row.known_bug) == bool(row.bug_in), f"{row.name}: known_bug needs bug_in"
        seen.add(row.name)


_check_unique()
ROWS_BY_NAME = {row.name: row for row in ROWS}
