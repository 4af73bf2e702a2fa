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
from typing import TYPE_CHECKING, Any, Iterator, Union

import numpy as np

from . import _dtype
from ._mode import _tls, GRAD, INFERENCE
from ._size import Size
from ._vmap_mode import VMAP, check_batched_write, check_control_flow, check_item
from ._storage import (TypedStorage, UntypedStorage, deepcopy_array, root_of, storage_offset,
                       untyped_storage_of, warn_typed_storage)
from ._ops._shape_util import NO_DIM, wrap_dim
from ._ops.signature import bind_tensor_class, checker, method_signature, renamed, unchecked
from ._tensor_base import (INFERENCE_COUNTER, TensorBase, TensorExtra, VersionCounter,
                           _make, bind_tensor_class as bind_base_class)
from ._ops.pointwise import (
    abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, clamp, clamp_max,
    clamp_min, cos, div, eq, exp, expm1, floor, floor_divide, fmod, frac, ge, gt, isnan, isinf,
    isfinite, le, lerp, log, log1p, log2, log10, logical_and, logical_not, logical_or,
    logical_xor, lt, masked_fill, maximum, minimum, mul, ne, neg, pow, rdiv, reciprocal, relu,
    remainder, round, rsqrt, rsub, sigmoid, sign, sin, sqrt, square, sub, tan, tanh, trunc,
    where, equal, allclose, isclose, ROUNDING_MODE_NOT_GIVEN,
)
from ._ops.reduction import (
    all, amax, amin, any, argmax, argmin, cumsum, logsumexp, max, mean, min,
    norm, prod, std, sum, var,
)
from ._ops.softmax import log_softmax, softmax
from ._ops.matmul import bmm, dot, matmul, mm, mv, outer
from ._ops.shape import (
    chunk, clone, contiguous, detach, detach_, diagonal, expand, flatten, flip,
    narrow, permute, repeat, reshape, select, split, squeeze, t, to, transpose,
    unbind, unflatten, unsqueeze, view,
)
from ._ops.indexing import gather, getitem, index_select, nonzero, setitem
from ._ops import views as _views
from ._ops import view_inplace as _view_inplace
from ._ops import as_strided as _as_strided
from ._ops import sparse as _sparse_ops
from ._ops import complex as _complex_ops
from ._ops.inplace import (
    add_, clamp_, copy_, div_, exp_, fill_, floor_divide_, fmod_, masked_fill_, mul_, neg_,
    normal_, pow_, relu_, remainder_, sigmoid_, sqrt_, sub_, tanh_, uniform_, zero_,
)

# imports for methods: special functions and activations [special]
from ._ops.special import (
    acos, acos_, acosh, acosh_, addcdiv, addcdiv_, addcmul, addcmul_, asin, asin_, asinh,
    asinh_, atan, atan_, atan2, atan2_, atanh, atanh_, cosh, cosh_, erf, erf_, erfc, erfc_,
    exp2, exp2_, hypot, hypot_, logaddexp, nan_to_num, nan_to_num_, sinh, sinh_, xlogy, xlogy_,
)
# imports for methods: shape, indexing and creation [shape]
from ._ops import arrange as _arrange, indexing as _indexing
from . import _creation
# imports for methods: sorting, scans, reductions and products [sorting]
from ._ops.sorting import (
    argsort, kthvalue, median, mode, msort, nanmedian, sort, topk,
)
from ._ops.reduction import cummax, cummin, cumprod, logcumsumexp
from ._ops.reduction import count_nonzero, nanmean, nansum
from ._ops.distance import dist
from ._ops.matmul import addbmm, addmv, addr, baddbmm, cross
from ._ops.sorting import bincount, histc, unique
from ._ops.reduction import aminmax
from ._ops.sorting import nanquantile, quantile
# imports for methods: devices, sampling, testing and torch.special [device]
from ._ops import special as _special_ops
from ._ops._core import binary_operator
from ._ops.operators import TENSOR_TYPES, operator, reflected_operator
from ._ops.pointwise import AddBackward0, MulBackward0, SubBackward0


# What an operator accepts besides a tensor: a Python number (torch's ``Number``).
_Operand = Union["Tensor", int, float, bool, complex]


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


