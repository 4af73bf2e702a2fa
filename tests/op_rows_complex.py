"""Op-table rows of npgrad/_ops/complex.py on real inputs: each builds complex numbers from real
tensors and returns real ones (``view_as_real``, parts, angles), so every check of the table
applies; tests/test_complex.py runs the other families on complex inputs."""
from __future__ import annotations

from typing import Any, Callable

from op_table import OpRow


def C(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "complex", grad_fn=grad_fn, **kw)


_S = (2, 3)

ROWS = [
    C("complex_parts", lambda m, a, b: m.view_as_real(m.complex(a, b)), (_S, _S),
      "ViewAsRealBackward0"),
    C("complex_angle", lambda m, a, b: m.complex(a, b).angle(), (_S, _S), "AngleBackward0",
      domain="nonzero"),
    C("complex_abs", lambda m, a, b: m.complex(a, b).abs(), (_S, _S), "AbsBackward0",
      domain="nonzero"),
    C("complex_sgn", lambda m, a, b: m.view_as_real(m.sgn(m.complex(a, b))), (_S, _S),
      "ViewAsRealBackward0", domain="nonzero"),
    C("polar", lambda m, r, theta: m.view_as_real(m.polar(r, theta)), (_S, _S),
      "ViewAsRealBackward0", domain=("positive", "real")),
    C("view_as_complex_conj_imag", lambda m, x: (m.view_as_complex(x).conj() * 2).imag, ((3, 2),),
      "SelectBackward0"),
    C("view_as_complex_real", lambda m, x: m.real(m.view_as_complex(x) * (1 - 2j)), ((2, 2, 2),),
      "SelectBackward0"),
    C("conj_physical", lambda m, a, b: m.view_as_real(m.conj_physical(m.complex(a, b) * a)),
      (_S, _S), "ViewAsRealBackward0"),
    C("complex_exp_imag", lambda m, a, b: m.exp(m.complex(a, b)).imag, (_S, _S),
      "SelectBackward0"),
    C("angle_real", lambda m, x: m.angle(x), (_S,), "AngleBackward0", domain="nonzero"),
    C("sgn_real", lambda m, x: x.sgn() * x, (_S,), "MulBackward0", domain="nonzero"),
    C("real_of_real", lambda m, x: m.real(x) * 2, (_S,), "MulBackward0"),
]
