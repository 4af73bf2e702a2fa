"""Shared machinery of the op layer: operand conversion, output wrapping and node recording.

Note [The per-op path]
Every op follows the same four steps, and nothing else:
  1. turn the operands into NumPy arrays of the result dtype (``_dtype`` decides);
  2. compute the result with NumPy;
  3. read the grad mode once; if it is ``RECORDING`` and an input requires
     grad, build the op's node (its class *is* the grad_fn type, e.g.
     ``MulBackward0``) with one edge per input and save what its backward reads;
  4. wrap the result: a non-leaf if recorded, else a plain leaf (an inference
     tensor under inference mode).
When grad is off or no input requires grad, step 3 costs one attribute read
and one comparison: no node, no saved values, no closures.

Inside a forward-AD level (``FW.active``), an op whose inputs carry tangents
gives its output its tangent at once, in the op's registry entry (Note
[Tangents computed at once] in npgrad._ops.registry); views take their part
of the input's tangent (``mark_view``).  Outside a level this is one more
attribute read per op.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _bfloat16, _dtype
from .._forward import FW, give_view_tangent, has_tangent
from .._mode import _tls, INFERENCE, RECORDING
from .. import _tensor_base
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import INFERENCE_COUNTER, TensorExtra, wrap, wrap_result
from ..autograd.graph import edge_of
from ..autograd.graph import RELEASED, SECOND_BACKWARD_MSG, Node, SavedTensor
from ._shape_util import broadcast_shapes

ndarray = np.ndarray
_new = object.__new__
_SCALAR_TYPES = (int, float, bool, complex)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def requires_grad(x: Any) -> bool:
    return isinstance(x, Tensor) and x._requires_grad


def as_array(x: Any) -> Any:
    """A tensor's data, or a Python scalar unchanged."""
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, _SCALAR_TYPES):
        if type(x) is int and not _INT_MIN <= x < _UINT_END:
            check_int_scalar(x)
        return x
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


# Note [Python ints as scalars]
# torch reads a Python int operand as a 64-bit number: one in [-2**63, 2**64) is taken
# (values from 2**63 up as unsigned, so they wrap to int64 like any other), anything else
# raises OverflowError before an op runs.  In integer arithmetic the number then wraps to
# the tensor's dtype (``uint8 + 257 == uint8 + 1``), but an op that computes in floating
# point (true division) or checks its range (an integer power) sees the number itself:
# ``uint8 / 256`` divides by 256.0, never by the wrapped 0.
_INT_MIN, _INT64_MAX, _UINT_END = -2 ** 63, 2 ** 63 - 1, 2 ** 64


def check_int_scalar(value: int) -> None:
    """torch's OverflowError for a Python int outside the 64-bit range (Note [Python ints as scalars])."""
    if value >= _UINT_END:
        raise OverflowError("int too big to convert")
    if value < _INT_MIN:
        raise OverflowError("can't convert negative int to unsigned")


def _int_scalar(value: int, dt: np.dtype) -> Any:
    """A Python int converted to ``dt`` the way torch does: wrapping, never raising."""
    info = np.iinfo(dt)
    if info.min <= value <= info.max:
        return value
    if value > np.iinfo(np.int64).max:  # read as unsigned 64-bit, then wrapped
        return np.array(value, dtype=np.uint64).astype(dt)[()]
    return np.array(value).astype(dt)[()]


def float_arrays(a: Any, b: Any) -> tuple:
    """NumPy operands of a floating-point-only binary op (true division): torch's result dtype,
    made floating (ints go to the default dtype); a Python scalar stays a Python float, unwrapped
    (Note [Python ints as scalars])."""
    ad = a._data if isinstance(a, Tensor) else as_array(a)
    bd = b._data if isinstance(b, Tensor) else as_array(b)
    if type(bd) is int and bd > _INT64_MAX and type(ad) is ndarray:
        _array_for_scalar(ad, bd)  # bool / uint64: torch's promotion error
    rt = _dtype.float_result_np(_dtype.result_type_np((ad, bd)))
    return _float_operand(ad, rt), _float_operand(bd, rt)


def _float_operand(x: Any, rt: np.dtype) -> Any:
    if type(x) is ndarray:
        return x.astype(rt, copy=False)
    return float(x)


