"""The Tensor class: a NumPy array plus autograd metadata; methods are one-liners over the ops.

Note [Tensor slots]
Every tensor sets all of its slots when it is built (``_make``), so no
attribute lookup ever fails on the hot path:

    _data           the NumPy array (always an ndarray, also for 0-dim tensors)
    _grad_fn        the node that produced it, or None for a leaf
    _requires_grad  for leaves, the user's flag; for non-leaves always True
    _vc             version counter: None (version 0, not shared yet), a
                    VersionCounter (shared by every view of one storage), or
                    INFERENCE for inference tensors, which have no counter
    _output_nr      which output of ``_grad_fn`` this tensor is
    _base           the tensor this one is a view of (its root), or None
    _grad           accumulated gradient (leaves and retain_grad tensors)
    _extra          rarely used state (hooks, accumulator, view info), or None
"""
from __future__ import annotations

import builtins
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Iterator, Union

import numpy as np

from . import _dtype
from ._forward import FW, flush as flush_tangents, install as install_tangent
from ._mode import _tls, GRAD, INFERENCE, RECORDING
from ._size import Size
from ._storage import (TypedStorage, UntypedStorage, deepcopy_array, root_of, storage_offset,
                       warn_typed_storage)
from ._ops._shape_util import NO_DIM, wrap_dim
from .autograd.graph import AccumulateGrad


# What an operator accepts besides a tensor: a Python number (torch's ``Number``).
_Operand = Union["Tensor", int, float, bool]


class VersionCounter:
    """Counts in-place writes to one storage; shared by a tensor and its views."""

    __slots__ = ("version",)

    def __init__(self, version: int = 0) -> None:
        self.version = version


INFERENCE_COUNTER = VersionCounter(-1)  # marker: inference tensors have no counter


class TensorExtra:
    """Per-tensor state that most tensors never need."""

    __slots__ = ("accumulator", "hooks", "post_accumulate_hooks", "retains_grad",
                 "view_info", "name", "is_param", "tangent", "fw_pending", "detached_seq")

    def __init__(self) -> None:
        self.accumulator: Any = None  # weakref to this leaf's AccumulateGrad
        self.hooks: Any = None  # leaf: _HookDict of Tensor.register_hook hooks
        self.post_accumulate_hooks: Any = None
        self.retains_grad = False
        self.view_info: Any = None  # ViewInfo for views (see _ops.views)
        self.name: str | None = None
        self.is_param = False
        self.tangent: Tensor | None = None  # Note [Tangents] in npgrad._forward
        self.fw_pending: Any = None  # its PendingJvp while not yet computed
        self.detached_seq: int | None = None  # Note [Saved tensors detached in place]


_new = object.__new__


def _make(cls: type, data: np.ndarray, grad_fn: Any, requires_grad: bool, vc: Any) -> Tensor:
    t: Tensor = _new(cls)
    t._data = data
    t._grad_fn = grad_fn
    t._requires_grad = requires_grad
    t._vc = vc
    t._output_nr = 0
    t._base = None
    t._grad = None
    t._extra = None
    return t


def wrap(data: np.ndarray, mode: int) -> Tensor:
    """A fresh leaf without grad holding ``data``: the output of an unrecorded op."""
    t = _new(Tensor)
    t._data = data
    t._grad_fn = None
    t._requires_grad = False
    t._vc = INFERENCE_COUNTER if mode & INFERENCE else None
    t._output_nr = 0
    t._base = None
    t._grad = None
    t._extra = None
    return t


def wrap_result(data: Any, node: Any, output_nr: int = 0) -> Tensor:
    """The output of a recorded op (``node`` is its grad_fn)."""
    if type(data) is not np.ndarray:
        data = np.asarray(data)
    t = _new(Tensor)
    t._data = data
    t._grad_fn = node
    t._requires_grad = True
    t._vc = None
    t._output_nr = output_nr
    t._base = None
    t._grad = None
    t._extra = None
    return t


def edge_of(t: Tensor) -> tuple:
    """The ``(node, output_nr)`` edge through which gradient reaches ``t``."""
    fn = t._grad_fn
    if t._base is not None:
        fn = current_view_grad_fn(t)
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The one AccumulateGrad of a leaf that requires grad (kept alive by the graph only)."""
    extra = t._extra
    if extra is None:
        extra = t._extra = TensorExtra()
    ref = extra.accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        extra.accumulator = weakref.ref(acc)
    return acc


def version_counter(t: Tensor) -> VersionCounter:
    """The tensor's shared counter, made on first need (views, saves, in-place writes)."""
    vc = t._vc
    if vc is None:
        vc = t._vc = VersionCounter()
    return vc


def bump_version(t: Tensor) -> None:
    vc = t._vc
    if vc is None:
        t._vc = VersionCounter(1)
    elif vc is not INFERENCE_COUNTER:
        vc.version += 1


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make "
    "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
    "instead of `torch.inference_mode()`."
)


def save_check(t: Any) -> tuple:
    """Version bookkeeping for a tensor being saved for backward."""
    if type(t) is not Tensor and not isinstance(t, Tensor):
        return None, 0
    vc = t._vc
    if vc is INFERENCE_COUNTER:
        raise RuntimeError(INFERENCE_SAVE_MSG)
    if vc is None:
        vc = t._vc = VersionCounter()
    return vc, vc.version


def input_version_for_save(t: Any) -> int:
    """The version of an input being saved (-1 for a non-tensor value, which has none)."""
    if type(t) is not Tensor and not isinstance(t, Tensor):
        return -1
    vc = t._vc
    if vc is None:
        return 0
    if vc is INFERENCE_COUNTER:
        raise RuntimeError(INFERENCE_SAVE_MSG)
    return vc.version


def _legacy_type_and_size(data: np.ndarray) -> str:
    dt = _dtype.from_np(data.dtype)
    return f"torch.{dt.legacy_type} [{', '.join(str(s) for s in data.shape)}]"


