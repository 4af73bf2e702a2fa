"""Complex numbers' own ops: parts (``real``/``imag``/``view_as_real``/``view_as_complex``),
conjugation (``conj`` and its bit), ``angle``, ``sgn``, ``polar`` and ``complex``.

Note [Gradients of complex inputs]
torch's gradient of a real loss L with respect to a complex z = x + iy is
``dL/dx + i dL/dy``: the conjugate Wirtinger derivative (times two).  For an op
s(z) with incoming gradient g that makes

    grad_z = g * conj(ds/dz) + conj(g) * ds/d(conj z)

so a holomorphic op (ds/dconj(z) = 0) gives ``g * conj(f'(z))`` (Note [Holomorphic
rules serve complex inputs] in registry.py), ``conj`` gives ``conj(g)``, and a real
output of a complex input (abs, angle, real, imag) gives a complex gradient from a
real g.  A real input's gradient is the real part of what reaches it: the engine
takes it where a complex gradient meets a real input (``fit_to_meta`` in
autograd/graph.py), as torch's ``handle_r_to_c`` does in each formula.  The rules
below are those identities worked out per op, written in npgrad's own ops so that
they are differentiable again.
"""
from __future__ import annotations

import builtins
import math
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _dtype
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .checks import overflow_error, scalar_name
from .._storage import storage_offset
from .activation import (CELU, ELU, GELU, HARDSIGMOID, HARDSWISH, HARDTANH, LEAKY_RELU,
                         MISH, SOFTPLUS, _RELU6, _SELU)
from .pointwise import (CEIL, CLAMP_MAX_SCALAR, CLAMP_MAX_TENSOR, CLAMP_MIN_SCALAR,
                        CLAMP_MIN_TENSOR, CLAMP_SCALAR, FLOOR, FMOD, FMOD_SCALAR, FRAC, MAXIMUM,
                        MINIMUM, RELU, REMAINDER, REMAINDER_SCALAR, ROUND, ROUND_DECIMALS, SIGN,
                        TRUNC, _CLIP_SCALAR, _sign_forward, cos, sin, where, zeros_like_grad)
from .special import (ATAN2, ENTR, ERF, ERFC, HYPOT, LOGIT, XLOGY, XLOGY_SCALAR_OTHER, _ARCTAN2,
                      _SPECIAL_ERFC, _SPECIAL_LOGIT)
from .registry import General, Pointwise, View
from .shape import select, clone
from .signature import signature
from ._shape_util import broadcast_shapes

ndarray = np.ndarray


# -- the conjugate bit -------------------------------------------------------------------

# Note [The conjugate bit]
# torch's ``conj()`` of a complex tensor is lazy: a view of the same storage with a
# "conjugate" flag that kernels read, so conjugating costs nothing until
# ``resolve_conj()`` (or an op) materialises it.  NumPy has no conjugating view, so
# npgrad's ``conj()`` computes the conjugated values at once and marks the result with
# the bit: ``is_conj()``, ``resolve_conj()``, ``.numpy()``'s refusal and
# ``view_as_real``'s refusal behave as torch's, and every op reads the right values.
# The difference: the result does not share storage with its input (an in-place write
# to one is not seen by the other, and it is not a view: no ``_base``).  The bit lives
# here, keyed by the tensor's id and dropped with the tensor, so Tensor needs no slot
# for a flag nearly every tensor lacks.
_CONJ: dict[int, Any] = {}


def _mark_conj(t: Tensor) -> None:
    key = id(t)

    def forget(_ref: Any) -> None:  # runs as ``t`` is freed, before its id can be reused
        _CONJ.pop(key, None)

    _CONJ[key] = weakref.ref(t, forget)


def _has_conj_bit(input: Tensor) -> bool:
    ref = _CONJ.get(id(input))
    return ref is not None and ref() is input


