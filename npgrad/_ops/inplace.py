"""In-place ops (``add_``, ``x -= y``, ``zero_`` ...): torch's checks, version bumps and history.

Note [In-place ops]
An in-place op is its out-of-place op plus a write-back:
* checks first (torch's errors, in torch's order): inference tensors outside
  inference mode; with recording on, leaves that require grad (or views of
  them), views made under no_grad, outputs of multi-output views;
* when nothing is recorded (grad off, or nothing requires grad) NumPy writes
  straight into the storage (``out=``), the cheapest update an optimizer step
  can get;
* when recorded, the out-of-place op runs on an *alias* of the tensor's old
  state (same data, same history).  If its node saved that old value, the
  alias gets a private copy first, so backward sees the value from before the
  write, as torch's saved ``original_self``.  The tensor then takes the
  node as its ``grad_fn``;
* every in-place op bumps the version counter exactly once.
A recorded in-place write through a view of a tensor that is part of a graph
goes through ``_ops.views`` (torch's CopySlices).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .signature import signature, type_name
from .. import _dtype
from .._forward import (FW, has_tangent, install, new_tangent,
                        share_tangent, tangent_of, write_tangent)
from .._mode import _tls, INFERENCE, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import INFERENCE_COUNTER, bump_version, make_tensor, version_counter
from .._vmap_mode import VMAP, check_inplace as check_vmap_inplace
from ..autograd.graph import SavedTensor
from . import pointwise as pw
from .checks import check_scalar_fits
from ._core import as_array, binary_arrays, requires_grad, view_of_view_message
from .registry import General

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_VIEW_TAIL = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)
NO_GRAD_VIEW_MSG = ("A view was created in no_grad mode and is being modified inplace with grad "
                    "mode enabled." + NO_GRAD_VIEW_TAIL)
INFERENCE_VIEW_MSG = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the inference_mode block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


OVERLAP_MSG = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def check_inplace(self: Tensor, mode: int, check_memory: bool = True) -> None:
    """Raise torch's error if ``self`` may not be written in place under ``mode``.

    Order as torch's: autograd's checks (leaf, view of a leaf, views made
    under no_grad, multi-output views), then overlapping memory.  Inference
    tensors outside inference mode are handled by ``refuses_inference_write``.
    """
    if mode == RECORDING:
        base = self._base
        if base is None:
            if self._requires_grad and self._grad_fn is None:
                raise RuntimeError(LEAF_MSG)
        else:
            _check_view_inplace(self)
            # torch asks whether *this* view requires grad and its base is a leaf: a view
            # given requires_grad_() itself, of a base that needs none, is refused too.
            if self._requires_grad and base._grad_fn is None:
                raise RuntimeError(VIEW_OF_LEAF_MSG)
    if check_memory:
        check_overlap(self)


def check_overlap(self: Tensor) -> None:
    """An op that reads what it writes cannot write an expanded view (one element, many places)."""
    data = self._data
    if data.size > 1 and 0 in data.strides:
        for size, stride in zip(data.shape, data.strides):
            if stride == 0 and size > 1:
                raise RuntimeError(OVERLAP_MSG)


def refuses_inference_write(self: Tensor, mode: int) -> bool:
    """An inference tensor written outside inference mode (see ``write_then_refuse``)."""
    return self._vc is INFERENCE_COUNTER and not mode & INFERENCE


def write_then_refuse(self: Tensor, op: Callable, args: tuple, kwargs: dict,
                      check_memory: bool = True, where: Any = None) -> None:
    """torch writes an inference tensor outside inference mode, *then* raises; so do we."""
    if check_memory:
        check_overlap(self)
    previous = _tls.mode
    _tls.mode = previous & ~1  # compute without recording
    try:
        res = op(self, *args, **kwargs)
    finally:
        _tls.mode = previous
    write_inplace(self, res._data, where)
    raise RuntimeError(INFERENCE_INPLACE_MSG)


def _check_view_inplace(self: Tensor) -> None:
    """Views made under no_grad and outputs of multi-output views may not be written."""
    extra = self._extra
    info = extra.view_info if extra is not None else None
    if info is not None:
        if info.multi_output and self._grad_fn is not None:
            name = self._grad_fn.name()
            stripped = name[:name.rfind("Backward")] if "Backward" in name else name
            raise RuntimeError(
                f"Output {self._output_nr} of {stripped} is a view and is being modified "
                "inplace. This view is the output of a function that returns multiple views. "
                "Such functions do not allow the output views to be modified inplace. You "
                "should replace the inplace operation by an out-of-place one.")
        if info.created_in_no_grad:
            fn = self._grad_fn
            if fn is not None:  # recorded itself: only its parent view was made under no_grad
                name = fn.name()
                stripped = name[:name.rfind("Backward")] if "Backward" in name else name
                raise RuntimeError(view_of_view_message(self._output_nr, stripped,
                                                        info.created_in_inference))
            if info.created_in_inference:
                raise RuntimeError(INFERENCE_VIEW_MSG)
            raise RuntimeError(NO_GRAD_VIEW_MSG)


def _check_multi_output_view_without_history(self: Tensor) -> None:
    """One of several views of a tensor without grad, about to get a history: torch refuses."""
    extra = self._extra
    info = extra.view_info if extra is not None else None
    if info is not None and info.multi_output and self._grad_fn is None:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should replace "
            "the inplace operation by an out-of-place one.")


def _check_castable(result: np.dtype, target: np.dtype) -> None:
    if _dtype.category_of_np(result) > _dtype.category_of_np(target):
        raise RuntimeError(f"result type {_dtype.from_np(result).scalar_name} can't be cast to "
                           f"the desired output type {_dtype.from_np(target).scalar_name}")


def _check_shape(result_shape: tuple, target_shape: tuple) -> None:
    if result_shape != target_shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, target_shape))}] doesn't match the "
            f"broadcast shape [{', '.join(map(str, result_shape))}]")


def write_inplace(self: Tensor, values: np.ndarray, where: Any = None) -> None:
    """Store ``values`` into ``self``'s storage (torch's dtype and shape rules).

    ``where`` limits the write to some positions (masked_fill_ writes only the masked
    ones, which matters when positions share memory, as in an expanded view).
    """
    data = self._data
    _check_castable(values.dtype, data.dtype)
    if values.shape != data.shape:
        try:
            shape = np.broadcast_shapes(values.shape, data.shape)
        except ValueError:
            shape = values.shape
        _check_shape(shape, data.shape)
    if where is None:
        np.copyto(data, values, casting="unsafe")
    else:
        np.copyto(data, values, casting="unsafe", where=where)


def _alias(self: Tensor) -> Tensor:
    """A new tensor object with ``self``'s data and history but a counter of its own."""
    t = make_tensor(self._data, self._grad_fn, self._requires_grad, None)
    t._output_nr = self._output_nr
    if FW.active and has_tangent(self):
        share_tangent(t, self)
    return t