class Tensor(TensorBase):
    """A multi-dimensional array that can record the operations applied to it.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.], requires_grad=True)
    >>> y = x * 2
    >>> y
    tensor([2.], grad_fn=<MulBackward0>)
    """

    __slots__ = ()  # the slots are TensorBase's (Note [Tensor base and Tensor])
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
        def __rpow__(self, base: _Operand) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: _Operand) -> Tensor: ...
        def __rfloordiv__(self, other: _Operand) -> Tensor: ...
        def __mod__(self, other: _Operand) -> Tensor: ...
        def __rmod__(self, other: _Operand) -> Tensor: ...
        def __and__(self, other: _Operand) -> Tensor: ...
        def __rand__(self, other: _Operand) -> Tensor: ...
        def __or__(self, other: _Operand) -> Tensor: ...
        def __ror__(self, other: _Operand) -> Tensor: ...
        def __xor__(self, other: _Operand) -> Tensor: ...
        def __rxor__(self, other: _Operand) -> Tensor: ...
        def __iadd__(self, other: _Operand) -> Tensor: ...
        def __isub__(self, other: _Operand) -> Tensor: ...
        def __imul__(self, other: _Operand) -> Tensor: ...
        def __itruediv__(self, other: _Operand) -> Tensor: ...
        def __ipow__(self, other: _Operand) -> Tensor: ...
        def __ifloordiv__(self, other: _Operand) -> Tensor: ...
        def __imod__(self, other: _Operand) -> Tensor: ...

    def _refreshed_grad_fn(self) -> Any:
        """A view's grad_fn, rebuilt if its base changed (for the graph layer, which cannot
        import the view machinery of the op layer above it)."""
        return _views.refresh_view_grad_fn(self)

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
        if value and self._data.dtype.kind not in "fVc":  # "V": bfloat16
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = value

    @method_signature("requires_grad_(bool requires_grad=True)")
    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(LEAF_REQUIRES_GRAD_MSG)
            return self
        if requires_grad and self._data.dtype.kind not in "fVc":  # "V": bfloat16
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._vc is INFERENCE_COUNTER and not _tls.mode & INFERENCE:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        if self._base is not None:
            return _views.refresh_view_grad_fn(self)
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

    @method_signature("retain_grad()")
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

    @method_signature("is_inference()")
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
        if type(dim) is not builtins.int:  # kept off the hot path: torch's parser's check
            _SIZE_ARGS(dim)
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
        return _sparse_ops.STRIDED

    @method_signature("dim()")
    def dim(self) -> builtins.int:
        return self._data.ndim

    ndimension = renamed(dim, "ndimension")

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    @method_signature("numel()")
    def numel(self) -> builtins.int:
        return self._data.size

    nelement = renamed(numel, "nelement")

    @method_signature("element_size()")
    def element_size(self) -> builtins.int:
        return self._data.itemsize

    def stride(self, dim: builtins.int | None = None) -> Any:
        if dim is not None and type(dim) is not builtins.int:
            _STRIDE_ARGS(dim)
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

    @method_signature("is_contiguous(*, MemoryFormat memory_format=torch.contiguous_format)")
    def is_contiguous(self, memory_format: Any = None) -> builtins.bool:
        return self._data.flags.c_contiguous

    @method_signature("is_floating_point()")
    def is_floating_point(self) -> builtins.bool:
        return self._data.dtype.kind in "fV"  # "V": bfloat16 (Note [bfloat16 storage])

    @method_signature("is_complex()")
    def is_complex(self) -> builtins.bool:
        return self._data.dtype.kind == "c"

    # -- complex numbers (npgrad._ops.complex) ----------------------------------
    @property
    def real(self) -> Tensor:
        return _complex_ops.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        _complex_ops.set_part(self, value, _complex_ops.real)

    @property
    def imag(self) -> Tensor:
        return _complex_ops.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        _complex_ops.set_part(self, value, _complex_ops.imag)

    @method_signature("conj()")
    def conj(self) -> Tensor:
        return _complex_ops.conj(self)

    @method_signature("conj_physical()")
    def conj_physical(self) -> Tensor:
        return _complex_ops.conj_physical(self)

    @method_signature("resolve_conj()")
    def resolve_conj(self) -> Tensor:
        return _complex_ops.resolve_conj(self)

    @method_signature("resolve_neg()")
    def resolve_neg(self) -> Tensor:
        return self

    @method_signature("is_conj()")
    def is_conj(self) -> builtins.bool:
        return _complex_ops.is_conj(self)

    @method_signature("is_neg()")
    def is_neg(self) -> builtins.bool:
        return False

    @method_signature("angle()")
    def angle(self) -> Tensor:
        return _complex_ops.angle(self)

    @method_signature("sgn()")
    def sgn(self) -> Tensor:
        return _complex_ops.sgn(self)

    def __complex__(self) -> builtins.complex:
        self._scalar_warning()
        return complex(self.item())

    def data_ptr(self) -> builtins.int:
        return self._data.__array_interface__["data"][0]

    # -- layouts: what a dense tensor answers (SparseTensor overrides each) -------
    @property
    def is_sparse(self) -> builtins.bool:
        return False

    @method_signature("to_dense(ScalarType? dtype=None, *, bool? masked_grad=None)")
    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        return self

    def to_sparse(self, sparse_dim: Any = None, *, layout: Any = None, blocksize: Any = None,
                  dense_dim: Any = None) -> Tensor:
        return _sparse_ops.to_sparse(self, sparse_dim, layout=layout)

    def to_sparse_coo(self) -> Tensor:
        return _sparse_ops.to_sparse(self)

    def coalesce(self) -> Tensor:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def is_coalesced(self) -> builtins.bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "Strided")

    def indices(self) -> Tensor:
        raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")

    def values(self) -> Tensor:
        raise RuntimeError("values expected sparse tensor layout but got Strided")

    def _indices(self) -> Tensor:
        raise _sparse_ops.dense_unsupported("_indices")

    def _values(self) -> Tensor:
        raise _sparse_ops.dense_unsupported("_values")

    def _nnz(self) -> builtins.int:
        raise _sparse_ops.dense_unsupported("_nnz")

    @method_signature("sparse_dim()")
    def sparse_dim(self) -> builtins.int:
        return 0

    @method_signature("dense_dim()")
    def dense_dim(self) -> builtins.int:
        return self._data.ndim

    def untyped_storage(self) -> UntypedStorage:
        return untyped_storage_of(root_of(self._data))

    def storage(self) -> TypedStorage:
        warn_typed_storage()
        return TypedStorage(root_of(self._data), self.dtype)

    @method_signature("storage_offset()")
    def storage_offset(self) -> builtins.int:
        return storage_offset(self._data)

    # -- conversion to Python and NumPy ---------------------------------------
    @method_signature("item()")
    def item(self) -> Any:
        if VMAP.depth:
            check_item(self)
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    @method_signature("tolist()")
    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self, *args: Any, **kwargs: Any) -> np.ndarray:
        force = False
        if args or kwargs:  # torch's parser of ``numpy(*, bool force=False)``, in its words
            if args:
                n = len(args)
                raise TypeError(f"numpy() takes 0 positional arguments but {n} "
                                f"{'was' if n == 1 else 'were'} given")
            for key in kwargs:
                if key != "force":
                    raise TypeError(f"numpy() got an unexpected keyword argument '{key}'")
            force = kwargs["force"]
            if not isinstance(force, builtins.bool):
                raise TypeError(f"numpy(): argument 'force' must be bool, not "
                                f"{type(force).__name__}")
        # as torch: refused only while grad mode is on (under no_grad it is allowed)
        if self._requires_grad and not force and _tls.mode & GRAD:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _complex_ops.check_numpy(self)
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._requires_grad and _tls.mode & GRAD:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data if dtype is None else self._data.astype(dtype)

    def _scalar_warning(self) -> None:
        """What ``float(t)``, ``int(t)`` and ``complex(t)`` check first: the element count
        (Python's conversions raise ValueError in torch, unlike ``item()``), then the flag."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=3)

    def __float__(self) -> builtins.float:
        self._scalar_warning()
        return float(_complex_ops.real_scalar(self.item(), "double"))

    def __int__(self) -> builtins.int:
        self._scalar_warning()
        return int(_complex_ops.real_scalar(self.item(), "int64_t"))

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._data.reshape(()).item())

    def __bool__(self) -> builtins.bool:
        if VMAP.depth:
            check_control_flow(self)
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
    @method_signature("detach()")
    def detach(self) -> Tensor:
        return detach(self)

    @method_signature("detach_()")
    def detach_(self) -> Tensor:
        return detach_(self)

    @method_signature("clone(*, MemoryFormat? memory_format=None)")
    def clone(self, *, memory_format: Any = None) -> Tensor:
        return clone(self)

    @method_signature("contiguous(*, MemoryFormat memory_format=c10::MemoryFormat::Contiguous)")
    def contiguous(self, memory_format: Any = None) -> Tensor:
        return contiguous(self)

    # -- dtype conversion -----------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return to(self, *args, **kwargs)

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False, **kwargs: Any) -> Any:
        from ._legacy_tensor import tensor_type  # above the Tensor (Note [Legacy tensor types])

        return tensor_type(self, dtype, non_blocking, **kwargs)

    @method_signature("type_as(Tensor other)")
    def type_as(self, other: Tensor) -> Tensor:
        return to(self, other.dtype)

    @method_signature("float(*, MemoryFormat memory_format=torch.preserve_format)")
    def float(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.float32)

    @method_signature("double(*, MemoryFormat memory_format=torch.preserve_format)")
    def double(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.float64)

    @method_signature("half(*, MemoryFormat memory_format=torch.preserve_format)")
    def half(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.float16)

    @method_signature("long(*, MemoryFormat memory_format=torch.preserve_format)")
    def long(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.int64)

    @method_signature("int(*, MemoryFormat memory_format=torch.preserve_format)")
    def int(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.int32)

    @method_signature("short(*, MemoryFormat memory_format=torch.preserve_format)")
    def short(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.int16)

    @method_signature("char(*, MemoryFormat memory_format=torch.preserve_format)")
    def char(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.int8)

    @method_signature("byte(*, MemoryFormat memory_format=torch.preserve_format)")
    def byte(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.uint8)

    @method_signature("bool(*, MemoryFormat memory_format=torch.preserve_format)")
    def bool(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.bool_)

    @method_signature("bfloat16(*, MemoryFormat memory_format=torch.preserve_format)")
    def bfloat16(self, memory_format: Any = None) -> Tensor:
        return to(self, _dtype.bfloat16)

    @method_signature("cpu(*, MemoryFormat memory_format=torch.preserve_format)")
    def cpu(self, memory_format: Any = None) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False,
             memory_format: Any = None) -> Tensor:
        from ._device import check_cuda_device

        check_cuda_device(device)  # always raises: a CPU build has no CUDA
        return self

    @method_signature("get_device()")
    def get_device(self) -> builtins.int:
        return -1

    @method_signature("is_pinned(Device? device=None)")
    def is_pinned(self, device: Any = None) -> builtins.bool:
        return False

    @method_signature("histogram(Tensor bins, *, Tensor? weight=None, bool density=False)",
                      "histogram(int64_t bins=100, *, ArrayRef<double>? range=None, "
                      "Tensor? weight=None, bool density=False)")
    def histogram(self, bins: Any = 100, *, range: Any = None,  # noqa: A002
                  weight: Any = None, density: builtins.bool = False) -> Any:
        from ._histogram import histogram  # loaded on first use, as torch.histogram is

        return histogram(self, bins, range=range, weight=weight, density=density)

    # -- arithmetic operators -------------------------------------------------




    @method_signature("positive()")  # torch's ``+`` is its ``positive``
    def __pos__(self) -> Tensor:
        if self._data.dtype.kind == "b":
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    @method_signature("__invert__()")
    def __invert__(self) -> Tensor:
        if self._data.dtype.kind not in "iub":  # torch's operator refuses before bitwise_not
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return bitwise_not(self)


    # -- in-place operators ---------------------------------------------------

    def __getitem__(self, index: Any) -> Tensor:
        return getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if VMAP.depth:
            check_batched_write(self, value, "copy_", index)
        setitem(self, index, value)

    # -- pointwise methods ----------------------------------------------------
    @method_signature("add(Tensor other, *, Scalar alpha=1)",
                      "add(Scalar alpha, Tensor other)|deprecated")
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add(self, other, alpha=alpha)

    @method_signature("sub(Tensor other, *, Scalar alpha=1)",
                      "sub(Scalar alpha, Tensor other)|deprecated")
    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return sub(self, other, alpha=alpha)

    @method_signature("subtract(Tensor other, *, Scalar alpha=1)",
                      "subtract(Scalar other, Scalar alpha=1)")
    def subtract(self, other: Any, alpha: Any = 1) -> Tensor:
        return sub(self, other, alpha=alpha)

    @method_signature("mul(Tensor other)")
    def mul(self, other: Any) -> Tensor:
        return mul(self, other)

    multiply = renamed(mul, "multiply", "multiply(Tensor other)", "multiply(Scalar other)")

    @method_signature("div(Tensor other)",
                      "div(Tensor other, *, c10::string_view? rounding_mode)",
                      "div(Scalar other, *, c10::string_view? rounding_mode)")
    def div(self, other: Any, *, rounding_mode: str | None = ROUNDING_MODE_NOT_GIVEN) -> Tensor:
        return div(self, other, rounding_mode=rounding_mode)

    divide = true_divide = div

    @method_signature("floor_divide(Tensor other)",
                      "floor_divide(Scalar other)")
    def floor_divide(self, other: Any) -> Tensor:
        return floor_divide(self, other)

    @method_signature("remainder(Tensor other)",
                      "remainder(Scalar other)")
    def remainder(self, other: Any) -> Tensor:
        return remainder(self, other)

    @method_signature("fmod(Tensor other)",
                      "fmod(Scalar other)")
    def fmod(self, other: Any) -> Tensor:
        return fmod(self, other)

    @method_signature("neg()")
    def neg(self) -> Tensor:
        return neg(self)

    negative = renamed(neg, "negative")

    @method_signature("pow(Tensor exponent)",
                      "pow(Scalar exponent)")
    def pow(self, exponent: Any) -> Tensor:
        return pow(self, exponent)

    @method_signature("square()")
    def square(self) -> Tensor:
        return square(self)

    @method_signature("reciprocal()")
    def reciprocal(self) -> Tensor:
        return reciprocal(self)

    @method_signature("abs()")
    def abs(self) -> Tensor:
        return abs(self)

    __abs__ = abs  # torch's ``abs(t)`` is its ``abs`` method

    absolute = renamed(abs, "absolute")

    @method_signature("sign()")
    def sign(self) -> Tensor:
        return sign(self)

    @method_signature("exp()")
    def exp(self) -> Tensor:
        return exp(self)

    @method_signature("log()")
    def log(self) -> Tensor:
        return log(self)

    @method_signature("log2()")
    def log2(self) -> Tensor:
        return log2(self)

    @method_signature("log10()")
    def log10(self) -> Tensor:
        return log10(self)

    @method_signature("log1p()")
    def log1p(self) -> Tensor:
        return log1p(self)

    @method_signature("expm1()")
    def expm1(self) -> Tensor:
        return expm1(self)

    @method_signature("sqrt()")
    def sqrt(self) -> Tensor:
        return sqrt(self)

    @method_signature("rsqrt()")
    def rsqrt(self) -> Tensor:
        return rsqrt(self)

    @method_signature("sin()")
    def sin(self) -> Tensor:
        return sin(self)

    @method_signature("cos()")
    def cos(self) -> Tensor:
        return cos(self)

    @method_signature("tan()")
    def tan(self) -> Tensor:
        return tan(self)

    @method_signature("tanh()")
    def tanh(self) -> Tensor:
        return tanh(self)

    @method_signature("sigmoid()")
    def sigmoid(self) -> Tensor:
        return sigmoid(self)

    @method_signature("relu()")
    def relu(self) -> Tensor:
        return relu(self)

    @method_signature("clamp(Tensor? min=None, Tensor? max=None)",
                      "clamp(Scalar? min=None, Scalar? max=None)")
    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return clamp(self, min, max)

    clip = renamed(clamp, "clip")

    @method_signature("clamp_min(Tensor min)",
                      "clamp_min(Scalar min)")
    def clamp_min(self, min: Any) -> Tensor:
        return clamp_min(self, min)

    @method_signature("clamp_max(Tensor max)",
                      "clamp_max(Scalar max)")
    def clamp_max(self, max: Any) -> Tensor:
        return clamp_max(self, max)

    @method_signature("maximum(Tensor other)")
    def maximum(self, other: Tensor) -> Tensor:
        return maximum(self, other)

    @method_signature("minimum(Tensor other)")
    def minimum(self, other: Tensor) -> Tensor:
        return minimum(self, other)

    @method_signature("where(Tensor condition, Tensor other)",
                      "where(Tensor condition, Scalar other)")
    def where(self, condition: Tensor, other: Any) -> Tensor:
        return where(condition, self, other)

    @method_signature("masked_fill(Tensor mask, Tensor value)",
                      "masked_fill(Tensor mask, Scalar value)")
    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return masked_fill(self, mask, value)

    @method_signature("lerp(Tensor end, Tensor weight)",
                      "lerp(Tensor end, Scalar weight)")
    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        return lerp(self, end, weight)

    @method_signature("floor()")
    def floor(self) -> Tensor:
        return floor(self)

    @method_signature("ceil()")
    def ceil(self) -> Tensor:
        return ceil(self)

    @method_signature("round()",
                      "round(*, int64_t decimals)")
    def round(self, *, decimals: builtins.int = 0) -> Tensor:
        return round(self, decimals=decimals)

    @method_signature("trunc()")
    def trunc(self) -> Tensor:
        return trunc(self)

    @method_signature("frac()")
    def frac(self) -> Tensor:
        return frac(self)

    @method_signature("eq(Tensor other)",
                      "eq(Scalar other)")
    def eq(self, other: Any) -> Tensor:
        return eq(self, other)

    @method_signature("ne(Tensor other)",
                      "ne(Scalar other)")
    def ne(self, other: Any) -> Tensor:
        return ne(self, other)

    @method_signature("lt(Tensor other)",
                      "lt(Scalar other)")
    def lt(self, other: Any) -> Tensor:
        return lt(self, other)

    @method_signature("le(Tensor other)",
                      "le(Scalar other)")
    def le(self, other: Any) -> Tensor:
        return le(self, other)

    @method_signature("gt(Tensor other)",
                      "gt(Scalar other)")
    def gt(self, other: Any) -> Tensor:
        return gt(self, other)

    @method_signature("ge(Tensor other)",
                      "ge(Scalar other)")
    def ge(self, other: Any) -> Tensor:
        return ge(self, other)

    @method_signature("equal(Tensor other)")
    def equal(self, other: Tensor) -> builtins.bool:
        return equal(self, other)

    @method_signature("allclose(Tensor other, double rtol=1e-05, double atol=1e-08, "
                      "bool equal_nan=False)")
    def allclose(self, other: Tensor, rtol: builtins.float = 1e-05, atol: builtins.float = 1e-08,
                 equal_nan: builtins.bool = False) -> builtins.bool:
        return allclose(self, other, rtol, atol, equal_nan)

    @method_signature("isclose(Tensor other, double rtol=1e-05, double atol=1e-08, "
                      "bool equal_nan=False)")
    def isclose(self, other: Tensor, rtol: builtins.float = 1e-05, atol: builtins.float = 1e-08,
                equal_nan: builtins.bool = False) -> Tensor:
        return isclose(self, other, rtol, atol, equal_nan)

    @method_signature("isnan()")
    def isnan(self) -> Tensor:
        return isnan(self)

    @method_signature("isinf()")
    def isinf(self) -> Tensor:
        return isinf(self)

    @method_signature("isfinite()")
    def isfinite(self) -> Tensor:
        return isfinite(self)

    @method_signature("logical_and(Tensor other)")
    def logical_and(self, other: Tensor) -> Tensor:
        return logical_and(self, other)

    @method_signature("logical_or(Tensor other)")
    def logical_or(self, other: Tensor) -> Tensor:
        return logical_or(self, other)

    @method_signature("logical_xor(Tensor other)")
    def logical_xor(self, other: Tensor) -> Tensor:
        return logical_xor(self, other)

    @method_signature("logical_not()")
    def logical_not(self) -> Tensor:
        return logical_not(self)

    # -- reductions -----------------------------------------------------------
    @method_signature("sum(*, ScalarType? dtype=None)",
                      "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)")
    def sum(self, dim: Any = NO_DIM, keepdim: builtins.bool = False, *, dtype: Any = None,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return sum(self, dim, keepdim, dtype=dtype)

    @method_signature("mean(*, ScalarType? dtype=None)",
                      "mean(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)")
    def mean(self, dim: Any = NO_DIM, keepdim: builtins.bool = False, *, dtype: Any = None,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return mean(self, dim, keepdim, dtype=dtype)

    @method_signature("prod(*, ScalarType? dtype=None)",
                      "prod(int64_t dim, bool keepdim=False, *, ScalarType? dtype=None)")
    def prod(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return prod(self, dim, keepdim, dtype=dtype)

    @method_signature("amax(IntArrayRef[1] dim=None, bool keepdim=False)")
    def amax(self, dim: Any = (), keepdim: builtins.bool = False, *,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return amax(self, dim, keepdim)

    @method_signature("amin(IntArrayRef[1] dim=None, bool keepdim=False)")
    def amin(self, dim: Any = (), keepdim: builtins.bool = False, *,
             keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return amin(self, dim, keepdim)

    @method_signature("max()",
                      "max(Tensor other)",
                      "max(int64_t dim, bool keepdim=False)")
    def max(self, dim: Any = None, keepdim: builtins.bool = False, *, keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return max(self, dim, keepdim)

    @method_signature("min()",
                      "min(Tensor other)",
                      "min(int64_t dim, bool keepdim=False)")
    def min(self, dim: Any = None, keepdim: builtins.bool = False, *, keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return min(self, dim, keepdim)

    @method_signature("var(IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
                      "var(IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
                      "bool keepdim=False)",
                      "var(bool unbiased=True)")
    def var(self, dim: Any = NO_DIM, unbiased: Any = None, keepdim: builtins.bool = False, *,
            correction: Any = None, keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return var(self, dim, unbiased, keepdim, correction=correction)

    @method_signature("std(IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
                      "std(IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
                      "bool keepdim=False)",
                      "std(bool unbiased=True)")
    def std(self, dim: Any = NO_DIM, unbiased: Any = None, keepdim: builtins.bool = False, *,
            correction: Any = None, keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return std(self, dim, unbiased, keepdim, correction=correction)

    @method_signature("logsumexp(IntArrayRef[1] dim, bool keepdim=False)")
    def logsumexp(self, dim: Any, keepdim: builtins.bool = False, *,
                  keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return logsumexp(self, dim, keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False,
             dtype: Any = None) -> Tensor:
        return norm(self, p, dim, keepdim, dtype)

    @method_signature("argmax(int64_t? dim=None, bool keepdim=False)")
    def argmax(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return argmax(self, dim, keepdim)

    @method_signature("argmin(int64_t? dim=None, bool keepdim=False)")
    def argmin(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return argmin(self, dim, keepdim)

    @method_signature("all()",
                      "all(IntArrayRef? dim=None, bool keepdim=False)",
                      "all(int64_t dim, bool keepdim=False)")
    def all(self, dim: Any = None, keepdim: builtins.bool = False, *,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return all(self, dim, keepdim)

    @method_signature("any()",
                      "any(IntArrayRef? dim=None, bool keepdim=False)",
                      "any(int64_t dim, bool keepdim=False)")
    def any(self, dim: Any = None, keepdim: builtins.bool = False, *,
            keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return any(self, dim, keepdim)

    @method_signature("cumsum(int64_t dim, *, ScalarType? dtype=None)")
    def cumsum(self, dim: builtins.int, *, dtype: Any = None) -> Tensor:
        return cumsum(self, dim, dtype=dtype)

    @method_signature("softmax(int64_t dim, ScalarType? dtype=None)")
    def softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        return softmax(self, dim, dtype)

    @method_signature("log_softmax(int64_t dim, ScalarType? dtype=None)")
    def log_softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        return log_softmax(self, dim, dtype)

    # -- linear algebra -------------------------------------------------------
    @method_signature("matmul(Tensor other)")
    def matmul(self, other: Tensor) -> Tensor:
        return matmul(self, other)

    @method_signature("mm(Tensor mat2)")
    def mm(self, mat2: Tensor) -> Tensor:
        return mm(self, mat2)

    @method_signature("bmm(Tensor mat2)")
    def bmm(self, mat2: Tensor) -> Tensor:
        return bmm(self, mat2)

    @method_signature("mv(Tensor vec)")
    def mv(self, vec: Tensor) -> Tensor:
        return mv(self, vec)

    @method_signature("dot(Tensor tensor)")
    def dot(self, other: Tensor) -> Tensor:
        return dot(self, other)

    @method_signature("outer(Tensor vec2)")
    def outer(self, vec2: Tensor) -> Tensor:
        return outer(self, vec2)

    @method_signature("t()")
    def t(self) -> Tensor:
        return t(self)

    @property
    def T(self) -> Tensor:
        return permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim == 0:  # torch still accepts a 0-D tensor: itself, with a warning
            warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the "
                          "identity in these cases. (Triggered internally at /__w/pytorch/"
                          "pytorch/aten/src/ATen/native/TensorShape.cpp:4373.)", UserWarning,
                          stacklevel=2)
            return self
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of "
                               f"matrices. Got {self._data.ndim}-D tensor.")
        return transpose(self, -2, -1)

    @property
    def mH(self) -> Tensor:
        if self._data.ndim == 0:
            warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj(). "
                          "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          "TensorShape.cpp:4382.)", UserWarning, stacklevel=2)
            return self.conj()
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of "
                               f"matrices. Got {self._data.ndim}-D tensor.")
        return transpose(self, -2, -1).conj()

    @property
    def H(self) -> Tensor:
        nd = self._data.ndim
        if nd == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj(). "
                          "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          "TensorShape.cpp:4335.)", UserWarning, stacklevel=2)
            return self.conj()
        if nd != 2:
            hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{nd}-D tensor.{hint}")
        return transpose(self, -2, -1).conj()

    @method_signature("adjoint()")
    def adjoint(self) -> Tensor:
        if self._data.ndim == 0:
            warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj(). "
                          "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          "TensorShape.cpp:4390.)", UserWarning, stacklevel=2)
            return self.conj()
        if self._data.ndim < 2:
            raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                               f"matrices. Got {self._data.ndim}-D tensor.")
        return transpose(self, -2, -1).conj()

    # -- shape ------------------------------------------------------------------
    @method_signature("view(ScalarType dtype)",
                      "view(SymIntArrayRef size)")
    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise NotImplementedError("view(dtype) is not supported by npgrad")
        return view(self, *shape)

    @method_signature("view_as(Tensor other)")
    def view_as(self, other: Tensor) -> Tensor:
        return view(self, other._data.shape)

    @method_signature("reshape(SymIntArrayRef shape)")
    def reshape(self, *shape: Any) -> Tensor:
        return reshape(self, *shape)

    @method_signature("reshape_as(Tensor other)")
    def reshape_as(self, other: Tensor) -> Tensor:
        return reshape(self, other._data.shape)

    @method_signature("flatten(int64_t start_dim=0, int64_t end_dim=-1)")
    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: builtins.int, sizes: Any) -> Tensor:
        # torch's Python method tests ``sizes`` before its parser sees the arguments
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        _UNFLATTEN_ARGS(dim, sizes)
        return unflatten(self, dim, sizes)

    @method_signature("squeeze()",
                      "squeeze(int64_t dim)",
                      "squeeze(IntArrayRef dim)")
    def squeeze(self, dim: Any = None) -> Tensor:
        return squeeze(self, dim)

    @method_signature("unsqueeze(int64_t dim)")
    def unsqueeze(self, dim: builtins.int) -> Tensor:
        return unsqueeze(self, dim)

    @method_signature("transpose(int64_t dim0, int64_t dim1)")
    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return transpose(self, dim0, dim1)

    # aliases, checked under their own names (torch's messages name the alias)
    swapaxes = method_signature("swapaxes(int64_t axis0, int64_t axis1)")(unchecked(transpose))
    swapdims = method_signature("swapdims(int64_t dim0, int64_t dim1)")(unchecked(transpose))

    @method_signature("transpose_(int64_t dim0, int64_t dim1)")
    def transpose_(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return _view_inplace.transpose_(self, dim0, dim1)

    @method_signature("as_strided(SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)")
    def as_strided(self, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
        return _as_strided.as_strided(self, size, stride, storage_offset)

    @method_signature("as_strided_(SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)")
    def as_strided_(self, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
        return _as_strided.as_strided_(self, size, stride, storage_offset)

    swapaxes_ = method_signature("swapaxes_(int64_t axis0, int64_t axis1)")(unchecked(transpose_))
    swapdims_ = method_signature("swapdims_(int64_t dim0, int64_t dim1)")(unchecked(transpose_))

    @method_signature("t_()")
    def t_(self) -> Tensor:
        return _view_inplace.t_(self)

    @method_signature("squeeze_()",
                      "squeeze_(int64_t dim)",
                      "squeeze_(IntArrayRef dim)")
    def squeeze_(self, dim: Any = None) -> Tensor:
        return _view_inplace.squeeze_(self, dim)

    @method_signature("unsqueeze_(int64_t dim)")
    def unsqueeze_(self, dim: builtins.int) -> Tensor:
        return _view_inplace.unsqueeze_(self, dim)

    @method_signature("permute(IntArrayRef dims)")
    def permute(self, *dims: Any) -> Tensor:
        return permute(self, *dims)

    @method_signature("expand(SymIntArrayRef size, *, bool implicit=False)")
    def expand(self, *sizes: Any) -> Tensor:
        return expand(self, *sizes)

    @method_signature("expand_as(Tensor other)")
    def expand_as(self, other: Tensor) -> Tensor:
        return expand(self, other._data.shape)

    @method_signature("broadcast_to(SymIntArrayRef size)")
    def broadcast_to(self, size: Any) -> Tensor:
        return expand(self, size)

    @method_signature("repeat(SymIntArrayRef repeats)")
    def repeat(self, *sizes: Any) -> Tensor:
        return repeat(self, *sizes)

    def split(self, split_size: Any, dim: builtins.int = 0) -> tuple:
        return split(self, split_size, dim)

    @method_signature("chunk(int64_t chunks, int64_t dim=0)")
    def chunk(self, chunks: builtins.int, dim: builtins.int = 0) -> tuple:
        return chunk(self, chunks, dim)

    @method_signature("unbind(int64_t dim=0)")
    def unbind(self, dim: builtins.int = 0) -> tuple:
        return unbind(self, dim)

    @method_signature("narrow(int64_t dim, Tensor start, SymInt length)",
                      "narrow(int64_t dim, SymInt start, SymInt length)")
    def narrow(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        return narrow(self, dim, start, length)

    @method_signature("select(int64_t dim, SymInt index)")
    def select(self, dim: builtins.int, index: builtins.int) -> Tensor:
        return select(self, dim, index)

    @method_signature("flip(IntArrayRef dims)")
    def flip(self, *dims: Any) -> Tensor:
        return flip(self, *dims)

    @method_signature("diagonal(int64_t offset=0, int64_t dim1=0, int64_t dim2=1)")
    def diagonal(self, offset: builtins.int = 0, dim1: builtins.int = 0,
                 dim2: builtins.int = 1) -> Tensor:
        return diagonal(self, offset, dim1, dim2)

    @method_signature("gather(int64_t dim, Tensor index, *, bool sparse_grad=False)")
    def gather(self, dim: builtins.int, index: Tensor) -> Tensor:
        return gather(self, dim, index)

    @method_signature("index_select(int64_t dim, Tensor index)")
    def index_select(self, dim: builtins.int, index: Tensor) -> Tensor:
        return index_select(self, dim, index)

    @method_signature("nonzero()", "nonzero(*, bool as_tuple)")
    def nonzero(self, *, as_tuple: builtins.bool = False) -> Any:
        return nonzero(self, as_tuple=as_tuple)

    # -- in-place methods -------------------------------------------------------
    @method_signature("add_(Tensor other, *, Scalar alpha=1)",
                      "add_(Scalar alpha, Tensor other)|deprecated")
    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add_(self, other, alpha=alpha)

    @method_signature("sub_(Tensor other, *, Scalar alpha=1)",
                      "sub_(Scalar alpha, Tensor other)|deprecated")
    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return sub_(self, other, alpha=alpha)

    @method_signature("mul_(Tensor other)")
    def mul_(self, other: Any) -> Tensor:
        return mul_(self, other)

    @method_signature("div_(Tensor other)",
                      "div_(Tensor other, *, c10::string_view? rounding_mode)",
                      "div_(Scalar other, *, c10::string_view? rounding_mode)")
    def div_(self, other: Any, *, rounding_mode: str | None = ROUNDING_MODE_NOT_GIVEN) -> Tensor:
        return div_(self, other, rounding_mode=rounding_mode)

    @method_signature("floor_divide_(Tensor other)",
                      "floor_divide_(Scalar other)")
    def floor_divide_(self, other: Any) -> Tensor:
        return floor_divide_(self, other)

    @method_signature("remainder_(Tensor other)",
                      "remainder_(Scalar other)")
    def remainder_(self, other: Any) -> Tensor:
        return remainder_(self, other)

    @method_signature("fmod_(Tensor other)",
                      "fmod_(Scalar other)")
    def fmod_(self, other: Any) -> Tensor:
        return fmod_(self, other)

    @method_signature("pow_(Tensor exponent)",
                      "pow_(Scalar exponent)")
    def pow_(self, exponent: Any) -> Tensor:
        return pow_(self, exponent)

    @method_signature("neg_()")
    def neg_(self) -> Tensor:
        return neg_(self)

    @method_signature("exp_()")
    def exp_(self) -> Tensor:
        return exp_(self)

    @method_signature("sqrt_()")
    def sqrt_(self) -> Tensor:
        return sqrt_(self)

    @method_signature("clamp_(Tensor? min=None, Tensor? max=None)",
                      "clamp_(Scalar? min=None, Scalar? max=None)")
    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return clamp_(self, min, max)

    @method_signature("relu_()")
    def relu_(self) -> Tensor:
        return relu_(self)

    @method_signature("sigmoid_()")
    def sigmoid_(self) -> Tensor:
        return sigmoid_(self)

    @method_signature("tanh_()")
    def tanh_(self) -> Tensor:
        return tanh_(self)

    @method_signature("zero_()")
    def zero_(self) -> Tensor:
        return zero_(self)

    @method_signature("fill_(Tensor value)",
                      "fill_(Scalar value)")
    def fill_(self, value: Any) -> Tensor:
        return fill_(self, value)

    @method_signature("copy_(Tensor other, bool non_blocking=False)",
                      "copy_(Tensor other, bool async=False)|deprecated")
    def copy_(self, other: Tensor, non_blocking: builtins.bool = False) -> Tensor:
        if VMAP.depth:
            check_batched_write(self, other, "copy_")
        return copy_(self, other)

    @method_signature("masked_fill_(Tensor mask, Tensor value)",
                      "masked_fill_(Tensor mask, Scalar value)")
    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return masked_fill_(self, mask, value)

    @method_signature("uniform_(double from=0, double to=1, *, Generator? generator=None)")
    def uniform_(self, a: builtins.float = 0.0, b: builtins.float = 1.0, *,
                 generator: Any = None) -> Tensor:
        return uniform_(self, a, b, generator=generator)

    @method_signature("normal_(double mean=0, double std=1, *, Generator? generator=None)")
    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *,
                generator: Any = None) -> Tensor:
        return normal_(self, mean, std, generator=generator)

    # -- methods: special functions and activations [special] --
    @method_signature("asin()")
    def asin(self) -> Tensor:
        return asin(self)

    arcsin = renamed(asin, "arcsin")

    @method_signature("acos()")
    def acos(self) -> Tensor:
        return acos(self)

    arccos = renamed(acos, "arccos")

    @method_signature("atan()")
    def atan(self) -> Tensor:
        return atan(self)

    arctan = renamed(atan, "arctan")

    @method_signature("sinh()")
    def sinh(self) -> Tensor:
        return sinh(self)

    @method_signature("cosh()")
    def cosh(self) -> Tensor:
        return cosh(self)

    @method_signature("asinh()")
    def asinh(self) -> Tensor:
        return asinh(self)

    arcsinh = renamed(asinh, "arcsinh")

    @method_signature("acosh()")
    def acosh(self) -> Tensor:
        return acosh(self)

    arccosh = renamed(acosh, "arccosh")

    @method_signature("atanh()")
    def atanh(self) -> Tensor:
        return atanh(self)

    arctanh = renamed(atanh, "arctanh")

    @method_signature("atan2(Tensor other)")
    def atan2(self, other: Tensor) -> Tensor:
        return atan2(self, other)

    arctan2 = renamed(atan2, "arctan2")

    @method_signature("hypot(Tensor other)")
    def hypot(self, other: Tensor) -> Tensor:
        return hypot(self, other)

    @method_signature("erf()")
    def erf(self) -> Tensor:
        return erf(self)

    @method_signature("erfc()")
    def erfc(self) -> Tensor:
        return erfc(self)

    @method_signature("exp2()")
    def exp2(self) -> Tensor:
        return exp2(self)

    @method_signature("logaddexp(Tensor other)")
    def logaddexp(self, other: Tensor) -> Tensor:
        return logaddexp(self, other)

    @method_signature("xlogy(Tensor other)",
                      "xlogy(Scalar other)")
    def xlogy(self, other: Any) -> Tensor:
        return xlogy(self, other)

    @method_signature("nan_to_num(double? nan=None, double? posinf=None, double? neginf=None)")
    def nan_to_num(self, nan: builtins.float = 0.0, posinf: builtins.float | None = None,
                   neginf: builtins.float | None = None) -> Tensor:
        return nan_to_num(self, nan, posinf, neginf)

    @method_signature("addcmul(Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
                      "addcmul(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated")
    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcmul(self, tensor1, tensor2, value=value)

    @method_signature("addcdiv(Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
                      "addcdiv(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated")
    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcdiv(self, tensor1, tensor2, value=value)

    @method_signature("asin_()")
    def asin_(self) -> Tensor:
        return asin_(self)

    arcsin_ = renamed(asin_, "arcsin_")

    @method_signature("acos_()")
    def acos_(self) -> Tensor:
        return acos_(self)

    arccos_ = renamed(acos_, "arccos_")

    @method_signature("atan_()")
    def atan_(self) -> Tensor:
        return atan_(self)

    arctan_ = renamed(atan_, "arctan_")

    @method_signature("sinh_()")
    def sinh_(self) -> Tensor:
        return sinh_(self)

    @method_signature("cosh_()")
    def cosh_(self) -> Tensor:
        return cosh_(self)

    @method_signature("asinh_()")
    def asinh_(self) -> Tensor:
        return asinh_(self)

    arcsinh_ = renamed(asinh_, "arcsinh_")

    @method_signature("acosh_()")
    def acosh_(self) -> Tensor:
        return acosh_(self)

    arccosh_ = renamed(acosh_, "arccosh_")

    @method_signature("atanh_()")
    def atanh_(self) -> Tensor:
        return atanh_(self)

    arctanh_ = renamed(atanh_, "arctanh_")

    @method_signature("atan2_(Tensor other)")
    def atan2_(self, other: Tensor) -> Tensor:
        return atan2_(self, other)

    arctan2_ = renamed(atan2_, "arctan2_")

    @method_signature("hypot_(Tensor other)")
    def hypot_(self, other: Tensor) -> Tensor:
        return hypot_(self, other)

    @method_signature("erf_()")
    def erf_(self) -> Tensor:
        return erf_(self)

    @method_signature("erfc_()")
    def erfc_(self) -> Tensor:
        return erfc_(self)

    @method_signature("exp2_()")
    def exp2_(self) -> Tensor:
        return exp2_(self)

    @method_signature("xlogy_(Tensor other)",
                      "xlogy_(Scalar other)")
    def xlogy_(self, other: Any) -> Tensor:
        return xlogy_(self, other)

    @method_signature("nan_to_num_(double? nan=None, double? posinf=None, double? neginf=None)")
    def nan_to_num_(self, nan: builtins.float = 0.0, posinf: builtins.float | None = None,
                    neginf: builtins.float | None = None) -> Tensor:
        return nan_to_num_(self, nan, posinf, neginf)

    @method_signature("addcmul_(Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
                      "addcmul_(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated")
    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcmul_(self, tensor1, tensor2, value=value)

    @method_signature("addcdiv_(Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
                      "addcdiv_(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated")
    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return addcdiv_(self, tensor1, tensor2, value=value)

    # -- methods: shape, indexing and creation [shape] --
    @method_signature("new_zeros(SymIntArrayRef size, *, ScalarType? dtype=None, "
                      "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
                      "bool? requires_grad=False)")
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_zeros(self, *size, dtype=dtype, device=device,
                                   requires_grad=requires_grad)

    @method_signature("new_ones(SymIntArrayRef size, *, ScalarType? dtype=None, "
                      "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
                      "bool? requires_grad=False)")
    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_ones(self, *size, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    @method_signature("new_empty(SymIntArrayRef size, *, ScalarType? dtype=None, "
                      "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
                      "bool? requires_grad=False)")
    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_empty(self, *size, dtype=dtype, device=device,
                                   requires_grad=requires_grad)

    @method_signature("new_full(SymIntArrayRef size, Scalar fill_value, *, "
                      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                      "bool? pin_memory=False, bool? requires_grad=False)")
    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_full(self, size, fill_value, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    @method_signature("new_tensor(PyObject* data, *, ScalarType? dtype=None, Device? device=None, "
                      "bool requires_grad=False)")
    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        return _creation.new_tensor(self, data, dtype=dtype, device=device,
                                    requires_grad=requires_grad)

    @method_signature("tril(SymInt diagonal=0)")
    def tril(self, diagonal: builtins.int = 0) -> Tensor:
        return unchecked(_arrange.tril)(self, diagonal)

    @method_signature("triu(SymInt diagonal=0)")
    def triu(self, diagonal: builtins.int = 0) -> Tensor:
        return unchecked(_arrange.triu)(self, diagonal)

    @method_signature("tril_(SymInt diagonal=0)")
    def tril_(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.tril_(self, diagonal)

    @method_signature("triu_(SymInt diagonal=0)")
    def triu_(self, diagonal: builtins.int = 0) -> Tensor:
        return _arrange.triu_(self, diagonal)

    @method_signature("roll(SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)")
    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return unchecked(_arrange.roll)(self, shifts, dims)

    @method_signature("rot90(int64_t k=1, IntArrayRef dims={0,1})")
    def rot90(self, k: builtins.int = 1, dims: Any = (0, 1)) -> Tensor:
        return unchecked(_arrange.rot90)(self, k, dims)

    @method_signature("diag(int64_t diagonal=0)")
    def diag(self, diagonal: builtins.int = 0) -> Tensor:
        return unchecked(_arrange.diag)(self, diagonal)

    @method_signature("diag_embed(int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1)")
    def diag_embed(self, offset: builtins.int = 0, dim1: builtins.int = -2,
                   dim2: builtins.int = -1) -> Tensor:
        return unchecked(_arrange.diag_embed)(self, offset, dim1, dim2)

    @method_signature("trace()")
    def trace(self) -> Tensor:
        return unchecked(_arrange.trace)(self)

    @method_signature("tile(SymIntArrayRef dims)")
    def tile(self, *dims: Any) -> Tensor:
        return unchecked(_arrange.tile)(self, *dims)

    @method_signature("movedim(int64_t source, int64_t destination)",
                      "movedim(IntArrayRef source, IntArrayRef destination)")
    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _arrange.movedim(self, source, destination)

    moveaxis = method_signature("moveaxis(int64_t source, int64_t destination)",
                                "moveaxis(IntArrayRef source, IntArrayRef destination)")(
        unchecked(movedim))

    @method_signature("repeat_interleave(Tensor repeats, int64_t? dim=None, *, "
                      "SymInt? output_size=None)",
                      "repeat_interleave(SymInt repeats, int64_t? dim=None, *, "
                      "SymInt? output_size=None)")
    def repeat_interleave(self, repeats: Any = None, dim: Any = None, *,
                          output_size: Any = None) -> Tensor:
        return unchecked(_arrange.repeat_interleave)(self, repeats, dim, output_size=output_size)

    @method_signature("kron(Tensor other)")
    def kron(self, other: Tensor) -> Tensor:
        return unchecked(_arrange.kron)(self, other)

    @method_signature("masked_select(Tensor mask)")
    def masked_select(self, mask: Tensor) -> Tensor:
        return unchecked(_indexing.masked_select)(self, mask)

    @method_signature("scatter(int64_t dim, Tensor index, Tensor src)",
                      "scatter(int64_t dim, Tensor index, Tensor src, *, c10::string_view reduce)",
                      "scatter(int64_t dim, Tensor index, Scalar value)",
                      "scatter(int64_t dim, Tensor index, Scalar value, *, "
                      "c10::string_view reduce)")
    def scatter(self, dim: builtins.int, index: Tensor, src: Any = None, *, value: Any = None,
                reduce: Any = None) -> Tensor:
        return unchecked(_indexing.scatter)(self, dim, index, src, value=value, reduce=reduce)

    @method_signature("scatter_(int64_t dim, Tensor index, Tensor src)",
                      "scatter_(int64_t dim, Tensor index, Tensor src, *, "
                      "c10::string_view reduce)",
                      "scatter_(int64_t dim, Tensor index, Scalar value)",
                      "scatter_(int64_t dim, Tensor index, Scalar value, *, "
                      "c10::string_view reduce)")
    def scatter_(self, dim: builtins.int, index: Tensor, src: Any = None, *, value: Any = None,
                 reduce: Any = None) -> Tensor:
        return _indexing.scatter_(self, dim, index, src, value=value, reduce=reduce)

    @method_signature("scatter_add(int64_t dim, Tensor index, Tensor src)")
    def scatter_add(self, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        return unchecked(_indexing.scatter_add)(self, dim, index, src)

    @method_signature("scatter_add_(int64_t dim, Tensor index, Tensor src)")
    def scatter_add_(self, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add_(self, dim, index, src)

    @method_signature("scatter_reduce(int64_t dim, Tensor index, Tensor src, "
                      "c10::string_view reduce, *, bool include_self=True)")
    def scatter_reduce(self, dim: builtins.int, index: Tensor, src: Tensor, reduce: str, *,
                       include_self: builtins.bool = True) -> Tensor:
        return unchecked(_indexing.scatter_reduce)(self, dim, index, src, reduce,
                                                    include_self=include_self)

    @method_signature("scatter_reduce_(int64_t dim, Tensor index, Tensor src, "
                      "c10::string_view reduce, *, bool include_self=True)")
    def scatter_reduce_(self, dim: builtins.int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: builtins.bool = True) -> Tensor:
        return _indexing.scatter_reduce_(self, dim, index, src, reduce,
                                         include_self=include_self)

    @method_signature("index_add(int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1)")
    def index_add(self, dim: builtins.int, index: Tensor, source: Tensor, *,
                  alpha: Any = 1) -> Tensor:
        return unchecked(_indexing.index_add)(self, dim, index, source, alpha=alpha)

    @method_signature("index_add_(int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1)")
    def index_add_(self, dim: builtins.int, index: Tensor, source: Tensor, *,
                   alpha: Any = 1) -> Tensor:
        return _indexing.index_add_(self, dim, index, source, alpha=alpha)

    @method_signature("index_copy(int64_t dim, Tensor index, Tensor source)")
    def index_copy(self, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        return unchecked(_indexing.index_copy)(self, dim, index, source)

    @method_signature("index_copy_(int64_t dim, Tensor index, Tensor source)")
    def index_copy_(self, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy_(self, dim, index, source)

    @method_signature("index_fill(int64_t dim, Tensor index, Tensor value)",
                      "index_fill(int64_t dim, Tensor index, Scalar value)")
    def index_fill(self, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        return unchecked(_indexing.index_fill)(self, dim, index, value)

    @method_signature("index_fill_(int64_t dim, Tensor index, Tensor value)",
                      "index_fill_(int64_t dim, Tensor index, Scalar value)")
    def index_fill_(self, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        return _indexing.index_fill_(self, dim, index, value)

    @method_signature("take(Tensor index)")
    def take(self, index: Tensor) -> Tensor:
        return unchecked(_indexing.take)(self, index)

    @method_signature("take_along_dim(Tensor indices, int64_t? dim=None)")
    def take_along_dim(self, indices: Tensor, dim: Any = None) -> Tensor:
        return unchecked(_indexing.take_along_dim)(self, indices, dim)

    @method_signature("unfold(int64_t dimension, int64_t size, int64_t step)")
    def unfold(self, dimension: builtins.int, size: builtins.int, step: builtins.int) -> Tensor:
        return _indexing.unfold(self, dimension, size, step)

    @method_signature("index_put(c10::List<::std::optional<Tensor>> indices, Tensor values, "
                      "bool accumulate=False)")
    def index_put(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return unchecked(_indexing.index_put)(self, indices, values, accumulate)

    @method_signature("index_put_(c10::List<::std::optional<Tensor>> indices, Tensor values, "
                      "bool accumulate=False)")
    def index_put_(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _indexing.index_put_(self, indices, values, accumulate)

    @method_signature("masked_scatter(Tensor mask, Tensor source)")
    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        return unchecked(_indexing.masked_scatter)(self, mask, source)

    @method_signature("masked_scatter_(Tensor mask, Tensor source)")
    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return _indexing.masked_scatter_(self, mask, source)

    @method_signature("fliplr()")
    def fliplr(self) -> Tensor:
        return unchecked(_arrange.fliplr)(self)

    @method_signature("flipud()")
    def flipud(self) -> Tensor:
        return unchecked(_arrange.flipud)(self)

    @method_signature("ravel()")
    def ravel(self) -> Tensor:
        return unchecked(_arrange.ravel)(self)

    @method_signature("tensor_split(SymIntArrayRef indices, int64_t dim=0)",
                      "tensor_split(Tensor tensor_indices_or_sections, int64_t dim=0)",
                      "tensor_split(SymInt sections, int64_t dim=0)")
    def tensor_split(self, indices_or_sections: Any, dim: builtins.int = 0) -> tuple:
        return unchecked(_arrange.tensor_split)(self, indices_or_sections, dim, method=True)

    @method_signature("hsplit(int64_t sections)",
                      "hsplit(IntArrayRef indices)")
    def hsplit(self, indices_or_sections: Any) -> tuple:
        return unchecked(_arrange.hsplit)(self, indices_or_sections)

    @method_signature("vsplit(int64_t sections)",
                      "vsplit(IntArrayRef indices)")
    def vsplit(self, indices_or_sections: Any) -> tuple:
        return unchecked(_arrange.vsplit)(self, indices_or_sections)

    @method_signature("dsplit(int64_t sections)",
                      "dsplit(IntArrayRef indices)")
    def dsplit(self, indices_or_sections: Any) -> tuple:
        return unchecked(_arrange.dsplit)(self, indices_or_sections)

    @method_signature("select_scatter(Tensor src, int64_t dim, SymInt index)")
    def select_scatter(self, src: Tensor, dim: builtins.int, index: builtins.int) -> Tensor:
        return unchecked(_arrange.select_scatter)(self, src, dim, index)

    @method_signature("slice_scatter(Tensor src, int64_t dim=0, SymInt? start=None, "
                      "SymInt? end=None, SymInt step=1)")
    def slice_scatter(self, src: Tensor, dim: builtins.int = 0, start: Any = None, end: Any = None,
                      step: builtins.int = 1) -> Tensor:
        return unchecked(_arrange.slice_scatter)(self, src, dim, start, end, step)

    @method_signature("diagonal_scatter(Tensor src, int64_t offset=0, int64_t dim1=0, "
                      "int64_t dim2=1)")
    def diagonal_scatter(self, src: Tensor, offset: builtins.int = 0, dim1: builtins.int = 0,
                         dim2: builtins.int = 1) -> Tensor:
        return unchecked(_arrange.diagonal_scatter)(self, src, offset, dim1, dim2)

    @method_signature("narrow_copy(int64_t dim, SymInt start, SymInt length)")
    def narrow_copy(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        return unchecked(_arrange.narrow_copy)(self, dim, start, length)

    @method_signature("diagflat(int64_t offset=0)")
    def diagflat(self, offset: builtins.int = 0) -> Tensor:
        return unchecked(_arrange.diagflat)(self, offset)

    @method_signature("argwhere()")
    def argwhere(self) -> Tensor:
        return unchecked(_arrange.argwhere)(self)

    # -- methods: sorting, scans, reductions and products [sorting] --
    @method_signature("sort(*, bool? stable, int64_t dim=-1, bool descending=False)",
                      "sort(int64_t dim=-1, bool descending=False)")
    def sort(self, dim: builtins.int = -1, descending: builtins.bool = False, **stable: Any) -> Any:
        return sort(self, dim, descending, **stable)

    @method_signature("argsort(*, bool stable, int64_t dim=-1, bool descending=False)",
                      "argsort(int64_t dim=-1, bool descending=False)")
    def argsort(self, dim: builtins.int = -1, descending: builtins.bool = False, *,
                stable: builtins.bool = False) -> Tensor:
        return argsort(self, dim, descending, stable=stable)

    @method_signature("msort()")
    def msort(self) -> Tensor:
        return msort(self)

    @method_signature("topk(SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True)")
    def topk(self, k: builtins.int, dim: builtins.int = -1, largest: builtins.bool = True,
             sorted: builtins.bool = True) -> Any:
        return topk(self, k, dim, largest, sorted)

    @method_signature("kthvalue(SymInt k, int64_t dim=-1, bool keepdim=False)")
    def kthvalue(self, k: builtins.int, dim: builtins.int = -1,
                 keepdim: builtins.bool = False) -> Any:
        return kthvalue(self, k, dim, keepdim)

    @method_signature("median()",
                      "median(int64_t dim, bool keepdim=False)")
    def median(self, dim: Any = None, keepdim: builtins.bool = False, *,
               keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return median(self, dim, keepdim)

    @method_signature("nanmedian()",
                      "nanmedian(int64_t dim, bool keepdim=False)")
    def nanmedian(self, dim: Any = None, keepdim: builtins.bool = False, *,
                  keepdims: Any = None) -> Any:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nanmedian(self, dim, keepdim)

    @method_signature("mode(int64_t dim=-1, bool keepdim=False)")
    def mode(self, dim: builtins.int = -1, keepdim: builtins.bool = False) -> Any:
        return mode(self, dim, keepdim)

    @method_signature("cumprod(int64_t dim, *, ScalarType? dtype=None)")
    def cumprod(self, dim: builtins.int, *, dtype: Any = None) -> Tensor:
        return cumprod(self, dim, dtype=dtype)

    @method_signature("cummax(int64_t dim)")
    def cummax(self, dim: builtins.int) -> Any:
        return cummax(self, dim)

    @method_signature("cummin(int64_t dim)")
    def cummin(self, dim: builtins.int) -> Any:
        return cummin(self, dim)

    @method_signature("logcumsumexp(int64_t dim)")
    def logcumsumexp(self, dim: builtins.int) -> Tensor:
        return logcumsumexp(self, dim)


    @method_signature("nansum(IntArrayRef[1]? dim=None, bool keepdim=False, *, "
                      "ScalarType? dtype=None)")
    def nansum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
               keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nansum(self, dim, keepdim, dtype=dtype)

    @method_signature("nanmean(IntArrayRef[1]? dim=None, bool keepdim=False, *, "
                      "ScalarType? dtype=None)")
    def nanmean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None,
                keepdims: Any = None) -> Tensor:
        if keepdims is not None:  # NumPy's spelling, accepted as torch accepts it
            keepdim = keepdims
        return nanmean(self, dim, keepdim, dtype=dtype)

    @method_signature("count_nonzero(int64_t? dim=None)",
                      "count_nonzero(IntArrayRef dim)")
    def count_nonzero(self, dim: Any = None) -> Tensor:
        return count_nonzero(self, dim)

    @method_signature("dist(Tensor other, Scalar p=2)")
    def dist(self, other: Tensor, p: builtins.float = 2) -> Tensor:
        return dist(self, other, p)

    @method_signature("cross(Tensor other, int64_t? dim=None)")
    def cross(self, other: Tensor, dim: Any = None) -> Tensor:
        return cross(self, other, dim)

    @method_signature("addmv(Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)",
                      "addmv(Scalar beta, Tensor mat, Tensor vec)|deprecated")
    def addmv(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addmv(self, mat, vec, beta=beta, alpha=alpha)

    @method_signature("addr(Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)",
                      "addr(Scalar beta, Tensor vec1, Tensor vec2)|deprecated")
    def addr(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addr(self, vec1, vec2, beta=beta, alpha=alpha)

    @method_signature("baddbmm(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
                      "baddbmm(Scalar beta, Tensor batch1, Tensor batch2)|deprecated")
    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    @method_signature("addbmm(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
                      "addbmm(Scalar beta, Tensor batch1, Tensor batch2)|deprecated")
    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return addbmm(self, batch1, batch2, beta=beta, alpha=alpha)


    def unique(self, sorted: builtins.bool = True, return_inverse: builtins.bool = False,
               return_counts: builtins.bool = False, dim: Any = None) -> Any:
        return unique(self, sorted, return_inverse, return_counts, dim)

    @method_signature("bincount(Tensor? weights=None, SymInt minlength=0)")
    def bincount(self, weights: Any = None, minlength: builtins.int = 0) -> Tensor:
        return bincount(self, weights, minlength)

    @method_signature("histc(int64_t bins=100, Scalar min=0, Scalar max=0)")
    def histc(self, bins: builtins.int = 100, min: builtins.float = 0,
              max: builtins.float = 0) -> Tensor:
        return histc(self, bins, min, max)


    @method_signature("aminmax(*, int64_t? dim=None, bool keepdim=False)")
    def aminmax(self, *, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return aminmax(self, dim=dim, keepdim=keepdim)


    @method_signature("quantile(Tensor q, int64_t? dim=None, bool keepdim=False, *, "
                      'c10::string_view interpolation="linear")',
                      "quantile(double q, int64_t? dim=None, bool keepdim=False, *, "
                      'c10::string_view interpolation="linear")')
    def quantile(self, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    @method_signature("nanquantile(Tensor q, int64_t? dim=None, bool keepdim=False, *, "
                      'c10::string_view interpolation="linear")',
                      "nanquantile(double q, int64_t? dim=None, bool keepdim=False, *, "
                      'c10::string_view interpolation="linear")')
    def nanquantile(self, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
                    interpolation: str = "linear") -> Tensor:
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)


    # -- methods: devices, sampling, testing and torch.special [device] --
    @method_signature("multinomial(SymInt num_samples, bool replacement=False, *, "
                      "Generator? generator=None)")
    def multinomial(self, num_samples: builtins.int, replacement: builtins.bool = False, *,
                    generator: Any = None) -> Tensor:
        return _creation.tensor_multinomial(self, num_samples, replacement, generator=generator)

    @method_signature("bernoulli(*, Generator? generator=None)",
                      "bernoulli(double p, *, Generator? generator=None)")
    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        return unchecked(_creation.bernoulli)(self, p, generator=generator)

    @method_signature("bernoulli_(Tensor p, *, Generator? generator=None)",
                      "bernoulli_(double p=0.5, *, Generator? generator=None)")
    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        return _creation.bernoulli_(self, p, generator=generator)

    @method_signature("exponential_(double lambd=1, *, Generator? generator=None)")
    def exponential_(self, lambd: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        return _creation.exponential_(self, lambd, generator=generator)

    @method_signature("geometric_(double p, *, Generator? generator=None)")
    def geometric_(self, p: builtins.float, *, generator: Any = None) -> Tensor:
        return _creation.geometric_(self, p, generator=generator)

    @method_signature("log_normal_(double mean=1, double std=2, *, Generator? generator=None)")
    def log_normal_(self, mean: builtins.float = 1.0, std: builtins.float = 2.0, *,
                    generator: Any = None) -> Tensor:
        return _creation.log_normal_(self, mean, std, generator=generator)

    @method_signature("cauchy_(double median=0, double sigma=1, *, Generator? generator=None)")
    def cauchy_(self, median: builtins.float = 0.0, sigma: builtins.float = 1.0, *,
                generator: Any = None) -> Tensor:
        return _creation.cauchy_(self, median, sigma, generator=generator)

    @method_signature("random_(*, Generator? generator=None)",
                      "random_(int64_t from, int64_t? to, *, Generator? generator=None)",
                      "random_(int64_t to, *, Generator? generator=None)")
    def random_(self, *args: builtins.int, to: Any = None, generator: Any = None) -> Tensor:
        return _creation.random_(self, *args, to=to, generator=generator)

    @method_signature("logit(double? eps=None)")
    def logit(self, eps: builtins.float | None = None) -> Tensor:
        return _special_ops.logit(self, eps)

    @method_signature("sinc()")
    def sinc(self) -> Tensor:
        return _special_ops.sinc(self)


    # -- methods: linear algebra [linalg] --
    @method_signature("inverse()")
    def inverse(self) -> Tensor:
        return _decomp().inv(self)

    @method_signature("det()")
    def det(self) -> Tensor:
        return _decomp().det(self)

    @method_signature("logdet()")
    def logdet(self) -> Tensor:
        return _decomp().logdet(self)

    @method_signature("slogdet()")
    def slogdet(self) -> Any:
        return _decomp().torch_slogdet(self)

    @method_signature("pinverse(double rcond=1e-15)")
    def pinverse(self, rcond: builtins.float = 1e-15) -> Tensor:
        return _decomp().pinverse(self, rcond)

    @method_signature("matrix_power(int64_t n)")
    def matrix_power(self, n: builtins.int) -> Tensor:
        return _decomp().matrix_power(self, n)

    @method_signature("cholesky_solve(Tensor input2, bool upper=False)")
    def cholesky_solve(self, input2: Tensor, upper: builtins.bool = False) -> Tensor:
        return _decomp().cholesky_solve(self, input2, upper)

    @method_signature("cholesky(bool upper=False)")
    def cholesky(self, upper: builtins.bool = False) -> Tensor:
        return _decomp().torch_cholesky(self, upper)

    @method_signature("svd(bool some=True, bool compute_uv=True)")
    def svd(self, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
        return _decomp().torch_svd(self, some, compute_uv)

    @method_signature("qr(bool some=True)")
    def qr(self, some: builtins.bool = True) -> Any:
        return _decomp().torch_qr(self, some)


def _shape_str(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"






bind_base_class(Tensor)  # Note [Tensor base and Tensor] in npgrad._tensor_base
bind_tensor_class(Tensor)  # Note [The Tensor class, bound late] in npgrad._ops.signature

# Note [Methods call the ops unchecked]
# A Tensor method checks its own arguments against torch's *method* signature (its texts count
# positions without self); the op function it then forwards to runs without a second check: the
# op names imported above are rebound here to their undecorated bodies (``__wrapped__``).
for _name, _op in list(globals().items()):
    if hasattr(_op, "__signature_overloads__"):
        globals()[_name] = _op.__wrapped__
del _name, _op

# the parser checks of methods whose common call skips them (Note [The check's cost]); made
# after the loop above, which would take them for decorated ops
_SIZE_ARGS = checker("size(int64_t? dim=None)")
_STRIDE_ARGS = checker("stride(int64_t? dim=None)")
_UNFLATTEN_ARGS = checker("unflatten(int64_t dim, SymIntArrayRef sizes)")


def _decomp() -> Any:
    """The linear-algebra ops' module, imported on first use (large, and rarely needed)."""
    from ._ops import linalg as linalg_ops

    return linalg_ops


