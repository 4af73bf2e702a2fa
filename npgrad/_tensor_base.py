"""The tensor base: a tensor's data, version counter and autograd fields, beneath every layer.

Note [Tensor base and Tensor]
The op layer builds and reads tensors, and the user-facing ``Tensor`` class
(npgrad._tensor) has a method for nearly every op, so each needs the other.
The circle is cut the way torch cuts it between its C ``TensorBase`` and its
Python ``Tensor``: this module holds ``TensorBase`` -- the slots every tensor
has (Note [Tensor slots] in npgrad._tensor) and the few functions that make
and version tensors -- and knows nothing above it.  The graph layer
(npgrad.autograd.graph) and the op layer (npgrad._ops) import from here;
npgrad._tensor defines ``class Tensor(TensorBase)`` with its methods over
the ops, importing them at the top, and binds it once (``bind_tensor_class``),
so that every tensor the lower layers make is a full ``Tensor``, as torch's
C++ wraps its results in the Python class registered at start-up.

At run time the lower layers test ``isinstance(x, TensorBase)`` (which every
tensor passes, and which costs what ``type(x) is Tensor`` costs); for type
checkers they import the full ``Tensor`` under ``TYPE_CHECKING``, so their
annotations stay the class users see.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._mode import INFERENCE

if TYPE_CHECKING:
    from ._tensor import Tensor


class VersionCounter:
    """Counts in-place writes to one storage; shared by a tensor and its views."""

    __slots__ = ("version",)

    def __init__(self, version: int = 0) -> None:
        self.version = version


INFERENCE_COUNTER = VersionCounter(-1)  # marker: inference tensors have no counter


class TensorExtra:
    """Per-tensor state that most tensors never need."""

    __slots__ = ("accumulator", "hooks", "post_accumulate_hooks", "retains_grad",
                 "view_info", "name", "is_param", "tangent", "detached_seq")

    def __init__(self) -> None:
        self.accumulator: Any = None  # weakref to this leaf's AccumulateGrad
        self.hooks: Any = None  # leaf: _HookDict of Tensor.register_hook hooks
        self.post_accumulate_hooks: Any = None
        self.retains_grad = False
        self.view_info: Any = None  # ViewInfo for views (see _ops.views)
        self.name: str | None = None
        self.is_param = False
        self.tangent: Tensor | None = None  # Note [Tangents] in npgrad._forward
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
    t = _new(TENSOR)
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
    t = _new(TENSOR)
    t._data = data
    t._grad_fn = node
    t._requires_grad = True
    t._vc = None
    t._output_nr = output_nr
    t._base = None
    t._grad = None
    t._extra = None
    return t


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


class TensorBase:
    """The slots of every tensor (Note [Tensor base and Tensor]); ``Tensor`` adds the methods."""

    __slots__ = ("_data", "_grad_fn", "_requires_grad", "_vc", "_output_nr", "_base",
                 "_grad", "_extra", "__weakref__")


# The class the lower layers give their results: npgrad._tensor binds ``Tensor`` here.
TENSOR: Any = TensorBase


def bind_tensor_class(cls: type) -> None:
    """Make ``cls`` (npgrad._tensor.Tensor) the class of every tensor the lower layers build."""
    global TENSOR
    TENSOR = cls


def make_tensor(data: np.ndarray, grad_fn: Any, requires_grad: bool, vc: Any) -> Tensor:
    """``_make`` with the bound Tensor class."""
    return _make(TENSOR, data, grad_fn, requires_grad, vc)
