"""Op-table rows: samplers and writes whose result does not depend on the random stream
(see tests/op_table.py for what a row is and which checks it gets).

npgrad's random numbers come from NumPy's generator, not torch's, so a sampler's values can be
compared with torch's only where its parameters leave nothing to chance: probabilities 0 and
1, a standard deviation or a rate of 0, a range holding one value.  These rows check that the
samplers record torch's node and pass back torch's gradient (zero: torch defines the gradient
of a sample as zero, so where the sample moves with its parameter, the finite-difference check
does not apply).  The samplers whose every valid parameter leaves the value random
(exponential_, geometric_, log_normal_, cauchy_, random_()) are in
tests/test_grad_fn_coverage.py's UNREACHABLE.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from op_table import OpRow


def R(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "sampling", grad_fn=grad_fn, **kw)


_S = (2, 3)
_P01 = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])  # probabilities that leave nothing to chance
_ZERO_GRAD = ("torch defines the gradient of a sample as zero; the sample here moves with its "
              "parameter, so the finite-difference derivative is not that")
_OUT_OF_RANGE = "p is 0 or 1: a finite difference leaves [0, 1], where bernoulli raises"


ROWS: list[OpRow] = [
    # bernoulli: p in {0, 1}, so the sample is p itself
    R("bernoulli", lambda m, p: m.bernoulli(p), (_P01,), "BernoulliBackward0",
      no_gradcheck=_OUT_OF_RANGE, no_gradgradcheck=_OUT_OF_RANGE),
    R("bernoulli_inplace_tensor_p", lambda m, x: (x * 1).bernoulli_(m.tensor(_P01, dtype=x.dtype)),
      (_S,), "BernoulliBackward1"),
    R("bernoulli_inplace_float_p", lambda m, x: (x * 1).bernoulli_(1.0), (_S,),
      "BernoulliBackward2"),
    # normal: a standard deviation of zero gives the mean
    R("normal_tensor_mean", lambda m, mean: m.normal(mean, 0.0), (_S,), "NormalBackward1",
      no_gradcheck=_ZERO_GRAD, no_gradgradcheck=_ZERO_GRAD),
    R("normal_tensor_std", lambda m, x: m.normal(0.5, x * 0), (_S,), "NormalBackward2"),
    R("normal_tensor_mean_std", lambda m, mean, x: m.normal(mean, x * 0), (_S, _S),
      "NormalBackward3", no_gradcheck=_ZERO_GRAD, no_gradgradcheck=_ZERO_GRAD),
    # poisson: a rate of zero gives zero
    R("poisson", lambda m, x: m.poisson(x * 0), (_S,), "PoissonBackward0"),
    # random_(to) and random_(from, to) on a range holding one value
    R("random_to", lambda m, x: (x * 1).random_(1), (_S,), "RandomBackward1"),
    R("random_from_to", lambda m, x: (x * 1).random_(3, 4), (_S,), "RandomBackward0"),
    # uniform_ over an empty range [a, a) and normal_ of standard deviation zero: constants
    R("uniform_inplace_point", lambda m, x: (x * 1).uniform_(0.5, 0.5), (_S,), "UniformBackward0"),
    R("normal_inplace_zero_std", lambda m, x: (x * 1).normal_(0.25, 0.0), (_S,),
      "NormalBackward0"),
    # in-place writes of a constant: the gradient of what was there is zero
    R("fill_inplace_number", lambda m, x: (x * 1).fill_(2.5), (_S,), "FillBackward2"),
    R("zero_inplace", lambda m, x: (x * 1).zero_(), (_S,), "ZeroBackward0"),
]