# The arithmetic and comparison operators *are* the op functions (each takes the tensor
# as its first argument): one Python frame less on the hottest path of all.  Type checkers
# read their declarations in the class instead (Note [Operators for type checkers]).
# ``+``, ``-`` and ``*`` have their own fast path (Note [Operators with their own fast
# path] in _ops/_core.py) and fall back to the op functions.
if not TYPE_CHECKING:

    def _unchecked(op: Any) -> Any:
        """An op function without its signature check: the operators check their operand
        themselves (Note [Operators give NotImplemented])."""
        return getattr(op, "__wrapped__", op)

    Tensor.__add__ = Tensor.__radd__ = binary_operator(AddBackward0, np.add, _unchecked(add))
    Tensor.__sub__ = binary_operator(SubBackward0, np.subtract, _unchecked(sub), bool_ok=False)
    Tensor.__mul__ = Tensor.__rmul__ = binary_operator(MulBackward0, np.multiply,
                                                       _unchecked(mul))
    Tensor.__neg__ = neg
    # The other operators check their operand first (Note [Operators give NotImplemented]).
    Tensor.__rsub__ = operator(_unchecked(rsub), "__rsub__")
    Tensor.__truediv__ = operator(_unchecked(div), "__truediv__")
    Tensor.__rtruediv__ = operator(_unchecked(rdiv), "__rtruediv__")
    Tensor.__pow__ = operator(_unchecked(pow), "__pow__")
    Tensor.__rpow__ = reflected_operator(_unchecked(pow), "__rpow__")
    Tensor.__matmul__ = operator(_unchecked(matmul), "__matmul__", TENSOR_TYPES)
    Tensor.__rmatmul__ = reflected_operator(_unchecked(matmul), "__rmatmul__", TENSOR_TYPES)
    Tensor.__floordiv__ = operator(_unchecked(floor_divide), "__floordiv__")
    Tensor.__mod__ = operator(_unchecked(remainder), "__mod__")
    # Reflected, the other operand keeps its own dtype (a float64 tensor // a float32 one is
    # float64); a NumPy array is NumPy's to handle first, so torch gives NotImplemented.
    def _reflected_scalar_operator(op: Any, name: str) -> Any:
        """``other op self`` for ``//`` and ``%``: a Python or NumPy number enters as torch
        wraps it (a 0-dim tensor like ``self``, out-of-range integers included); a tensor
        keeps its own dtype; anything else gives NotImplemented."""
        from ._creation import scalar_tensor_like

        def dunder(self: Any, other: Any = None, *rest: Any, **bogus: Any) -> Any:
            if rest or bogus:  # Note [Operators give NotImplemented]
                return NotImplemented
            if isinstance(other, Tensor):
                return op(other, self)
            if isinstance(other, (int, float, complex, np.number, np.bool_)):
                return op(scalar_tensor_like(other, self), self)
            return NotImplemented

        dunder.__name__ = dunder.__qualname__ = name
        return dunder

    Tensor.__rfloordiv__ = _reflected_scalar_operator(_unchecked(floor_divide), "__rfloordiv__")
    Tensor.__rmod__ = _reflected_scalar_operator(_unchecked(remainder), "__rmod__")
    Tensor.__and__ = Tensor.__rand__ = operator(_unchecked(bitwise_and), "__and__")
    Tensor.__or__ = Tensor.__ror__ = operator(_unchecked(bitwise_or), "__or__")
    Tensor.__xor__ = Tensor.__rxor__ = operator(_unchecked(bitwise_xor), "__xor__")
    Tensor.__eq__ = operator(_unchecked(eq), "__eq__")
    Tensor.__ne__ = operator(_unchecked(ne), "__ne__")
    Tensor.__lt__ = operator(_unchecked(lt), "__lt__")
    Tensor.__le__ = operator(_unchecked(le), "__le__")
    Tensor.__gt__ = operator(_unchecked(gt), "__gt__")
    Tensor.__ge__ = operator(_unchecked(ge), "__ge__")
    Tensor.__iadd__ = operator(_unchecked(add_), "__iadd__")
    Tensor.__isub__ = operator(_unchecked(sub_), "__isub__")
    Tensor.__imul__ = operator(_unchecked(mul_), "__imul__")
    Tensor.__itruediv__ = operator(_unchecked(div_), "__itruediv__")
    Tensor.__ipow__ = operator(_unchecked(pow_), "__ipow__")
    Tensor.__ifloordiv__ = operator(_unchecked(floor_divide_), "__ifloordiv__")
    Tensor.__imod__ = operator(_unchecked(remainder_), "__imod__")