@signature("is_conj(Tensor input)")
def is_conj(input: Tensor) -> bool:
    """Whether ``input`` has the conjugate bit (Note [The conjugate bit])."""
    return _has_conj_bit(input)


@signature("conj(Tensor input)")
def conj(input: Tensor) -> Tensor:
    """The complex conjugate, with the conjugate bit; a real tensor is returned as it is.

    >>> import npgrad
    >>> npgrad.tensor([1+2j]).conj()
    tensor([1.-2.j])
    """
    data = input._data
    if data.dtype.kind != "c":
        return input
    res: Tensor = CONJ.record((input,), np.conj(data))
    if not _has_conj_bit(input):
        _mark_conj(res)
    return res


@signature("conj_physical(Tensor input, *, Tensor out=None)")
def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (no conjugate bit); a real tensor as it is."""
    data = input._data
    if data.dtype.kind != "c":
        return input
    res: Tensor = CONJ_PHYSICAL.record((input,), np.conj(data))
    return res


CONJ = General("conj(Tensor input)", grad_fn="ConjBackward0", forward=None,
               derivatives={"self": lambda grad: conj(grad)},
               tangent=lambda self_t: conj(self_t))

CONJ_PHYSICAL = General("conj_physical(Tensor input, *, Tensor out=None)",
                        grad_fn="ConjPhysicalBackward0", forward=None,
                        derivatives={"self": lambda grad: conj_physical(grad)},
                        tangent=lambda self_t: conj_physical(self_t))


@signature("resolve_conj(Tensor input)")
def resolve_conj(input: Tensor) -> Tensor:
    """``input`` without the conjugate bit: a copy if it has it, else ``input`` itself."""
    return clone(input) if _has_conj_bit(input) else input


def check_numpy(input: Tensor) -> None:
    """torch's refusal to hand NumPy a tensor whose conjugation is still lazy."""
    if _has_conj_bit(input):
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                           "tensor.resolve_conj().numpy() instead.")


# -- a complex tensor's parts as a real tensor, and back ---------------------------------

def _refuse_complex32() -> None:
    """Half-precision parts would make complex32, which npgrad names but cannot store."""
    np.dtype(_dtype.complex32.np_dtype)  # raises (Note [complex32 is named, not stored])

_COMPLEX_OF: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def _as_real(input: Tensor) -> Tensor:
    """The real view (..., 2) of a complex tensor, the conjugate bit notwithstanding."""
    res: Tensor = VIEW_AS_REAL(input)
    return res


@signature("view_as_real(Tensor input)")
def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's storage seen as real pairs: shape ``(*input.shape, 2)``, a view.

    >>> import npgrad
    >>> npgrad.view_as_real(npgrad.tensor([1+2j]))
    tensor([[1., 2.]])
    """
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if _has_conj_bit(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, "
            "be warned that the resulting tensor will NOT alias the original.")
    return _as_real(input)


@signature("view_as_complex(Tensor input)")
def view_as_complex(input: Tensor) -> Tensor:
    """Real pairs (last dimension 2, stride 1) seen as complex numbers: a view.

    >>> import npgrad
    >>> npgrad.view_as_complex(npgrad.tensor([1., 2.]))
    tensor(1.+2.j)
    """
    data = input._data
    dt = data.dtype
    if dt.kind not in "f" or dt not in _COMPLEX_OF:
        if dt == np.float16:
            _refuse_complex32()
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {scalar_name(dt)}")
    if data.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = dt.itemsize
    if data.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s in data.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if storage_offset(data) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    res: Tensor = VIEW_AS_COMPLEX(input)
    return res


# The two views between a complex tensor and its real pairs: View entries (Note [A view is
# an entry]), so the result shares its input's storage and version counter, and its tangent
# is the same view of the input's tangent.
VIEW_AS_REAL = View("view_as_real(Tensor input)", grad_fn="ViewAsRealBackward0",
                    forward=lambda data: data[..., None].view(data.real.dtype),
                    derivative=lambda grad: view_as_complex(grad.contiguous()))

VIEW_AS_COMPLEX = View("view_as_complex(Tensor input)", grad_fn="ViewAsComplexBackward0",
                       forward=lambda data: data.view(_COMPLEX_OF[data.dtype])[..., 0],
                       derivative=lambda grad: view_as_real(resolve_conj(grad)))


@signature("real(Tensor input)")
def real(input: Tensor) -> Tensor:
    """The real parts, a view (a real tensor is returned as it is).

    >>> import npgrad
    >>> npgrad.real(npgrad.tensor([1+2j]))
    tensor([1.])
    """
    if input._data.dtype.kind != "c":
        return input
    return select(_as_real(input), -1, 0)


@signature("imag(Tensor input)")
def imag(input: Tensor) -> Tensor:
    """The imaginary parts, a view; torch refuses real tensors."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(_as_real(input), -1, 1)