def binary_arrays(a: Any, b: Any) -> tuple:
    """NumPy operands of a binary op, cast to torch's result dtype (Note [Promotion in three tiers])."""
    ad = a._data if isinstance(a, Tensor) else as_array(a)
    bd = b._data if isinstance(b, Tensor) else as_array(b)
    ta, tb = type(ad) is ndarray, type(bd) is ndarray
    if ta and tb:
        if ad.dtype == bd.dtype:
            return ad, bd
        rt = _dtype.result_type_np((ad, bd))
        return ad.astype(rt, copy=False), bd.astype(rt, copy=False)
    if ta:
        ad = _array_for_scalar(ad, bd)
        return ad, _scalar_for(ad, bd)
    if tb:
        bd = _array_for_scalar(bd, ad)
        return _scalar_for(bd, ad), bd
    rt = _dtype.result_type_np((ad, bd))
    return np.asarray(ad, dtype=rt), np.asarray(bd, dtype=rt)


def _array_for_scalar(arr: np.ndarray, s: Any) -> np.ndarray:
    """Cast ``arr`` when a Python scalar raises the category (int tensor * 1.5 -> float32)."""
    kind = arr.dtype.kind
    ts = type(s)
    if ts is float and kind not in "fVc":  # "V": bfloat16 stays bfloat16
        return arr.astype(_dtype.get_default_dtype().np_dtype)
    if ts is complex and kind != "c":  # Note [Complex promotion] in npgrad._dtype
        return arr.astype(_dtype.result_type_np((arr, s)))
    if ts is int and kind == "b":
        if s > _INT64_MAX:  # torch reads it as uint64, which it does not promote with bool
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               "attempted to promote Bool and UInt64")
        return arr.astype(np.int64)
    return arr


def _scalar_for(arr: np.ndarray, s: Any) -> Any:
    """The scalar as NumPy should see it once ``arr`` already has the result dtype."""
    if type(s) is int and arr.dtype.kind in "iu":
        return _int_scalar(s, arr.dtype)
    return s


def binary_compute(ufunc: Any, ad: Any, bd: Any) -> Any:
    if _bfloat16.any_bf16(ad, bd):
        return _bf16_compute(ufunc, ad, bd)
    try:
        return ufunc(ad, bd)
    except ValueError:
        _raise_broadcast(ad, bd)
        raise


def _bf16_compute(ufunc: Any, ad: Any, bd: Any) -> np.ndarray:
    """``ufunc`` over bfloat16 operands computed in float32 and rounded once (Note [bfloat16
    storage] in npgrad._bfloat16)."""
    if ufunc is not np.multiply and ufunc is not np.true_divide:
        # torch's mul and div keep a Python scalar in float32; every other op (add, sub,
        # pow, comparisons, ...) first rounds it to bfloat16, the tensor's dtype
        bf = _bfloat16.numpy_dtype()
        ad = ad if type(ad) is ndarray else np.asarray(ad, dtype=bf)
        bd = bd if type(bd) is ndarray else np.asarray(bd, dtype=bf)
    try:
        return np.asarray(_bfloat16.in_float32(ufunc, ad, bd))
    except ValueError:
        _raise_broadcast(ad, bd)
        raise


def _raise_broadcast(ad: Any, bd: Any) -> None:
    sa = getattr(ad, "shape", ())
    sb = getattr(bd, "shape", ())
    broadcast_shapes(sa, sb)


def new_node(cls: type, edges: tuple, out: Any) -> Node:
    """Allocate node ``cls`` with its edges and output metadata (no __init__ on the hot path)."""
    node = _new(cls)
    node._init_node(edges, ((out.shape, out.dtype),))
    return node


