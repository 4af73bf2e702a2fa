"""Op-table rows: special functions and activations (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from op_table import OpRow, P, _F

_S = (2, 3)


def A(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    """An activation that is not elementwise (softmin, glu): no pointwise property test."""
    return OpRow(name, fn, inputs, "activation", grad_fn=grad_fn, **kw)


def _inplace(op: Callable) -> Callable:
    """A row function writing ``op`` in place into a non-leaf copy of the input."""
    return lambda m, x: op(m, x * 1)


# torch raises "derivative for aten::hardsigmoid_backward is not implemented"; npgrad's
# backward is differentiable (second derivative zero in x), so there is nothing to compare
_NO_HARDSIGMOID_2ND = "torch has no double backward for hardsigmoid"
_NONFINITE = np.array([[np.nan, 1.5, -np.inf], [np.inf, -0.5, 2.0]])

# In-place rows whose node saves the pre-write input (asin_, cosh_, atan2_, xlogy_,
# hardswish_, mish_) are in tests/test_ops_special.py instead: npgrad's forward-over-reverse
# gives the saved input the tangent of the written value (pow_ shows it too), which the
# table's test_forward_over_reverse would report as a failure of these ops.
ROWS: list[OpRow] = [
    # inverse trigonometric and hyperbolic
    P("asin", lambda m, x: x.asin(), (_S,), "AsinBackward0", domain="unit"),
    P("arcsin_fn", lambda m, x: m.arcsin(x), (_S,), "AsinBackward0", domain="unit"),
    P("acos", lambda m, x: m.acos(x), (_S,), "AcosBackward0", domain="unit"),
    P("arccos_method", lambda m, x: x.arccos(), (_S,), "AcosBackward0", domain="unit"),
    P("atan", lambda m, x: x.atan(), (_S,), "AtanBackward0"),
    P("arctan_fn", lambda m, x: m.arctan(x), (_S,), "AtanBackward0"),
    P("sinh", lambda m, x: x.sinh(), (_S,), "SinhBackward0"),
    P("cosh", lambda m, x: m.cosh(x), (_S,), "CoshBackward0"),
    P("asinh", lambda m, x: x.asinh(), (_S,), "AsinhBackward0"),
    P("arcsinh_fn", lambda m, x: m.arcsinh(x), (_S,), "AsinhBackward0"),
    # acosh needs x >= 1: the positive domain shifted by one
    P("acosh", lambda m, x: (x + 1).acosh(), (_S,), "AcoshBackward0", domain="positive"),
    P("arccosh_fn", lambda m, x: m.arccosh(x + 1), (_S,), "AcoshBackward0", domain="positive"),
    P("atanh", lambda m, x: m.atanh(x), (_S,), "AtanhBackward0", domain="unit"),
    P("arctanh_method", lambda m, x: x.arctanh(), (_S,), "AtanhBackward0", domain="unit"),
    # asinh_/acosh_/atanh_ have no derivative in torch: see tests/test_ops_special.py
    # two-input
    P("atan2", lambda m, x, y: m.atan2(x, y), (_S, _S), "Atan2Backward0", domain="nonzero"),
    P("atan2_broadcast", lambda m, x, y: x.atan2(y), (_S, (3,)), "Atan2Backward0",
      domain="nonzero"),
    P("arctan2", lambda m, x, y: m.arctan2(x, y), ((2, 1), (1, 3)), "Atan2Backward0",
      domain="nonzero"),
    P("atan2_only_other", lambda m, x, y: m.atan2(x, y), (_S, _S), "Atan2Backward0",
      domain="nonzero", requires_grad=(False, True)),
    P("hypot", lambda m, x, y: m.hypot(x, y), (_S, _S), "HypotBackward0", domain="nonzero"),
    P("hypot_broadcast", lambda m, x, y: x.hypot(y), (_S, (3,)), "HypotBackward0",
      domain="nonzero"),
    P("hypot_only_self", lambda m, x, y: m.hypot(x, y), (_S, _S), "HypotBackward0",
      domain="nonzero", requires_grad=(True, False)),
    P("logaddexp", lambda m, x, y: m.logaddexp(x, y), (_S, _S), "LogaddexpBackward0"),
    P("logaddexp_broadcast", lambda m, x, y: x.logaddexp(y), ((2, 1), (3,)),
      "LogaddexpBackward0"),
    P("xlogy", lambda m, x, y: m.xlogy(x, y), (_S, _S), "XlogyBackward0",
      domain=("real", "positive")),
    P("xlogy_broadcast", lambda m, x, y: x.xlogy(y), (_S, (3,)), "XlogyBackward0",
      domain=("real", "positive")),
    P("xlogy_only_other", lambda m, x, y: m.xlogy(x, y), (_S, _S), "XlogyBackward0",
      domain=("real", "positive"), requires_grad=(False, True)),
    P("xlogy_scalar_self", lambda m, y: m.xlogy(2.5, y), (_S,), "XlogyBackward1",
      domain="positive"),
    P("xlogy_scalar_other", lambda m, x: x.xlogy(3.0), (_S,), "XlogyBackward2"),
    # erf / erfc / exp2 / nan_to_num
    P("erf_fn", lambda m, x: m.erf(x), (_S,), "ErfBackward0"),
    P("erf_method", lambda m, x: x.erf(), (_S,), "ErfBackward0"),
    P("erfc", lambda m, x: x.erfc(), (_S,), "ErfcBackward0"),
    P("erfc_fn", lambda m, x: m.erfc(x), (_S,), "ErfcBackward0"),
    P("exp2", lambda m, x: x.exp2(), (_S,), "Exp2Backward0"),
    P("exp2_fn_inplace", _inplace(lambda m, x: x.exp2_()), (_S,), "Exp2Backward0"),
    P("nan_to_num", lambda m, x: m.nan_to_num(x), (_S,), "NanToNumBackward0"),
    P("nan_to_num_nonfinite", lambda m, x: x.nan_to_num(0.5, 2.0, -2.0), (_NONFINITE,),
      "NanToNumBackward0"),
    P("nan_to_num_inplace", _inplace(lambda m, x: x.nan_to_num_(nan=1.0)), (_S,),
      "NanToNumBackward0"),
    # addcmul / addcdiv
    P("addcmul", lambda m, x, a, b: m.addcmul(x, a, b), (_S, _S, _S), "AddcmulBackward0"),
    P("addcmul_value_broadcast", lambda m, x, a, b: x.addcmul(a, b, value=-0.5),
      (_S, (3,), (2, 1)), "AddcmulBackward0"),
    P("addcmul_only_tensor1", lambda m, x, a, b: m.addcmul(x, a, b, value=2), (_S, _S, _S),
      "AddcmulBackward0", requires_grad=(False, True, False)),
    P("addcmul_inplace", lambda m, x, a, b: (x * 1).addcmul_(a, b, value=1.5), (_S, _S, (3,)),
      "AddcmulBackward0", broadcast="first"),
    P("addcdiv", lambda m, x, a, b: m.addcdiv(x, a, b), (_S, _S, _S), "AddcdivBackward0",
      domain=("real", "real", "nonzero")),
    P("addcdiv_value_broadcast", lambda m, x, a, b: x.addcdiv(a, b, value=0.25),
      ((3,), _S, (2, 1)), "AddcdivBackward0", domain=("real", "real", "nonzero")),
    P("addcdiv_inplace", lambda m, x, a, b: (x * 1).addcdiv_(a, b, value=-2), (_S, _S, _S),
      "AddcdivBackward0", domain=("real", "real", "nonzero"), broadcast="first"),
    # softplus / elu family
    P("softplus", lambda m, x: _F(m).softplus(x), (_S,), "SoftplusBackward0"),
    P("softplus_beta_threshold", lambda m, x: _F(m).softplus(x, beta=2.0, threshold=2.0),
      (_S,), "SoftplusBackward0"),
    P("elu", lambda m, x: _F(m).elu(x), (_S,), "EluBackward0"),
    P("elu_alpha", lambda m, x: _F(m).elu(x, alpha=0.5), (_S,), "EluBackward0", domain="nonzero"),
    P("elu_inplace", _inplace(lambda m, x: _F(m).elu(x, 2.0, inplace=True)), (_S,),
      "EluBackward1", domain="nonzero"),
    P("elu_functional_inplace", _inplace(lambda m, x: _F(m).elu_(x)), (_S,), "EluBackward1",
      domain="nonzero"),
    P("selu", lambda m, x: _F(m).selu(x), (_S,), "EluBackward0", domain="nonzero"),
    P("selu_torch", lambda m, x: m.selu(x), (_S,), "EluBackward0", domain="nonzero"),
    P("selu_inplace", _inplace(lambda m, x: _F(m).selu(x, inplace=True)), (_S,),
      "EluBackward1", domain="nonzero"),
    P("celu", lambda m, x: _F(m).celu(x), (_S,), "CeluBackward0", domain="nonzero"),
    P("celu_alpha", lambda m, x: m.celu(x, 2.0), (_S,), "CeluBackward0", domain="nonzero"),
    P("celu_inplace", _inplace(lambda m, x: _F(m).celu(x, 0.5, True)), (_S,), "CeluBackward1",
      domain="nonzero"),
    # hardtanh / relu6 / hardsigmoid / hardswish
    P("hardtanh", lambda m, x: _F(m).hardtanh(x), (_S,), "HardtanhBackward0"),
    P("hardtanh_bounds", lambda m, x: _F(m).hardtanh(x, -0.5, 2.0), (_S,), "HardtanhBackward0"),
    P("hardtanh_inplace", _inplace(lambda m, x: _F(m).hardtanh(x, -0.5, 0.5, True)), (_S,),
      "HardtanhBackward0"),
    P("relu6", lambda m, x: _F(m).relu6(x * 3), (_S,), "HardtanhBackward0", domain="nonzero"),
    P("relu6_inplace", _inplace(lambda m, x: _F(m).relu6(x, inplace=True)), (_S,),
      "HardtanhBackward0", domain="nonzero"),
    P("hardsigmoid", lambda m, x: _F(m).hardsigmoid(x * 2), (_S,), "HardsigmoidBackward0",
      no_gradgradcheck=_NO_HARDSIGMOID_2ND),
    P("hardsigmoid_inplace", _inplace(lambda m, x: _F(m).hardsigmoid(x * 2, inplace=True)),
      (_S,), "HardsigmoidBackward0", no_gradgradcheck=_NO_HARDSIGMOID_2ND),
    P("hardswish", lambda m, x: _F(m).hardswish(x * 2), (_S,), "HardswishBackward0"),
    # mish / logsigmoid / softsign
    P("mish", lambda m, x: _F(m).mish(x), (_S,), "MishBackward0"),
    P("logsigmoid", lambda m, x: _F(m).logsigmoid(x), (_S,), "LogSigmoidBackward0"),
    # threshold: ``value`` where x <= threshold (0 here, away from every input)
    P("threshold", lambda m, x: m.threshold(x, 0.0, -3.0), (_S,), "ThresholdBackward0",
      domain="nonzero"),
    P("threshold_functional", lambda m, x: _F(m).threshold(x, 0.0, 0.5), (_S,),
      "ThresholdBackward0", domain="nonzero"),
    P("threshold_inplace", _inplace(lambda m, x: _F(m).threshold(x, 0.0, 0.5, inplace=True)),
      (_S,), "ThresholdBackward1", domain="nonzero"),
    P("softsign", lambda m, x: _F(m).softsign(x), (_S,), "DivBackward0", domain="nonzero"),
    # softmin / glu
    A("softmin", lambda m, x: _F(m).softmin(x, dim=1), ((2, 4),), "SoftmaxBackward0"),
    A("softmin_dim0_dtype", lambda m, x: _F(m).softmin(x, 0, dtype=m.float64), ((3, 2),),
      "SoftmaxBackward0"),
    A("glu", lambda m, x: _F(m).glu(x), ((2, 4),), "GluBackward0"),
    A("glu_dim0", lambda m, x: _F(m).glu(x, 0), ((4, 3),), "GluBackward0"),
    A("glu_3d", lambda m, x: _F(m).glu(x, -2), ((2, 2, 3),), "GluBackward0"),
]

# torch.special functions that had no row
ROWS += [
    P("logit", lambda m, x: m.logit(x), (_S,), "LogitBackward0", domain="prob"),
    P("logit_eps", lambda m, x: m.special.logit(x, eps=0.2), (_S,), "LogitBackward0",
      domain="prob"),
    P("sinc", lambda m, x: m.sinc(x), (_S,), "SincBackward0", domain="nonzero"),
    P("special_entr", lambda m, x: m.special.entr(x), (_S,), "SpecialEntrBackward0",
      domain="positive"),
]