def check_saved_version(saved: Any, tensor: Any, node: Any) -> None:
    if saved._is_output:
        vc = saved._vc
    elif saved._version < 0:
        return  # a Python number: no version
    else:
        extra = tensor._extra
        if extra is not None and extra.detached_seq is not None:
            _check_not_detached_in_place(tensor, extra.detached_seq, node)
        vc = tensor._vc
    current = 0 if vc is None else vc.version
    if current == saved._version:
        return
    from .autograd import anomaly_mode

    if saved._is_output:
        producer = node
        data = saved._data
    else:
        producer = tensor.grad_fn
        data = tensor._data
    where = ""
    if producer is not None:
        nr = 0 if saved._is_output else tensor._output_nr
        where = f", which is output {nr} of {_strip_backward_suffix(producer.name())},"
    if anomaly_mode.is_anomaly_enabled():
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_legacy_type_and_size(data)}]{where} is at version {current}; "
        f"expected version {saved._version} instead. {hint}"
    )


DETACHED_SAVED_MSG = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")


def _check_not_detached_in_place(tensor: Tensor, detached_seq: int, node: Any) -> None:
    """Note [Saved tensors detached in place]
    torch refuses to unpack a saved input that had history when it was saved and
    has none now (``detach_()`` ran in between).  npgrad's saved input keeps only
    the tensor, so ``detach_`` stamps the tensor with a fresh sequence number:
    a node with a smaller one was made, and saved the tensor, before the detach.
    """
    if tensor._grad_fn is None and node is not None and node._seq < detached_seq:
        raise RuntimeError(DETACHED_SAVED_MSG)


def _strip_backward_suffix(name: str) -> str:
    """``MulBackward0`` -> ``Mul``; a custom Function's ``MyFnBackward`` -> ``MyFn``."""
    i = name.rfind("Backward")
    if i > 0 and (name[i + 8:].isdigit() or i + 8 == len(name)):
        return name[:i]
    return name


def rebuild_output(saved: Any, node: Any) -> Tensor:
    """Unpack a saved op output: same data, with ``node`` as grad_fn when recording."""
    check_saved_version(saved, None, node)
    data = saved._data
    if _tls.mode == RECORDING and saved._requires_grad:
        t = wrap_result(data, node, saved._output_nr)
    else:
        t = wrap(data, 0)
    t._vc = saved._vc
    if saved._fw_extra is not None and FW.active:
        from ._forward import tangent_of_extra

        tangent = tangent_of_extra(saved._fw_extra)
        if tangent is not None:
            install_tangent(t, tangent)
    return t


def accumulate_into_grad(leaf: Tensor, grad: Tensor) -> None:
    """AccumulateGrad's job: add ``grad`` into ``leaf.grad`` the way torch does.

    The leaf's own hooks have run already (the engine runs them first, as torch does);
    its post-accumulate hooks run after, in ``AccumulateGrad.backward``.
    """
    old = leaf._grad
    if _tls.mode & GRAD:  # create_graph: the new .grad is part of a graph
        if old is None:
            # torch copies into a fresh tensor, so the first .grad has CopyBackwards.
            fresh = _make(Tensor, np.zeros_like(grad._data), None, False, None)
            leaf._grad = fresh.copy_(grad)
        else:
            leaf._grad = old + grad
    elif old is None:
        leaf._grad = _owned_copy(grad)
    elif old._grad_fn is None and old._data.shape == grad._data.shape:
        np.add(old._data, grad._data, out=old._data, casting="unsafe")
        bump_version(old)
    else:
        leaf._grad = wrap(np.asarray(old._data + grad._data), 0)


def _owned_copy(grad: Tensor) -> Tensor:
    """A private copy of a first gradient for ``.grad``.

    The incoming tensor may be shared (a user's ``gradient``, one tensor sent down
    two edges, a tensor a hook kept), so ``.grad``, which later accumulates in
    place, never aliases it.  torch steals provably private gradients instead;
    proving that here would need ownership tracking the engine does not do.
    """
    return wrap(np.array(grad._data, copy=True, order="C"), 0)