def binary_op(cls: Any, ufunc: Any, a: Any, b: Any) -> Tensor:
    """A whole two-input op: operands, NumPy ``ufunc``, then record or wrap (the hot path).

    Same steps as Note [The per-op path], with the common case (two tensors of
    one dtype, or a tensor and a Python scalar that does not change its dtype)
    handled inline, since every arithmetic operator goes through here.
    """
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    out = None
    if ta and tb and a._data.dtype is b._data.dtype:
        ad, bd = a._data, b._data
    elif ta and type(b) is float and a._data.dtype.kind == "f":
        ad, bd = a._data, b
    else:
        ad, bd = binary_arrays(a, b)
        if _bfloat16.any_bf16(ad, bd):  # a Python scalar meets bfloat16 in float32, as in torch
            out = _bf16_compute(ufunc, ad, bd)
    if out is None:
        try:
            out = ufunc(ad, bd)
        except ValueError:
            _raise_broadcast(ad, bd)
            raise
    if type(out) is not ndarray:
        out = np.asarray(out)
    mode = _tls.mode
    if mode == RECORDING and ((a._requires_grad if ta else requires_grad(a))
                              or (b._requires_grad if tb else requires_grad(b))):
        # ``wrap_result``, inline: one frame less on the hot path
        node = _new(cls)
        node._init_binary(a, b, out)
        t = _new(_tensor_base.TENSOR)
        t._data = out
        t._grad_fn = node
        t._requires_grad = True
        t._vc = None
        t._output_nr = 0
        t._base = None
        t._grad = None
        t._extra = None
        node.save(a, b, t)
        return t
    # The unrecorded result, built inline (as ``wrap`` does): this is the hottest line.
    t = _new(_tensor_base.TENSOR)
    t._data = out
    t._grad_fn = None
    t._requires_grad = False
    t._vc = INFERENCE_COUNTER if mode & INFERENCE else None
    t._output_nr = 0
    t._base = None
    t._grad = None
    t._extra = None
    return t


# Note [Operators with their own fast path]
# ``a * b`` on tensors is the most frequent call there is.  Its operator is built by
# ``binary_operator``: for the common operands (a tensor with a tensor of the same dtype,
# or with a Python float, outside forward AD) it computes, records and wraps in its own
# frame -- exactly the steps of ``binary_op`` -- and for anything else calls the public
# function (``npgrad.mul``), which does the full work (promotion, checks, errors).  That
# saves the public function's frame and its operand checks per operator: ~80 ns of
# ~700 for a 1-element op.  The operators stay plain functions, never wrapped by the
# signature checks (they take exactly one operand).

# What the operators take (Note [Operators give NotImplemented] in _ops/operators.py).
OPERAND_TYPES = (Tensor, int, float, complex, np.number, np.bool_, np.ndarray)


def binary_operator(cls: Any, ufunc: Any, fallback: Any, bool_ok: bool = True) -> Any:
    """The Tensor operator of op ``cls`` (Note [Operators with their own fast path]).

    ``fallback(self, other)`` is the op's public function; with ``bool_ok=False`` bool
    tensors always take it (``sub`` refuses them there).
    """
    # the bound Tensor class, exactly: a subclass (Parameter, a sparse tensor) takes the
    # full path.  The operators are built after npgrad._tensor binds it.
    exact = _tensor_base.TENSOR

    def operator(self: Any, other: Any = None, *rest: Any, **bogus: Any) -> Any:
        if rest or bogus or type(self) is not exact or FW.active:
            if rest or bogus:  # a direct call's wrong arguments (Note [Operators give NotImplemented])
                return NotImplemented
            return fallback(self, other)
        ad = self._data
        kind = type(other)
        if kind is exact:
            bd = other._data
            if ad.dtype is not bd.dtype or not (bool_ok or ad.dtype.kind != "b"):
                return fallback(self, other)
            other_grad = other._requires_grad
        elif kind is float and ad.dtype.kind == "f":
            bd = other
            other_grad = False
        elif isinstance(other, OPERAND_TYPES):
            return fallback(self, other)
        else:
            return NotImplemented  # Note [Operators give NotImplemented] in _ops/operators.py
        try:
            out = ufunc(ad, bd)
        except ValueError:
            return fallback(self, other)  # raises torch's broadcast error
        if type(out) is not ndarray:
            out = np.asarray(out)
        mode = _tls.mode
        t = _new(exact)  # (a closure read: ~15 ns less than the module attribute)
        t._data = out
        t._output_nr = 0
        t._base = None
        t._grad = None
        t._extra = None
        if mode == RECORDING and (self._requires_grad or other_grad):
            node = _new(cls)
            node._init_binary(self, other, out)
            t._grad_fn = node
            t._requires_grad = True
            t._vc = None
            node.save(self, other, t)
            return t
        t._grad_fn = None
        t._requires_grad = False
        t._vc = INFERENCE_COUNTER if mode & INFERENCE else None
        return t

    operator.__name__ = operator.__qualname__ = f"__{fallback.__name__}__"
    return operator