def real_scalar(value: Any, c_type: str) -> Any:
    """A tensor's Python number for ``float()`` / ``int()``: a complex one must be real (torch
    names the C type it converts to)."""
    if isinstance(value, builtins.complex):
        if value.imag:
            raise overflow_error(c_type)
        return value.real
    return value


def set_part(input: Tensor, value: Any, part: Any) -> None:
    """``z.real = value`` / ``z.imag = value``: a copy into the part's view."""
    part(input).copy_(value)


# -- angle and sgn: non-holomorphic one-input ops -----------------------------------------

def _angle_forward(data: np.ndarray) -> np.ndarray:
    if data.dtype.kind == "c":
        return np.angle(data)
    # torch's real angle: pi below zero, 0 at and above (-0. included), NaN kept
    return np.where(data < 0, data.dtype.type(math.pi), np.where(np.isnan(data), data, 0))


def _angle_derivative(grad: Tensor, x: Tensor) -> Tensor:
    if not x.is_complex():
        return zeros_like_grad(grad)  # piecewise constant on the reals
    # d angle = Im(conj(z) dz) / |z|^2, so the gradient is g * i z / |z|^2 (0 at z = 0)
    r2 = x.abs() ** 2
    return where(r2 == 0, 0.0, grad * x * 1j / r2)


def _angle_tangent(tangent: Tensor, x: Tensor) -> Tensor:
    if not x.is_complex():
        return zeros_like_grad(tangent)
    r2 = x.abs() ** 2
    return where(r2 == 0, 0.0, imag(conj(x) * tangent) / r2)


ANGLE = Pointwise("angle(Tensor input, *, Tensor out=None)", grad_fn="AngleBackward0",
                  forward=_angle_forward, saves="self", derivative=_angle_derivative,
                  tangent=_angle_tangent, holomorphic=False, warns=True)


@ANGLE.public
def angle(input: Tensor) -> Tensor:
    """The argument of each element, in radians (pi or 0 for real numbers).

    >>> import npgrad
    >>> npgrad.angle(npgrad.tensor([1j]))
    tensor([1.5708])
    """
    return ANGLE(input)


def _sgn_forward(data: np.ndarray) -> np.ndarray:
    if data.dtype.kind != "c":
        return _sign_forward(data)
    mag = np.abs(data)
    return np.where(mag == 0, data.dtype.type(0), data / np.where(mag == 0, 1, mag))


def _sgn_derivative(grad: Tensor, x: Tensor) -> Tensor:
    if not x.is_complex():
        return zeros_like_grad(grad)  # piecewise constant on the reals
    # s = z/|z|: ds/dz = 1/(2|z|), ds/dconj(z) = -s^2/(2|z|) (Note [Gradients of complex inputs])
    mag = x.abs()
    s = sgn(x)
    return where(mag == 0, 0.0, (grad - conj(grad) * s * s) / (2 * mag))