def apply_inplace(self: Tensor, op: Callable, *args: Any, **kwargs: Any) -> Tensor:
    """Run out-of-place ``op(self, *args)`` and make its result ``self``'s new value."""
    return _apply_inplace(self, op, args, kwargs, True)


def overwrite_inplace(self: Tensor, op: Callable, *args: Any, **kwargs: Any) -> Tensor:
    """``apply_inplace`` for ops whose new values do not read the old ones (fill_, zero_,
    masked_fill_): as in torch, these may write an expanded view."""
    return _apply_inplace(self, op, args, kwargs, False)


def refuse_non_tensor(name: str, obj: Any) -> None:
    """torch's parser error of the in-place function ``name`` (``F.elu(x, inplace=True)``
    calls ``elu_``) for a first argument that is no Tensor."""
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                    f"not {type_name(obj)}")


def _apply_inplace(self: Tensor, op: Callable, args: tuple, kwargs: dict,
                   check_memory: bool, write_where: Any = None) -> Tensor:
    # the in-place op has checked its arguments; run the out-of-place body unchecked (it may
    # take npgrad's own keywords): Note [Methods call the ops unchecked] in npgrad._tensor
    op = getattr(op, "__wrapped__", op)
    if not isinstance(self, Tensor):
        name = getattr(op, "name", None) or getattr(op, "__name__", "")
        refuse_non_tensor(name.rstrip("_") + "_", self)
    if VMAP.depth:
        check_vmap_inplace(self, args, getattr(op, "__name__", "") + "_")
    mode = _tls.mode
    if refuses_inference_write(self, mode):
        write_then_refuse(self, op, args, kwargs, check_memory, write_where)
    check_inplace(self, mode, check_memory)
    if mode == RECORDING and (self._requires_grad or any(requires_grad(a) for a in args)):
        if self._base is not None:
            from .views import inplace_on_view

            _check_multi_output_view_without_history(self)
            return inplace_on_view(self, op, args, kwargs, write_where)
        old = _alias(self)
        res = op(old, *args, **kwargs)
        tangent = new_tangent(self, res)
        keep_old_value(old, res)
        write_inplace(self, res._data, write_where)
        adopt_result(self, old, res)
        write_tangent(self, tangent)
        return self
    res = op(self, *args, **kwargs)
    tangent = new_tangent(self, res)
    write_inplace(self, res._data, write_where)
    bump_version(self)
    write_tangent(self, tangent)
    return self