class UnaryNode(Node):
    """Base of one-input pointwise nodes: ``self_`` and/or ``result`` may be saved."""

    __slots__ = ("self_", "result")
    _saved_fields = ("self_", "result")
    saves_self = False
    saves_result = False


class NotImplementedBackward(Node):
    """torch's placeholder node for an op without a derivative (``floor_divide``,
    ``bernoulli(x, p)``, ...): it is recorded, and backward through it raises.

    One class for every such op (torch has one, ``torch::autograd::NotImplemented``);
    ``op`` names the aten op for the message.
    """

    __slots__ = ("op",)

    def backward(self, *grads: Tensor) -> tuple:
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")

    def name(self) -> str:
        return "torch::autograd::NotImplemented"


NotImplementedBackward.__name__ = "NotImplemented"  # what torch's grad_fn repr shows
# ``op`` names the aten op for the messages; torch's node shows no ``_saved_`` attribute
del NotImplementedBackward._saved_op


def record_not_implemented(op: str, inputs: tuple, out: Any) -> Any:
    """Wrap ``out`` of aten op ``op``, which has no derivative: a NotImplemented node when an
    input requires grad; an input's tangent raises at once, as torch's forward AD does.
    As torch's, the node has an edge to each tensor input that requires grad, and to no
    other.  ``out`` is one array, or a tuple of arrays whose tensors share the node
    (histogram's counts and edges); the result is what ``out`` is, of tensors."""
    outs = out if type(out) is tuple else (out,)
    mode = _tls.mode
    if FW.active and not mode & INFERENCE and any(o.dtype.kind in "fcV" for o in outs) and any(
            isinstance(x, Tensor) and has_tangent(x) for x in inputs):
        raise NotImplementedError(f"Trying to use forward AD with aten::{op} that does not "
                                  "support it.")
    if mode == RECORDING and any(isinstance(x, Tensor) and x._requires_grad for x in inputs):
        node: Any = _new(NotImplementedBackward)
        node._init_node(tuple([edge_of(x) for x in inputs
                               if isinstance(x, Tensor) and x._requires_grad]),
                        tuple([(o.shape, o.dtype) for o in outs]))
        node.op = op
        res = tuple(wrap_result(o, node, i) for i, o in enumerate(outs))
    else:
        res = tuple(wrap(o, mode) for o in outs)
    return res if type(out) is tuple else res[0]


def save_value(x: Any) -> Any:
    """What a node keeps of an operand: a SavedTensor for a tensor, a Python number as is.

    Numbers need no version check and, kept bare, are not one more object for
    the cyclic GC to track per recorded op (Note [Saved tensors] in graph.py).
    """
    if isinstance(x, Tensor):
        return SavedTensor(x)
    return x


# Note [Saved values kept outside SavedTensor]
# Some nodes keep what torch saves for backward (an index, a mask, a pool's argmax, the
# input of a pad) as plain arrays or inside the maps they apply, not as SavedTensor
# objects, so releasing the graph does not free them and nothing would refuse a second
# backward through them.  torch refuses it (their saved variables are gone), so such a
# node's class says ``holds_saved = True`` and its backward starts with
# ``check_not_freed(self)``: once the engine has run the node without ``retain_graph``
# (``_released``), it raises torch's error instead of doubling ``.grad``.  Nodes that in
# torch save only sizes (slices, upsampling, constant pads) keep running again, as torch's.

def check_not_freed(node: Node) -> None:
    """Raise torch's second-backward error if ``node`` (which holds saved values) was released."""
    if node._released:
        raise RuntimeError(SECOND_BACKWARD_MSG)


def saved(node: Node, field: str) -> Any:
    """Unpack a saved field: checks versions, and raises once the graph has been freed."""
    value = getattr(node, field)
    kind = type(value)
    if kind is SavedTensor:
        return value.unpack(node)
    if value is None or kind is float or kind is int:   # the common plain values, tested once
        return value
    if isinstance(value, SavedTensor):
        return value.unpack(node)
    if value is RELEASED:
        raise RuntimeError(SECOND_BACKWARD_MSG)
    return value