def _sgn_tangent(tangent: Tensor, x: Tensor) -> Tensor:
    if not x.is_complex():
        return zeros_like_grad(tangent)
    mag = x.abs()
    s = sgn(x)
    return where(mag == 0, 0.0, (tangent - s * real(conj(s) * tangent)) / mag)


SGN = Pointwise("sgn(Tensor input, *, Tensor out=None)", grad_fn="SgnBackward0",
                forward=_sgn_forward, floating=False, saves="self", derivative=_sgn_derivative,
                tangent=_sgn_tangent, holomorphic=False, warns=True)


@SGN.public
def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) for complex elements, ``sign`` for real ones.

    >>> import npgrad
    >>> npgrad.sgn(npgrad.tensor([3+4j]))
    tensor([0.6000+0.8000j])
    """
    return SGN(input)


# -- complex numbers from real parts -------------------------------------------------------

def _check_parts(a: Tensor, b: Tensor) -> np.dtype:
    """torch's checks of ``complex`` and ``polar``: two tensors of one float dtype."""
    da, db = a._data.dtype, b._data.dtype
    floats = (np.float16, np.float32, np.float64)
    if da not in floats or db not in floats:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_name(da)} and {scalar_name(db)}")
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {scalar_name(da)} but got scalar "
                           f"type {scalar_name(db)} for second argument")
    if da == np.float16:
        _refuse_complex32()
    return _COMPLEX_OF[da]


@signature("complex(Tensor real, Tensor imag, *, Tensor out=None)")
def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - torch's name
    """``real + i imag`` (broadcasting), of the complex dtype of the parts' float dtype.

    >>> import npgrad
    >>> npgrad.complex(npgrad.tensor([1.]), npgrad.tensor([2.]))
    tensor([1.+2.j])
    """
    ct = _check_parts(real, imag)
    shape = broadcast_shapes(real._data.shape, imag._data.shape)  # torch's error
    out = np.empty(shape, ct)
    out.real, out.imag = real._data, imag._data
    res: Tensor = COMPLEX.record((real, imag), out)
    return res


def _real_part(grad: Tensor) -> Tensor:
    return real(grad)


def _imag_part(grad: Tensor) -> Tensor:
    return imag(grad)


# complex(real, imag): each part's gradient is that part of the gradient.  torch keeps each
# input for its own rule (its formula reads the input's dtype), so ``_saved_real`` is None
# when ``real`` needs no gradient; the rules name them for that, and read nothing else.
COMPLEX = General(
    "complex(Tensor real, Tensor imag, *, Tensor out=None)", grad_fn="ComplexBackward0",
    forward=None, inputs=("real", "imag"), saves=("real", "imag"),
    derivatives={"real": lambda grad, real: _real_part(grad),
                 "imag": lambda grad, imag: _imag_part(grad)},
    tangent=lambda real_t, imag_t: complex(real_t, imag_t))


# polar: out = r e^{i theta}, so d out/dr = sgn(out) and d out/dtheta = i out; a real input's
# gradient is Re(conj(g) * d out/d input).  The tangent is torch's, from the inputs.
def _polar_tangent(abs_t: Tensor, angle_t: Tensor, abs: Tensor, angle: Tensor) -> Tensor:
    c, s = cos(angle), sin(angle)
    return complex(abs_t * c - angle_t * abs * s, abs_t * s + angle_t * abs * c)


POLAR = General(
    "polar(Tensor abs, Tensor angle, *, Tensor out=None)", grad_fn="PolarBackward0",
    forward=None, inputs=("abs", "angle"), saves=("result",),
    derivatives={"abs": lambda grad, result: real(conj(grad) * sgn(result)),
                 "angle": lambda grad, result: real(conj(grad) * (result * 1j))},
    tangent=_polar_tangent)