def keep_old_value(old: Tensor, res: Tensor) -> None:
    """If ``res``'s node saved the pre-write value, give the alias a private copy of it.

    Must run before the write-back: afterwards the storage holds the new value.
    """
    node = res._grad_fn
    if node is None:
        return
    for field in node._saved_fields:
        saved = getattr(node, field, None)
        if type(saved) is SavedTensor and saved._tensor is old:
            old._data = old._data.copy()
            if FW.active and has_tangent(old):  # and the old tangent (forward over reverse)
                install(old, tangent_of(old).clone())
            return


def adopt_result(self: Tensor, old: Tensor, res: Tensor) -> None:
    """Give ``self`` the history of ``res`` (computed from ``old``) after the write-back."""
    node = res._grad_fn
    bump_version(self)
    if node is None:
        return
    for field in node._saved_fields:
        saved = getattr(node, field, None)
        if type(saved) is not SavedTensor:
            continue
        if saved._is_output:
            saved._data = self._data
            saved._vc = version_counter(self)
            saved._version = saved._vc.version
    self._grad_fn = node
    self._output_nr = res._output_nr
    self._requires_grad = True


def _fast_ufunc(self: Tensor, ufunc: Any, other: Any) -> Tensor | None:
    """Grad-free in-place arithmetic written straight into the storage."""
    if VMAP.depth:
        check_vmap_inplace(self, (other,), ufunc.__name__)
    mode = _tls.mode
    if (mode == RECORDING and (self._requires_grad or requires_grad(other))) \
            or refuses_inference_write(self, mode) or FW.active:
        return None  # apply_inplace handles these
    check_inplace(self, mode)
    data = self._data
    ad, bd = binary_arrays(self, other)
    if not isinstance(bd, np.ndarray) and isinstance(other, Tensor):
        return None  # a sparse operand: the out-of-place op's path (npgrad._ops.sparse)
    rt = ad.dtype if isinstance(ad, np.ndarray) else data.dtype
    _check_castable(rt, data.dtype)
    if isinstance(bd, np.ndarray) and bd.shape != data.shape:
        try:
            shape = np.broadcast_shapes(bd.shape, data.shape)
        except ValueError:
            from ._shape_util import broadcast_shapes

            broadcast_shapes(data.shape, bd.shape)
            raise
        _check_shape(shape, data.shape)
    ufunc(data, bd, out=data, casting="unsafe")
    bump_version(self)
    return self


def add_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1 and self._data.dtype.kind == "f":
        done = _fast_ufunc(self, np.add, other)
        if done is not None:
            return done
    return apply_inplace(self, pw.add, other, alpha=alpha)


def sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1 and self._data.dtype.kind == "f" and not pw._is_bool(other):
        done = _fast_ufunc(self, np.subtract, other)
        if done is not None:
            return done
    return apply_inplace(self, pw.sub, other, alpha=alpha)


def mul_(self: Tensor, other: Any) -> Tensor:
    if self._data.dtype.kind == "f":
        done = _fast_ufunc(self, np.multiply, other)
        if done is not None:
            return done
    return apply_inplace(self, pw.mul, other)


def div_(self: Tensor, other: Any, *,
         rounding_mode: str | None = pw.ROUNDING_MODE_NOT_GIVEN) -> Tensor:
    return apply_inplace(self, pw.div, other, rounding_mode=rounding_mode)