# Note [Masked gradients by bits]
# A backward rule that passes its gradient where a mask holds and +0 elsewhere (ReLU's
# ``result <= 0 ? 0 : grad``) is, when no graph is being built of it, a bitwise AND of
# the gradient's bits with an all-ones / all-zeros word per element: exactly the
# gradient (its sign of zero and NaNs included) or +0, as torch's kernel gives.
# ``np.where`` computes the same but branches per element on random masks, which
# costs several times more (18 us against 5 us for a 64x256 float32 gradient).
_UINT_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def zero_where(grad: Tensor, off: np.ndarray) -> Tensor | None:
    """``grad`` with +0 where ``off`` holds (Note [Masked gradients by bits]), or None
    when the bitwise path does not apply (a graph of it is wanted, or odd shapes/dtypes)."""
    g = grad._data
    if grad._requires_grad or g.dtype.kind != "f" or g.shape != off.shape:
        return None
    uint = _UINT_OF_SIZE[g.dtype.itemsize]
    bits = np.asarray(off).astype(uint)  # 1 where off (a 0-dim comparison gives a scalar)
    bits -= uint(1)  # 0 where off, all ones elsewhere
    np.bitwise_and(bits, g.view(uint), out=bits)
    return wrap(bits.view(g.dtype), _tls.mode)


# -- views --------------------------------------------------------------------------

def view_of_view_message(nr: int, name: str, in_inference: bool) -> str:
    """torch's error for an in-place write to a recorded view of a view made under
    no_grad (``in_inference``: made in inference mode); ``name`` is the op, e.g. "View"."""
    if in_inference:
        mode, now, block = "inference mode", "in normal mode", "inference_mode"
    else:
        mode, now, block = "no_grad mode", "with grad mode enabled", "no_grad"
    return (f"Output {nr} of {name} is a view of a view which was created in {mode} and is "
            f"being modified inplace {now}. Given that this use case is ambiguous and "
            "error-prone, it is forbidden. You can clarify your code by moving both the view and "
            f"the inplace either both inside the {block} block (if you don't want the inplace to "
            "be tracked) or both outside (if you want the inplace to be tracked).")


class ViewInfo:
    """How a view was made, for torch's checks on views made under no_grad or as one of many.

    ``version`` is the storage's version when the view was made: once it moves,
    torch refuses to give such a view a history (see ``refresh_view_grad_fn``).
    """

    __slots__ = ("created_in_no_grad", "multi_output", "version", "created_in_inference")

    def __init__(self, created_in_no_grad: bool, multi_output: bool = False,
                 version: int | None = None, created_in_inference: bool = False) -> None:
        self.created_in_no_grad = created_in_no_grad
        self.multi_output = multi_output
        self.version = version
        self.created_in_inference = created_in_inference


def mark_view(res: Tensor, x: Tensor, node: Any, mode: int, vc: Any,
              multi_output: bool = False) -> None:
    """Make ``res`` (sharing ``x``'s storage and counter ``vc``) a view of ``x``: its base,
    how it was made (ViewInfo) and its tangent.  Not for views of inference tensors: torch
    tracks none, in or out of inference mode (no ``_base``, no history, no grad).

    Note [Views made under no_grad]: a view of a tensor that requires grad, made while not
    recording, still reports ``requires_grad=True`` (as torch's does) and remembers that it
    was made so, because an in-place write to it with grad on is an error."""
    base = x._base
    res._base = x if base is None else base
    made_in_no_grad = node is None and x._requires_grad
    made_in_inference = bool(made_in_no_grad and mode & INFERENCE)
    if base is not None and x._extra is not None:  # a view of a view inherits its status
        parent = x._extra.view_info
        if parent is not None:
            # as torch's creation meta: a view made in inference mode stays so, whatever
            # mode its own views are made in
            made_in_inference = made_in_inference or (parent.created_in_no_grad
                                                      and parent.created_in_inference)
            made_in_no_grad = made_in_no_grad or parent.created_in_no_grad
            multi_output = multi_output or parent.multi_output
    if made_in_no_grad or multi_output:
        extra = res._extra = TensorExtra()
        extra.view_info = ViewInfo(made_in_no_grad, multi_output,
                                   None if vc is INFERENCE_COUNTER else vc.version,
                                   made_in_inference)
    if FW.active and not mode & INFERENCE and has_tangent(x):
        give_view_tangent(res, x)