@signature("polar(Tensor abs, Tensor angle, *, Tensor out=None)")
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """``abs * (cos(angle) + i sin(angle))`` (broadcasting).

    >>> import npgrad
    >>> npgrad.polar(npgrad.tensor([2.]), npgrad.tensor([0.]))
    tensor([2.+0.j])
    """
    ct = _check_parts(abs, angle)
    broadcast_shapes(abs._data.shape, angle._data.shape)  # torch's error
    r, theta = np.broadcast_arrays(abs._data, angle._data)
    out = np.empty(r.shape, ct)
    out.real, out.imag = r * np.cos(theta), r * np.sin(theta)
    res: Tensor = POLAR.record((abs, angle), out)
    return res


# -- torch's refusals of complex inputs by ops that have no complex kernel ----------------

# Note [Ops without complex kernels]
# The entries of real-only elementwise ops (pointwise.py) take any dtype NumPy takes,
# and NumPy rounds, floors or clamps complex numbers where torch refuses them.  torch's
# refusal texts are facts about complex support, gathered here in one table next to
# the ops that do support complex, and set on each entry (its ``complex_error``) when
# this module loads.
_NOT_IMPLEMENTED = "\"{kernel}\" not implemented for '{{dtype}}'"
_CLAMP = "clamp is not supported for complex types"
_COMPLEX_ERRORS = (
    (CEIL, NotImplementedError, "ceil is not supported for complex inputs"),
    (FLOOR, NotImplementedError, "floor is not supported for complex inputs"),
    (TRUNC, NotImplementedError, "trunc is not supported for complex inputs"),
    (SIGN, NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
                                "numbers. Please use torch.sgn instead."),
    (RELU, NotImplementedError, _CLAMP),
    (CLAMP_SCALAR, NotImplementedError, _CLAMP),
    (CLAMP_MIN_SCALAR, NotImplementedError, _CLAMP),
    (CLAMP_MAX_SCALAR, NotImplementedError, _CLAMP),
    (HARDTANH, NotImplementedError, _CLAMP),
    (_RELU6, NotImplementedError, _CLAMP),
    (_CLIP_SCALAR, NotImplementedError, _CLAMP),
    (MAXIMUM, RuntimeError, "maximum not implemented for complex tensors."),
    (MINIMUM, RuntimeError, "minimum not implemented for complex tensors."),
) + tuple((entry, NotImplementedError, _NOT_IMPLEMENTED.format(kernel=kernel))
        for entry, kernel in (
    (ROUND, "round_vml_cpu"), (ROUND_DECIMALS, "round_cpu"), (FRAC, "frac_cpu"),
    (LOGIT, "logit_cpu"), (ERFC, "erfc_vml_cpu"), (ERF, "erf_vml_cpu"), (ENTR, "entr_cpu"),
    (_SPECIAL_LOGIT, "logit_cpu"), (_SPECIAL_ERFC, "erfc_vml_cpu"), (_SELU, "elu_cpu"),
    (REMAINDER, "remainder_cpu"), (REMAINDER_SCALAR, "remainder_cpu"), (FMOD, "fmod_cpu"),
    (FMOD_SCALAR, "fmod_cpu"), (ATAN2, "atan2_cpu"), (_ARCTAN2, "atan2_cpu"),
    (HYPOT, "hypot_cpu"), (XLOGY, "xlogy_cpu"), (XLOGY_SCALAR_OTHER, "xlogy_cpu"),
    (CLAMP_MIN_TENSOR, "maximum_cpu"), (CLAMP_MAX_TENSOR, "minimum_cpu"),
    (GELU, "GeluKernelImpl"), (SOFTPLUS, "softplus_cpu"), (ELU, "elu_cpu"), (CELU, "elu_cpu"),
    (LEAKY_RELU, "leaky_relu_cpu"), (MISH, "mish_cpu"),
    (HARDSIGMOID, "hardsigmoid_cpu"), (HARDSWISH, "hardswish_cpu")))
for _entry, _kind, _text in _COMPLEX_ERRORS:
    _entry.complex_error = (_kind, _text)