def pow_(self: Tensor, exponent: Any) -> Tensor:
    return apply_inplace(self, pw.pow, exponent)


def floor_divide_(self: Tensor, other: Any) -> Tensor:
    return apply_inplace(self, pw.floor_divide, other)


def remainder_(self: Tensor, other: Any) -> Tensor:
    return apply_inplace(self, pw.remainder, other)


def fmod_(self: Tensor, other: Any) -> Tensor:
    return apply_inplace(self, pw.fmod, other)


def neg_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.neg)


def exp_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.exp)


def sqrt_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.sqrt)


def sigmoid_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.sigmoid)


def tanh_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.tanh)


@signature("relu_(Tensor input)")
def relu_(self: Tensor) -> Tensor:
    return apply_inplace(self, pw.relu)


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return apply_inplace(self, pw.clamp, min, max)


def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    where = mask._data if isinstance(mask, Tensor) and mask._data.dtype.kind == "b" else None
    return _apply_inplace(self, pw.masked_fill, (mask, value), {}, False, where)


# Note [Overwriting ops are entries]
# fill_, zero_ and copy_ replace every value of the tensor, so the old value's gradient is
# zero and all of the gradient goes to what was written (a 0-dim ``value``, summed; ``src``,
# summed back to its shape by the engine).  Each is an entry as any op, recorded on the
# alias of the old value by ``overwrite_inplace`` / ``apply_inplace`` (Note [In-place ops]);
# none saves anything (torch's nodes show no ``_saved_*``), and the tangents are torch's:
# zeros for a number written, the written tensor's tangent otherwise.
FILL = General(
    "fill_(Tensor input, Scalar value)", grad_fn="FillBackward2", forward=None,
    derivatives={"self": lambda grad: pw.zeros_like_grad(grad)},
    tangent=lambda self_t: pw.zeros_like_grad(self_t))
FILL_TENSOR = General(
    "fill_(Tensor input, Tensor value)", grad_fn="FillBackward3", forward=None,
    inputs=("self", "value"),
    derivatives={"self": lambda grad: pw.zeros_like_grad(grad),
                 "value": lambda grad: grad.sum()},
    tangent=lambda self_t, value_t: value_t.expand(self_t.shape).clone())
ZERO = General(
    "zero_(Tensor input)", grad_fn="ZeroBackward0", forward=None,
    derivatives={"self": lambda grad: pw.zeros_like_grad(grad)},
    tangent=lambda self_t: pw.zeros_like_grad(self_t))
FillBackward2, FillBackward3, ZeroBackward0 = FILL.node, FILL_TENSOR.node, ZERO.node


def _filled(entry: General, input: Tensor, value: Any) -> Tensor:
    d = input._data
    v = as_array(value)
    with np.errstate(invalid="ignore"):  # 2.0**63 passes torch's int64 check and wraps, as in C
        out = np.full(d.shape, v.reshape(()) if isinstance(v, np.ndarray) else v).astype(d.dtype)
    if isinstance(value, Tensor):
        return FILL_TENSOR.record((input, value), out)  # type: ignore[no-any-return]
    return entry.record((input,), out)  # type: ignore[no-any-return]


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    if not isinstance(value, Tensor):  # a Python number must fit the dtype (a tensor wraps)
        check_scalar_fits(value, self._data.dtype)
    return overwrite_inplace(self, _fill_value, value)


def _fill_value(input: Tensor, value: Any) -> Tensor:
    return _filled(FILL, input, value)


def _fill_zero(input: Tensor) -> Tensor:
    return _filled(ZERO, input, 0)


def zero_(self: Tensor) -> Tensor:
    return overwrite_inplace(self, _fill_zero)


COPY = General(
    "copy_(Tensor input, Tensor src, bool non_blocking=False)", grad_fn="CopyBackwards",
    forward=None, inputs=("self", "src"),
    derivatives={"self": lambda grad: pw.zeros_like_grad(grad), "src": lambda grad: grad},
    tangent=lambda self_t, src_t: (pw.zeros_like_grad(self_t) if src_t is None  # (an array)
                                   else src_t.expand(self_t.shape).clone()))