def _checked_hook_result(hook: Any, old: Tensor, new: Any) -> Tensor:
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Tensor, but hook returned '{type(new).__name__}'")
    if new._data.shape != old._data.shape:
        name = getattr(hook, "__name__", repr(hook))
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
LEAF_REQUIRES_GRAD_MSG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.], requires_grad=True)
    >>> y = x * 2
    >>> y
    tensor([2.], grad_fn=<MulBackward0>)
    """

    __slots__ = ("_data", "_grad_fn", "_requires_grad", "_vc", "_output_nr", "_base",
                 "_grad", "_extra", "__weakref__")
    __array_priority__ = 1000  # numpy defers `ndarray * tensor` to Tensor.__rmul__

    if TYPE_CHECKING:
        # Note [Operators for type checkers]
        # The hottest operators are bound to the op functions after the class (one Python
        # frame less per `x * 2`), so type checkers cannot see them there.  They are declared
        # here instead, for mypy and pyright only: `TYPE_CHECKING` is False at run time, so
        # this block costs nothing and the bindings below stay the real methods.  A `.pyi`
        # stub would hide the implementation of every other method from "go to definition"
        # and would have to be kept in step with this file by hand; this block sits next to
        # the methods it completes.  (`int`, `float` and `bool` are methods of Tensor, so
        # annotations in this class spell the types `builtins.int` ...)
        _data: np.ndarray
        _grad_fn: Any
        _requires_grad: builtins.bool
        _vc: VersionCounter | None
        _output_nr: builtins.int
        _base: Tensor | None
        _grad: Tensor | None
        _extra: TensorExtra | None

        def __add__(self, other: _Operand) -> Tensor: ...
        def __radd__(self, other: _Operand) -> Tensor: ...
        def __sub__(self, other: _Operand) -> Tensor: ...
        def __rsub__(self, other: _Operand) -> Tensor: ...
        def __mul__(self, other: _Operand) -> Tensor: ...
        def __rmul__(self, other: _Operand) -> Tensor: ...
        def __truediv__(self, other: _Operand) -> Tensor: ...
        def __rtruediv__(self, other: _Operand) -> Tensor: ...
        def __pow__(self, exponent: _Operand) -> Tensor: ...
        def __matmul__(self, other: Tensor) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __lt__(self, other: _Operand) -> Tensor: ...
        def __le__(self, other: _Operand) -> Tensor: ...
        def __gt__(self, other: _Operand) -> Tensor: ...
        def __ge__(self, other: _Operand) -> Tensor: ...

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        # torch.Tensor(data) / torch.Tensor(2, 3): the legacy constructor, float32 always.
        if len(args) == 1 and not isinstance(args[0], int):
            data = np.array(args[0].tolist() if isinstance(args[0], Tensor) else args[0],
                            dtype=_dtype.get_default_dtype().np_dtype)
        else:
            data = np.zeros(tuple(args), dtype=_dtype.get_default_dtype().np_dtype)
        return _make(cls, data, None, False, None)

    # -- autograd metadata ------------------------------------------------
    @property
    def requires_grad(self) -> builtins.bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        if self._grad_fn is not None:
            raise RuntimeError(LEAF_REQUIRES_GRAD_MSG if not value else
                               "you can only change requires_grad flags of leaf variables.")
        value = bool(value)
        if value and self._data.dtype.kind not in "fV":  # "V": bfloat16
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(LEAF_REQUIRES_GRAD_MSG)
            return self
        if requires_grad and self._data.dtype.kind not in "fV":  # "V": bfloat16
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._vc is INFERENCE_COUNTER and not _tls.mode & INFERENCE:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        if FW.pending:  # a node's placeholder edges go before anyone sees them (npgrad._forward)
            flush_tangents()
        if self._base is not None:
            return current_view_grad_fn(self)
        return self._grad_fn

    @property
    def is_leaf(self) -> builtins.bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> builtins.int:
        """Which output of its ``grad_fn`` this tensor is (0 for a leaf)."""
        return self._output_nr

    @output_nr.setter
    def output_nr(self, value: Any) -> None:
        raise AttributeError("attribute 'output_nr' of 'torch._C.TensorBase' objects is not "
                             "writable")

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and not (self._extra is not None and
                                              self._extra.retains_grad):
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_dtype.from_np(value._data.dtype).cpp_name}' to a tensor with "
                    f"grad_dtype '{_dtype.from_np(self._data.dtype).scalar_name}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                    "set the tensor's grad_dtype attribute with a specific dtype, or None to allow"
                    " any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{_shape_str(value._data.shape)}' "
                    f"to a tensor of size '{_shape_str(self._data.shape)}'. Please ensure that "
                    "the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> builtins.bool:
        return self._grad_fn is not None and self._extra is not None and \
            self._extra.retains_grad

    def retain_grad(self) -> None:
        from .autograd.hooks import retain_grad

        retain_grad(self)

    def register_hook(self, hook: Any) -> Any:
        from .autograd.hooks import register_tensor_hook

        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        from .autograd.hooks import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient: Any = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False, inputs: Any = None) -> None:
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    @property
    def _version(self) -> builtins.int:
        vc = self._vc
        if vc is None:
            return 0
        if vc is INFERENCE_COUNTER:
            raise RuntimeError("Inference tensors do not track version counter.")
        return vc.version

    def is_inference(self) -> builtins.bool:
        return self._vc is INFERENCE_COUNTER

    def _is_view(self) -> builtins.bool:
        return self._base is not None

    @property
    def data(self) -> Tensor:
        """Same storage, no autograd history, and a version counter of its own."""
        out = _make(Tensor, self._data, None, False,
                    INFERENCE_COUNTER if self._vc is INFERENCE_COUNTER else None)
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data

    @property
    def name(self) -> str | None:
        return None if self._extra is None else self._extra.name

    # -- array metadata ------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: builtins.int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.FROM_NUMPY[self._data.dtype]

    @property
    def device(self) -> Any:
        from ._device import cpu

        return cpu

    @property
    def is_cuda(self) -> builtins.bool:
        return False

    @property
    def layout(self) -> str:
        return "torch.strided"

    def dim(self) -> builtins.int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    def numel(self) -> builtins.int:
        return self._data.size

    nelement = numel

    def element_size(self) -> builtins.int:
        return self._data.itemsize

    def stride(self, dim: builtins.int | None = None) -> Any:
        data = self._data
        if data.size == 0:  # NumPy gives empty arrays zero strides; torch, contiguous ones
            strides: tuple = ()
            step = 1
            for n in reversed(data.shape):
                strides = (step,) + strides
                step *= n if n > 1 else 1
        else:
            item = data.itemsize
            strides = tuple(s // item for s in data.strides)
        return strides if dim is None else strides[wrap_dim(dim, data.ndim)]

    def is_contiguous(self) -> builtins.bool:
        return self._data.flags.c_contiguous

    def is_floating_point(self) -> builtins.bool:
        return self._data.dtype.kind in "fV"  # "V": bfloat16 (Note [bfloat16 storage])

    def is_complex(self) -> builtins.bool:
        return False

    def data_ptr(self) -> builtins.int:
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(root_of(self._data))

    def storage(self) -> TypedStorage:
        warn_typed_storage()
        return TypedStorage(root_of(self._data), self.dtype)

    def storage_offset(self) -> builtins.int:
        return storage_offset(self._data)

    # -- conversion to Python and NumPy ---------------------------------------
    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self, *, force: builtins.bool = False) -> np.ndarray:
        # as torch: refused only while grad mode is on (under no_grad it is allowed)
        if self._requires_grad and not force and _tls.mode & GRAD:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._requires_grad and _tls.mode & GRAD:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data if dtype is None else self._data.astype(dtype)

    def _scalar_warning(self) -> None:
        if self._requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=3)

    def __float__(self) -> builtins.float:
        self._scalar_warning()
        return float(self.item())

    def __int__(self) -> builtins.int:
        self._scalar_warning()
        return int(self.item())

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._data.reshape(()).item())

    def __bool__(self) -> builtins.bool:
        if self._data.size != 1:
            if self._data.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __len__(self) -> builtins.int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(unbind(self, 0))

    def __hash__(self) -> builtins.int:
        return id(self)

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # -- pickle, copy and DLPack ------------------------------------------------
    def __reduce_ex__(self, protocol: Any) -> Any:
        # As torch's: the data, the class and requires_grad travel; grad and history do not,
        # so a pickled non-leaf comes back a leaf.  copy.copy shares the data.
        from .serialization._rebuild import rebuild_pickled  # serialization imports Tensor

        return (rebuild_pickled, (type(self), self._data, self._requires_grad))

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        # views copied together stay views of one copied storage (npgrad._storage)
        new = _make(type(self), deepcopy_array(self._data, memo), None, self._requires_grad,
                    None)
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        return new

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        return self._data.__dlpack_device__()

    # -- autograd helpers -----------------------------------------------------
    def detach(self) -> Tensor:
        return detach(self)

    def detach_(self) -> Tensor:
        return detach_(self)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return clone(self)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return contiguous(self)

    # -- dtype conversion -----------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return to(self, *args, **kwargs)

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False, **kwargs: Any) -> Any:
        from ._legacy_tensor import tensor_type  # above the Tensor (Note [Legacy tensor types])

        return tensor_type(self, dtype, non_blocking, **kwargs)

    def type_as(self, other: Tensor) -> Tensor:
        return to(self, other.dtype)

    def float(self) -> Tensor:
        return to(self, _dtype.float32)

    def double(self) -> Tensor:
        return to(self, _dtype.float64)

    def half(self) -> Tensor:
        return to(self, _dtype.float16)

    def long(self) -> Tensor:
        return to(self, _dtype.int64)

    def int(self) -> Tensor:
        return to(self, _dtype.int32)

    def short(self) -> Tensor:
        return to(self, _dtype.int16)

    def char(self) -> Tensor:
        return to(self, _dtype.int8)

    def byte(self) -> Tensor:
        return to(self, _dtype.uint8)

    def bool(self) -> Tensor:
        return to(self, _dtype.bool_)

    def bfloat16(self) -> Tensor:
        return to(self, _dtype.bfloat16)

    def cpu(self, memory_format: Any = None) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False,
             memory_format: Any = None) -> Tensor:
        from ._device import check_cuda_device

        check_cuda_device(device)  # always raises: a CPU build has no CUDA
        return self

    def get_device(self) -> builtins.int:
        return -1

    def is_pinned(self, device: Any = None) -> builtins.bool:
        return False

    def histogram(self, bins: Any = 100, *, range: Any = None,  # noqa: A002
                  weight: Any = None, density: builtins.bool = False) -> Any:
        from ._histogram import histogram  # loaded on first use, as torch.histogram is

        return histogram(self, bins, range=range, weight=weight, density=density)

    # -- arithmetic operators -------------------------------------------------








    def __floordiv__(self, other: Any) -> Tensor:
        return floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return floor_divide(_as_tensor_like(other, self), self)

    def __mod__(self, other: Any) -> Tensor:
        return remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return remainder(_as_tensor_like(other, self), self)


    def __rpow__(self, base: Any) -> Tensor:
        return pow(base, self)


    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)


    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return abs(self)

    def __invert__(self) -> Tensor:
        return bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return bitwise_and(self, other)

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return bitwise_or(self, other)

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return bitwise_xor(self, other)

    __rxor__ = __xor__







    # -- in-place operators ---------------------------------------------------
    def __iadd__(self, other: _Operand) -> Tensor:
        return add_(self, other)

    def __isub__(self, other: _Operand) -> Tensor:
        return sub_(self, other)

    def __imul__(self, other: _Operand) -> Tensor:
        return mul_(self, other)

    def __itruediv__(self, other: _Operand) -> Tensor:
        return div_(self, other)

    def __ipow__(self, other: _Operand) -> Tensor:
        return pow_(self, other)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return floor_divide_(self, other)

    def __imod__(self, other: Any) -> Tensor:
        return remainder_(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        setitem(self, index, value)

    # -- pointwise methods ----------------------------------------------------
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return sub(self, other, alpha=alpha)

    subtract = sub

    def mul(self, other: Any) -> Tensor:
        return mul(self, other)

    multiply = mul

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return div(self, other, rounding_mode=rounding_mode)

    divide = true_divide = div

    def floor_divide(self, other: Any) -> Tensor:
        return floor_divide(self, other)

    def remainder(self, other: Any) -> Tensor:
        return remainder(self, other)

    def fmod(self, other: Any) -> Tensor:
        return fmod(self, other)

    def neg(self) -> Tensor:
        return neg(self)

    negative = neg

    def pow(self, exponent: Any) -> Tensor:
        return pow(self, exponent)

    def square(self) -> Tensor:
        return square(self)

    def reciprocal(self) -> Tensor:
        return reciprocal(self)

    def abs(self) -> Tensor:
        return abs(self)

    absolute = abs

    def sign(self) -> Tensor:
        return sign(self)

    def exp(self) -> Tensor:
        return exp(self)

    def log(self) -> Tensor:
        return log(self)

    def log2(self) -> Tensor:
        return log2(self)

    def log10(self) -> Tensor:
        return log10(self)

    def log1p(self) -> Tensor:
        return log1p(self)

    def expm1(self) -> Tensor:
        return expm1(self)

    def sqrt(self) -> Tensor:
        return sqrt(self)

    def rsqrt(self) -> Tensor:
        return rsqrt(self)

    def sin(self) -> Tensor:
        return sin(self)

    def cos(self) -> Tensor:
        return cos(self)

    def tan(self) -> Tensor:
        return tan(self)

    def tanh(self) -> Tensor:
        return tanh(self)

    def sigmoid(self) -> Tensor:
        return sigmoid(self)

    def relu(self) -> Tensor:
        return relu(self)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return clamp(self, min, max)

    clip = clamp

    def clamp_min(self, min: Any) -> Tensor:
        return clamp_min(self, min)

    def clamp_max(self, max: Any) -> Tensor:
        return clamp_max(self, max)

    def maximum(self, other: Tensor) -> Tensor:
        return maximum(self, other)

    def minimum(self, other: Tensor) -> Tensor:
        return minimum(self, other)

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return where(condition, self, other)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return masked_fill(self, mask, value)

    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        return lerp(self, end, weight)

    def floor(self) -> Tensor:
        return floor(self)

    def ceil(self) -> Tensor:
        return ceil(self)

    def round(self, *, decimals: builtins.int = 0) -> Tensor:
        return round(self, decimals=decimals)

    def trunc(self) -> Tensor:
        return trunc(self)

    def frac(self) -> Tensor:
        return frac(self)

    def eq(self, other: Any) -> Tensor:
        return eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return lt(self, other)

    def le(self, other: Any) -> Tensor:
        return le(self, other)

    def gt(self, other: Any) -> Tensor:
        return gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return ge(self, other)

    def equal(self, other: Tensor) -> builtins.bool:
        return equal(self, other)

    def allclose(self, other: Tensor, rtol: builtins.float = 1e-05, atol: builtins.float = 1e-08,
                 equal_nan: builtins.bool = False) -> builtins.bool:
        return allclose(self, other, rtol, atol, equal_nan)

    def isclose(self, other: Tensor, rtol: builtins.float = 1e-05, atol: builtins.float = 1e-08,
                equal_nan: builtins.bool = False) -> Tensor:
        return isclose(self, other, rtol, atol, equal_nan)

    def isnan(self) -> Tensor:
        return isnan(self)

    def isinf(self) -> Tensor:
        return isinf(self)

    def isfinite(self) -> Tensor:
        return isfinite(self)

    def logical_and(self, other: Tensor) -> Tensor:
        return logical_and(self, other)

    def logical_or(self, other: Tensor) -> Tensor:
        return logical_or(self, other)

    def logical_xor(self, other: Tensor) -> Tensor:
        return logical_xor(self, other)

    def logical_not(self) -> Tensor:
        return logical_not(self)

    # -- reductions -----------------------------------------------------------
    def sum(self, dim: Any = NO_DIM, keepdim: builtins.bool = False, *, dtype: Any = None,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = NO_DIM, keepdim: builtins.bool = False, *, dtype: Any = None,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return prod(self, dim, keepdim, dtype=dtype)

    def amax(self, dim: Any = (), keepdim: builtins.bool = False, *,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: builtins.bool = False, *,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return amin(self, dim, keepdim)

    def max(self, dim: Any = None, keepdim: builtins.bool = False, *, keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False, *, keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return min(self, dim, keepdim)

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: builtins.bool = False, *,
            correction: Any = None, keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: builtins.bool = False, *,
            correction: Any = None, keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return std(self, dim, unbiased, keepdim, correction=correction)

    def logsumexp(self, dim: Any, keepdim: builtins.bool = False, *,
                  keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return logsumexp(self, dim, keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False,
             dtype: Any = None) -> Tensor:
        return norm(self, p, dim, keepdim, dtype)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return argmin(self, dim, keepdim)

    def all(self, dim: Any = None, keepdim: builtins.bool = False, *,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: builtins.bool = False, *,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return any(self, dim, keepdim)

    def cumsum(self, dim: builtins.int, *, dtype: Any = None) -> Tensor:
        return cumsum(self, dim, dtype=dtype)

    def softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        return softmax(self, dim, dtype)

    def log_softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        return log_softmax(self, dim, dtype)

    # -- linear algebra -------------------------------------------------------
    def matmul(self, other: Tensor) -> Tensor:
        return matmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return mm(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        return bmm(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        return mv(self, vec)

    def dot(self, other: Tensor) -> Tensor:
        return dot(self, other)

    def outer(self, vec2: Tensor) -> Tensor:
        return outer(self, vec2)

    def t(self) -> Tensor:
        return t(self)

    @property
    def T(self) -> Tensor:
        return permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of "
                               f"matrices. Got {self._data.ndim}-D tensor.")
        return transpose(self, -2, -1)

    # -- shape ------------------------------------------------------------------
    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise NotImplementedError("view(dtype) is not supported by npgrad")
        return view(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return view(self, other._data.shape)

    def reshape(self, *shape: Any) -> Tensor:
        return reshape(self, *shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return reshape(self, other._data.shape)

    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: builtins.int, sizes: Any) -> Tensor:
        return unflatten(self, dim, sizes)

    def squeeze(self, dim: Any = None) -> Tensor:
        return squeeze(self, dim)

    def unsqueeze(self, dim: builtins.int) -> Tensor:
        return unsqueeze(self, dim)

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return transpose(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def transpose_(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return _view_inplace.transpose_(self, dim0, dim1)

    swapaxes_ = swapdims_ = transpose_

    def t_(self) -> Tensor:
        return _view_inplace.t_(self)

    def squeeze_(self, dim: Any = None) -> Tensor:
        return _view_inplace.squeeze_(self, dim)

    def unsqueeze_(self, dim: builtins.int) -> Tensor:
        return _view_inplace.unsqueeze_(self, dim)

    def permute(self, *dims: Any) -> Tensor:
        return permute(self, *dims)

    def expand(self, *sizes: Any) -> Tensor:
        return expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return expand(self, other._data.shape)

    def broadcast_to(self, size: Any) -> Tensor:
        return expand(self, size)

    def repeat(self, *sizes: Any) -> Tensor:
        return repeat(self, *sizes)

    def split(self, split_size: Any, dim: builtins.int = 0) -> tuple:
        return split(self, split_size, dim)

    def chunk(self, chunks: builtins.int, dim: builtins.int = 0) -> tuple:
        return chunk(self, chunks, dim)

    def unbind(self, dim: builtins.int = 0) -> tuple:
        return unbind(self, dim)

    def narrow(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        return narrow(self, dim, start, length)

    def select(self, dim: builtins.int, index: builtins.int) -> Tensor:
        return select(self, dim, index)

    def flip(self, *dims: Any) -> Tensor:
        return flip(self, *dims)

    def diagonal(self, offset: builtins.int = 0, dim1: builtins.int = 0,
                 dim2: builtins.int = 1) -> Tensor:
        return diagonal(self, offset, dim1, dim2)

    def gather(self, dim: builtins.int, index: Tensor) -> Tensor:
        return gather(self, dim, index)

    def index_select(self, dim: builtins.int, index: Tensor) -> Tensor:
        return index_select(self, dim, index)

    def nonzero(self, *, as_tuple: builtins.bool = False) -> Any:
        return nonzero(self, as_tuple=as_tuple)

    # -- in-place methods -------------------------------------------------------
    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add_(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return sub_(self, other, alpha=alpha)

    def mul_(self, other: Any) -> Tensor:
        return mul_(self, other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return div_(self, other, rounding_mode=rounding_mode)

    def floor_divide_(self, other: Any) -> Tensor:
        return floor_divide_(self, other)

    def remainder_(self, other: Any) -> Tensor:
        return remainder_(self, other)

    def fmod_(self, other: Any) -> Tensor:
        return fmod_(self, other)

    def pow_(self, exponent: Any) -> Tensor:
        return pow_(self, exponent)

    def neg_(self) -> Tensor:
        return neg_(self)

    def exp_(self) -> Tensor:
        return exp_(self)

    def sqrt_(self) -> Tensor:
        return sqrt_(self)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return clamp_(self, min, max)

    def relu_(self) -> Tensor:
        return relu_(self)

    def sigmoid_(self) -> Tensor:
        return sigmoid_(self)

    def tanh_(self) -> Tensor:
        return tanh_(self)

    def zero_(self) -> Tensor:
        return zero_(self)

    def fill_(self, value: Any) -> Tensor:
        return fill_(self, value)

    def copy_(self, src: Tensor, non_blocking: builtins.bool = False) -> Tensor:
        return copy_(self, src)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return masked_fill_(self, mask, value)

    def uniform_(self, a: builtins.float = 0.0, b: builtins.float = 1.0, *,
                 generator: Any = None) -> Tensor:
        return uniform_(self, a, b, generator=generator)

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *,
                generator: Any = None) -> Tensor:
        return normal_(self, mean, std, generator=generator)

    # -- methods: special functions and activations [special] --
    def asin(self) -> Tensor:
        return asin(self)

    arcsin = asin

    def acos(self) -> Tensor:
        return acos(self)

    arccos = acos

    def atan(self) -> Tensor:
        return atan(self)

    arctan = atan

    def sinh(self) -> Tensor:
        return sinh(self)

    def cosh(self) -> Tensor:
        return cosh(self)

    def asinh(self) -> Tensor:
        return asinh(self)

    arcsinh = asinh

    def acosh(self) -> Tensor:
        return acosh(self)

    arccosh = acosh

    def atanh(self) -> Tensor:
        return atanh(self)

    arctanh = atanh

    def atan2(self, other: Tensor) -> Tensor:
        return atan2(self, other)

    arctan2 = atan2

    def hypot(self, other: Tensor) -> Tensor:
        return hypot(self, other)

    def erf(self) -> Tensor:
        return erf(self)

    def erfc(self) -> Tensor:
        return erfc(self)

    def exp2(self) -> Tensor:
        return exp2(self)

    def logaddexp(self, other: Tensor) -> Tensor:
        return logaddexp(self, other)

    def xlogy(self, other: Any) -> Tensor:
        return xlogy(self, other)

    def nan_to_num(self, nan: builtins.float = 0.0, posinf: builtins.float | None = None,
                   neginf: builtins.float | None = None) -> Tensor:
        return nan_to_num(self, nan, posinf, neginf)

    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcdiv(self, tensor1, tensor2, value=value)

    def asin_(self) -> Tensor:
        return asin_(self)

    arcsin_ = asin_

    def acos_(self) -> Tensor:
        return acos_(self)

    arccos_ = acos_

    def atan_(self) -> Tensor:
        return atan_(self)

    arctan_ = atan_

    def sinh_(self) -> Tensor:
        return sinh_(self)

    def cosh_(self) -> Tensor:
        return cosh_(self)

    def asinh_(self) -> Tensor:
        return asinh_(self)

    arcsinh_ = asinh_

    def acosh_(self) -> Tensor:
        return acosh_(self)

    arccosh_ = acosh_

    def atanh_(self) -> Tensor:
        return atanh_(self)

    arctanh_ = atanh_

    def atan2_(self, other: Tensor) -> Tensor:
        return atan2_(self, other)

    arctan2_ = atan2_

    def hypot_(self, other: Tensor) -> Tensor:
        return hypot_(self, other)

    def erf_(self) -> Tensor:
        return erf_(self)

    def erfc_(self) -> Tensor:
        return erfc_(self)

    def exp2_(self) -> Tensor:
        return exp2_(self)

    def xlogy_(self, other: Any) -> Tensor:
        return xlogy_(self, other)

    def nan_to_num_(self, nan: builtins.float = 0.0, posinf: builtins.float | None = None,
                    neginf: builtins.float | None = None) -> Tensor:
        return nan_to_num_(self, nan, posinf, neginf)

    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcmul_(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcdiv_(self, tensor1, tensor2, value=value)

    # -- methods: shape, indexing and creation [shape] --
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_zeros(self, *size, dtype=dtype, device=device,
                                   requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_ones(self, *size, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_empty(self, *size, dtype=dtype, device=device,
                                   requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_full(self, size, fill_value, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_tensor(self, data, dtype=dtype, device=device,
                                    requires_grad=requires_grad)

    def tril(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.tril(self, diagonal)

    def triu(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.triu(self, diagonal)

    def tril_(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.tril_(self, diagonal)

    def triu_(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.triu_(self, diagonal)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return _arrange.roll(self, shifts, dims)

    def rot90(self, k: builtins.int = 1, dims: Any = (0, 1)) -> Tensor:
        return _arrange.rot90(self, k, dims)

    def diag(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.diag(self, diagonal)

    def diag_embed(self, offset: builtins.int = 0, dim1: builtins.int = -2,
                   dim2: builtins.int = -1) -> Tensor:
        return _arrange.diag_embed(self, offset, dim1, dim2)

    def trace(self) -> Tensor:
        return _arrange.trace(self)

    def tile(self, *dims: Any) -> Tensor:
        return _arrange.tile(self, *dims)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _arrange.movedim(self, source, destination)

    moveaxis = movedim

    def repeat_interleave(self, repeats: Any = None, dim: Any = None, *,
                          output_size: Any = None) -> Tensor:
        return _arrange.repeat_interleave(self, repeats, dim, output_size=output_size)

    def kron(self, other: Tensor) -> Tensor:
        return _arrange.kron(self, other)

    def masked_select(self, mask: Tensor) -> Tensor:
        return _indexing.masked_select(self, mask)

    def scatter(self, dim: builtins.int, index: Tensor, src: Any = None, *, value: Any = None,
                reduce: Any = None) -> Tensor:
        return _indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim: builtins.int, index: Tensor, src: Any = None, *, value: Any = None,
                 reduce: Any = None) -> Tensor:
        return _indexing.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add_(self, dim, index, src)

    def scatter_reduce(self, dim: builtins.int, index: Tensor, src: Tensor, reduce: str, *,
                       include_self: builtins.bool = True) -> Tensor:
        return _indexing.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: builtins.int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: builtins.bool = True) -> Tensor:
        return _indexing.scatter_reduce_(self, dim, index, src, reduce,
                                         include_self=include_self)

    def index_add(self, dim: builtins.int, index: Tensor, source: Tensor, *,
                  alpha: Any = 1) -> Tensor:
        return _indexing.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: builtins.int, index: Tensor, source: Tensor, *,
                   alpha: Any = 1) -> Tensor:
        return _indexing.index_add_(self, dim, index, source, alpha=alpha)

    def index_copy(self, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy(self, dim, index, source)

    def index_copy_(self, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy_(self, dim, index, source)

    def index_fill(self, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        return _indexing.index_fill(self, dim, index, value)

    def index_fill_(self, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        return _indexing.index_fill_(self, dim, index, value)

    def take(self, index: Tensor) -> Tensor:
        return _indexing.take(self, index)

    def take_along_dim(self, indices: Tensor, dim: Any = None) -> Tensor:
        return _indexing.take_along_dim(self, indices, dim)

    def unfold(self, dimension: builtins.int, size: builtins.int, step: builtins.int) -> Tensor:
        return _indexing.unfold(self, dimension, size, step)

    def index_put(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _indexing.index_put(self, indices, values, accumulate)

    def index_put_(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _indexing.index_put_(self, indices, values, accumulate)

    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        return _indexing.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return _indexing.masked_scatter_(self, mask, source)

    def fliplr(self) -> Tensor:
        return _arrange.fliplr(self)

    def flipud(self) -> Tensor:
        return _arrange.flipud(self)

    def ravel(self) -> Tensor:
        return _arrange.ravel(self)

    def tensor_split(self, indices_or_sections: Any, dim: builtins.int = 0) -> tuple:
        return _arrange.tensor_split(self, indices_or_sections, dim, method=True)

    def hsplit(self, indices_or_sections: Any) -> tuple:
        return _arrange.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> tuple:
        return _arrange.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> tuple:
        return _arrange.dsplit(self, indices_or_sections)

    def select_scatter(self, src: Tensor, dim: builtins.int, index: builtins.int) -> Tensor:
        return _arrange.select_scatter(self, src, dim, index)

    def slice_scatter(self, src: Tensor, dim: builtins.int = 0, start: Any = None, end: Any = None,
                      step: builtins.int = 1) -> Tensor:
        return _arrange.slice_scatter(self, src, dim, start, end, step)

    def diagonal_scatter(self, src: Tensor, offset: builtins.int = 0, dim1: builtins.int = 0,
                         dim2: builtins.int = 1) -> Tensor:
        return _arrange.diagonal_scatter(self, src, offset, dim1, dim2)

    def narrow_copy(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        return _arrange.narrow_copy(self, dim, start, length)

    def diagflat(self, offset: builtins.int = 0) -> Tensor:
        return _arrange.diagflat(self, offset)

    def argwhere(self) -> Tensor:
        return _arrange.argwhere(self)

    # -- methods: sorting, scans, reductions and products [sorting] --
    def sort(self, dim: builtins.int = -1, descending: builtins.bool = False, **stable: Any) -> Any:
        return sort(self, dim, descending, **stable)

    def argsort(self, dim: builtins.int = -1, descending: builtins.bool = False, *,
                stable: builtins.bool = False) -> Tensor:
        return argsort(self, dim, descending, stable=stable)

    def msort(self) -> Tensor:
        return msort(self)

    def topk(self, k: builtins.int, dim: builtins.int = -1, largest: builtins.bool = True,
             sorted: builtins.bool = True) -> Any:
        return topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: builtins.int, dim: builtins.int = -1,
                 keepdim: builtins.bool = False) -> Any:
        return kthvalue(self, k, dim, keepdim)

    def median(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return median(self, dim, keepdim)

    def nanmedian(self, dim: Any = None, keepdim: builtins.bool = False, *,
                  keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nanmedian(self, dim, keepdim)

    def mode(self, dim: builtins.int = -1, keepdim: builtins.bool = False) -> Any:
        return mode(self, dim, keepdim)

    def cumprod(self, dim: builtins.int, *, dtype: Any = None) -> Tensor:
        return cumprod(self, dim, dtype=dtype)

    def cummax(self, dim: builtins.int) -> Any:
        return cummax(self, dim)

    def cummin(self, dim: builtins.int) -> Any:
        return cummin(self, dim)

    def logcumsumexp(self, dim: builtins.int) -> Tensor:
        return logcumsumexp(self, dim)


    def nansum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
                keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nanmean(self, dim, keepdim, dtype=dtype)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return count_nonzero(self, dim)

    def dist(self, other: Tensor, p: builtins.float = 2) -> Tensor:
        return dist(self, other, p)

    def cross(self, other: Tensor, dim: Any = None) -> Tensor:
        return cross(self, other, dim)

    def addmv(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addbmm(self, batch1, batch2, beta=beta, alpha=alpha)


    def unique(self, sorted: builtins.bool = True, return_inverse: builtins.bool = False,
               return_counts: builtins.bool = False, dim: Any = None) -> Any:
        return unique(self, sorted, return_inverse, return_counts, dim)

    def bincount(self, weights: Any = None, minlength: builtins.int = 0) -> Tensor:
        return bincount(self, weights, minlength)

    def histc(self, bins: builtins.int = 100, min: builtins.float = 0,
              max: builtins.float = 0) -> Tensor:
        return histc(self, bins, min, max)


    def aminmax(self, *, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return aminmax(self, dim=dim, keepdim=keepdim)


    def quantile(self, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
                    interpolation: str = "linear") -> Tensor:
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)



    # -- methods: devices, sampling, testing and torch.special [device] --
    def multinomial(self, num_samples: builtins.int, replacement: builtins.bool = False, *,
                    generator: Any = None) -> Tensor:
        return _creation.tensor_multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        return _creation.bernoulli(self, p, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        return _creation.bernoulli_(self, p, generator=generator)

    def exponential_(self, lambd: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        return _creation.exponential_(self, lambd, generator=generator)

    def geometric_(self, p: builtins.float, *, generator: Any = None) -> Tensor:
        return _creation.geometric_(self, p, generator=generator)

    def log_normal_(self, mean: builtins.float = 1.0, std: builtins.float = 2.0, *,
                    generator: Any = None) -> Tensor:
        return _creation.log_normal_(self, mean, std, generator=generator)

    def cauchy_(self, median: builtins.float = 0.0, sigma: builtins.float = 1.0, *,
                generator: Any = None) -> Tensor:
        return _creation.cauchy_(self, median, sigma, generator=generator)

    def random_(self, *args: builtins.int, to: Any = None, generator: Any = None) -> Tensor:
        return _creation.random_(self, *args, to=to, generator=generator)

    def logit(self, eps: builtins.float | None = None) -> Tensor:
        return _special_ops.logit(self, eps)

    def sinc(self) -> Tensor:
        return _special_ops.sinc(self)


    # -- methods: linear algebra [linalg] --
    def inverse(self) -> Tensor:
        return _decomp().inv(self)

    def det(self) -> Tensor:
        return _decomp().det(self)

    def logdet(self) -> Tensor:
        return _decomp().logdet(self)

    def slogdet(self) -> Any:
        return _decomp().torch_slogdet(self)

    def pinverse(self, rcond: builtins.float = 1e-15) -> Tensor:
        return _decomp().pinverse(self, rcond)

    def matrix_power(self, n: builtins.int) -> Tensor:
        return _decomp().matrix_power(self, n)

    def cholesky_solve(self, input2: Tensor, upper: builtins.bool = False) -> Tensor:
        return _decomp().cholesky_solve(self, input2, upper)

    def cholesky(self, upper: builtins.bool = False) -> Tensor:
        return _decomp().torch_cholesky(self, upper)

    def svd(self, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
        return _decomp().torch_svd(self, some, compute_uv)

    def qr(self, some: builtins.bool = True) -> Any:
        return _decomp().torch_qr(self, some)


def _shape_str(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    from ._creation import scalar_tensor_like

    return scalar_tensor_like(value, like)


def current_view_grad_fn(view: Tensor) -> Any:
    return _views.refresh_view_grad_fn(view)


# The op functions the methods above delegate to.  Imported last because the
# op modules need the Tensor class defined above.
from ._ops.pointwise import (  # noqa: E402
    abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, clamp, clamp_max,
    clamp_min, cos, div, eq, exp, expm1, floor, floor_divide, fmod, frac, ge, gt, isnan, isinf,
    isfinite, le, lerp, log, log1p, log2, log10, logical_and, logical_not, logical_or,
    logical_xor, lt, masked_fill, maximum, minimum, mul, ne, neg, pow, rdiv, reciprocal, relu,
    remainder, round, rsqrt, rsub, sigmoid, sign, sin, sqrt, square, sub, tan, tanh, trunc,
    where, equal, allclose, isclose,
)
from ._ops.reduction import (  # noqa: E402
    all, amax, amin, any, argmax, argmin, cumsum, logsumexp, log_softmax, max, mean, min,
    norm, prod, softmax, std, sum, var,
)
from ._ops.linalg import bmm, dot, matmul, mm, mv, outer  # noqa: E402
from ._ops.shape import (  # noqa: E402
    chunk, clone, contiguous, detach, detach_, diagonal, expand, flatten, flip, gather,
    index_select, narrow, permute, repeat, reshape, select, split, squeeze, t, to, transpose,
    unbind, unflatten, unsqueeze, view,
)
from ._ops.indexing import getitem, nonzero, setitem  # noqa: E402
from ._ops import views as _views  # noqa: E402
from ._ops import view_inplace as _view_inplace  # noqa: E402
from ._ops.inplace import (  # noqa: E402
    add_, clamp_, copy_, div_, exp_, fill_, floor_divide_, fmod_, masked_fill_, mul_, neg_,
    normal_, pow_, relu_, remainder_, sigmoid_, sqrt_, sub_, tanh_, uniform_, zero_,
)

# imports for methods: special functions and activations [special]
from ._ops.special import (  # noqa: E402
    acos, acos_, acosh, acosh_, addcdiv, addcdiv_, addcmul, addcmul_, asin, asin_, asinh,
    asinh_, atan, atan_, atan2, atan2_, atanh, atanh_, cosh, cosh_, erf, erf_, erfc, erfc_,
    exp2, exp2_, hypot, hypot_, logaddexp, nan_to_num, nan_to_num_, sinh, sinh_, xlogy, xlogy_,
)
# imports for methods: shape, indexing and creation [shape]
from ._ops import arrange as _arrange, indexing as _indexing  # noqa: E402
from . import _creation  # noqa: E402
# imports for methods: sorting, scans, reductions and products [sorting]
from ._ops.sorting import (  # noqa: E402
    argsort, kthvalue, median, mode, msort, nanmedian, sort, topk,
)
from ._ops.reduction import cummax, cummin, cumprod, logcumsumexp  # noqa: E402
from ._ops.reduction import count_nonzero, dist, nanmean, nansum  # noqa: E402
from ._ops.linalg import addbmm, addmv, addr, baddbmm, cross  # noqa: E402
from ._ops.sorting import bincount, histc, unique  # noqa: E402
from ._ops.reduction import aminmax  # noqa: E402
from ._ops.sorting import nanquantile, quantile  # noqa: E402
# imports for methods: devices, sampling, testing and torch.special [device]
from ._ops import special as _special_ops  # noqa: E402
# imports for methods: linear algebra [linalg]


def _decomp() -> Any:
    """The linear-algebra ops' module, imported on first use (large, and rarely needed)."""
    from ._ops import decompositions

    return decompositions


# The arithmetic and comparison operators *are* the op functions (each takes the tensor
# as its first argument): one Python frame less on the hottest path of all.  Type checkers
# read their declarations in the class instead (Note [Operators for type checkers]).
if not TYPE_CHECKING:
    Tensor.__add__ = Tensor.__radd__ = add
    Tensor.__sub__ = sub
    Tensor.__rsub__ = rsub
    Tensor.__mul__ = Tensor.__rmul__ = mul
    Tensor.__truediv__ = div
    Tensor.__rtruediv__ = rdiv
    Tensor.__pow__ = pow
    Tensor.__matmul__ = matmul
    Tensor.__neg__ = neg
    Tensor.__eq__ = eq
    Tensor.__ne__ = ne
    Tensor.__lt__ = lt
    Tensor.__le__ = le
    Tensor.__gt__ = gt
    Tensor.__ge__ = ge