CopyBackwards = COPY.node
# torch's CopyBackwards is a node of its own (not a generated one): its name() is qualified
CopyBackwards.name = lambda self: "torch::autograd::CopyBackwards"  # type: ignore[method-assign]


def _copied(input: Tensor, src: Any) -> Tensor:
    d = input._data
    s = as_array(src)
    try:
        out = np.array(np.broadcast_to(s, d.shape), dtype=d.dtype)
    except ValueError:
        from ._shape_util import broadcast_shapes
        from .checks import check_output_shape

        check_output_shape(broadcast_shapes(d.shape, np.shape(s)), d.shape)  # torch's texts
        raise
    return COPY.record((input, src if isinstance(src, Tensor) else None),  # type: ignore[no-any-return]
                       out)


def copy_(self: Tensor, src: Any) -> Tensor:
    if VMAP.depth:
        check_vmap_inplace(self, (src,))
    mode = _tls.mode
    if refuses_inference_write(self, mode):
        write_then_refuse(self, _copied, (src,), {})
    check_inplace(self, mode)
    # Integer (and bool) results are never differentiable: a copy into one records nothing.
    if (not (mode == RECORDING and (self._requires_grad or requires_grad(src))) and not FW.active) \
            or self._data.dtype.kind not in "fc":
        s = as_array(src)
        try:
            np.copyto(self._data, np.broadcast_to(s, self._data.shape), casting="unsafe")
        except ValueError:
            from ._shape_util import broadcast_shapes
            from .checks import check_output_shape

            # torch's two refusals: shapes that do not broadcast, or a broadcast shape
            # other than the destination's
            check_output_shape(broadcast_shapes(self._data.shape, np.shape(s)),
                               self._data.shape)
            raise
        bump_version(self)
        return self
    return apply_inplace(self, _copied, src)


def _sample_dtype_check(self: Tensor, kernel: str) -> np.dtype:
    from .._dtype import from_np

    dt = self._data.dtype
    if not from_np(dt).is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{from_np(dt).scalar_name}'")
    return dt


_CPP_FLOAT_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                    "float64": "double"}
_FLOAT_MAX = {"bfloat16": 3.3895313892515355e38}  # NumPy's finfo knows the others


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``self`` with uniform samples in ``[a, b)`` from torch's stream."""
    # the samplers sit above the tensor layer: imported here, where the cycle allows
    from .. import _sampling
    from .._random import get_generator

    dt = _sample_dtype_check(self, "check_uniform_bounds")
    limit = _FLOAT_MAX.get(dt.name) or float(np.finfo(dt).max)
    for name, v in (("from", a), ("to", b)):
        if not -limit <= v <= limit:
            raise RuntimeError(f"{name} is out of bounds for {_CPP_FLOAT_NAMES[dt.name]}")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={float(a):g} > to={float(b):g}")
    flat = _sampling.uniform(get_generator(generator), self._data.size, dt, float(a), float(b))
    from .. import _creation  # the samplers' entries (Note [Sampling and autograd] there)

    return _creation.sample_inplace(self, _sampling.from_fill_order(flat, self._data),
                                    _creation.UNIFORM_)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``self`` with normal samples from torch's stream (its kernel for the layout)."""
    from .. import _sampling
    from .._random import get_generator

    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    dt = _sample_dtype_check(self, "normal_kernel_cpu")
    data = self._data
    flat = _sampling.normal(get_generator(generator), data.size, dt, float(mean), float(std),
                            contiguous=bool(data.flags.c_contiguous))
    from .. import _creation

    return _creation.sample_inplace(self, _sampling.from_fill_order(flat, data),
                                    _creation.NORMAL_)


def random_fill(self: Tensor, values: np.ndarray) -> Tensor:
    """Write a sampler's ``values`` into ``self`` when nothing is recorded (the samplers'
    ``sample_inplace`` in npgrad/_creation.py records the others)."""
    mode = _tls.mode
    if refuses_inference_write(self, mode):
        np.copyto(self._data, values, casting="unsafe")
        raise RuntimeError(INFERENCE_INPLACE_MSG)
    check_inplace(self, mode)
    np.copyto(self._data, values, casting="unsafe")
    bump_version(self)
    return self


