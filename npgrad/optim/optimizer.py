"""The Optimizer base: parameter groups, per-parameter state, state dicts, zero_grad, step hooks.

Note [Optimizer updates are NumPy writes]
torch's default optimizers on CPU run their "for-loop" implementation: one
parameter at a time, a short sequence of in-place tensor ops under no_grad.
npgrad runs the same sequence of operations, in the same order and in the
parameter's dtype, directly on the NumPy storage of the parameter and of its
state tensors (``_inplace`` below).  Nothing is recorded, no temporary Tensor
objects are built, and each torch in-place op on a tensor is one version bump
here, so ``p._version`` moves as torch's does and ``p`` stays a leaf.  The
results agree with torch to float32 rounding (torch's CPU kernels fuse some
multiply-adds, NumPy does not).
"""
from __future__ import annotations

import functools
import threading
import warnings
from collections import defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable

import numpy as np

from .._mode import _tls
from .._sampling_math import fma32, fma64
from .._tensor import Tensor
from .._tensor_base import bump_version
from .._ops.inplace import INFERENCE_INPLACE_MSG, check_inplace, refuses_inference_write
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import RemovableHandle, _HookDict

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a default that every parameter group must give a value for."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    """The name torch's messages use for an object (``torch.FloatTensor`` for tensors)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        name = obj.__name__
    else:
        module = type(obj).__module__ or ""
        name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def _to_scalar(x: Any) -> Any:
    """A Python number for a hyper-parameter given as a one-element tensor."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _scalar_dtype() -> Any:
    """The dtype of the ``step`` counters torch keeps: float64 only if that is the default."""
    from .. import _dtype

    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


# -- the NumPy side of an update (see Note [Optimizer updates are NumPy writes]) --------

def _inplace(t: Tensor) -> np.ndarray:
    """The storage of ``t``, about to be written in place: torch's checks, one version bump."""
    if refuses_inference_write(t, _tls.mode):
        raise RuntimeError(INFERENCE_INPLACE_MSG)
    check_inplace(t, _tls.mode)
    bump_version(t)
    return t._data


# Note [Optimizer arithmetic rounds as torch's kernels do]: torch's CPU kernels for
# `add(other, alpha=)`, `addcmul` and `lerp` compute `a * b + c` as one fused multiply-add
# (their vectorised loops use FMA instructions, tails included), while `addcdiv` rounds its
# product and quotient separately. An optimizer step that rounds twice where torch rounds once
# drifts from torch's trajectory in the last bit after one step, so the optimizers compute
# every such update with `fused_multiply_add` (exact for float32 and float64).

def fused_multiply_add(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once, in the dtype of ``c`` (float32/float64; others round twice)."""
    dt = np.asarray(c).dtype
    if dt == np.float32:
        return fma32(a, b, c)
    if dt == np.float64:
        return fma64(a, b, c)
    return a * b + c


def _fma_(self: np.ndarray, a: Any, b: Any) -> None:
    """``self += a * b`` rounded once (Note [Optimizer arithmetic rounds as torch's kernels do])."""
    if self.dtype == np.float32 and self.flags.c_contiguous and self.size >= _FMA_INPLACE_MIN:
        _fma32_inplace(self, a, b)
    else:
        self[...] = fused_multiply_add(a, b, self)


# Note [An in-place float32 fused multiply-add]
# ``fma32`` builds half a dozen float64 temporaries of the parameter's size.  For a large
# parameter each is a fresh mapping whose pages fault on first touch (glibc hands big
# freed blocks back to the system), which made an SGD step on a 784x256 weight take
# ~2 ms.  The in-place version computes the same thing -- the exact float64 product plus
# the addend, rounded once in float64, then to float32, with the few sums that sit on a
# float32 rounding midpoint or below float32's normal range redone exactly by ``fma32``
# -- block by block in per-thread scratch buffers that are reused from block to block
# and step to step, and writes the result into ``self``.  Same bits as ``fma32``
# (tests/test_fast_paths.py).  Still ~8 float64 passes per element where torch's kernel
# is one fused instruction: an exact emulation's price.  A block costs ~15 NumPy calls
# (~12 us) on top of its passes, so blocks are large: a 784x256 weight is one block, and
# its update took 265 us instead of 345 us with 32,768-element blocks (1 thread).
_FMA_INPLACE_MIN = 4096
_FMA_BLOCK = 1 << 18  # float64 scratch of 2 MiB per buffer, reused block after block
_LOW29 = np.uint64((1 << 29) - 1)
_HALF29 = np.uint64(1 << 28)
_EXP64 = np.uint64(0x7FF << 52)
_F32_NORMAL = np.uint64((1023 - 126) << 52)  # float64 exponent field of 2**-126


class _FmaScratch(threading.local):
    f64: np.ndarray = np.empty(0, np.float64)
    f64b: np.ndarray = np.empty(0, np.float64)
    u64: np.ndarray = np.empty(0, np.uint64)
    f32: np.ndarray = np.empty(0, np.float32)
    flags: np.ndarray = np.empty(0, np.bool_)


_fma_scratch = _FmaScratch()
_MIDPOINT_TOP = np.uint64(1 << 63)   # the low 29 bits of a float32 midpoint, shifted to the top
_F32_TINY = np.float32(2.0 ** -126)
_INT64_MIN = np.iinfo(np.int64).min


# Note [Fewer passes in the in-place fused multiply-add]
# Each block costs NumPy passes, so they are the cheap kinds: operands are widened with
# ``copyto`` and multiplied in place (a ufunc casting its inputs itself runs a buffered
# loop at a quarter of the speed); the midpoint test is one shift and one minimum (the
# low 29 bits moved to the top equal 2**28 moved there, 2**63: as int64, the least
# value there is), the mask built only in a block that has one; and the test for sums below
# float32's normal range reads the rounded float32 block (|r| <= 2**-126 whenever the
# sum is below 2**-126: a superset of the exact test, and those elements are redone
# exactly anyway).  The exact redo reads the addend from its widened copy, since the
# block has been overwritten by then.

def _fma32_inplace(self: np.ndarray, a: Any, b: Any) -> None:
    # (``ndim`` / ``shape`` attributes and ``np.minimum.reduce``, not ``np.ndim`` /
    # ``np.shape`` / ``.min()``: their dispatch was half of a small parameter's ~12 us)
    shape = self.shape
    a_dims, b_dims = getattr(a, "ndim", 0), getattr(b, "ndim", 0)
    if a_dims and a.shape != shape or b_dims and b.shape != shape:
        self[...] = fused_multiply_add(a, b, self)  # broadcasting operands: the plain path
        return
    if not a_dims:
        a, b, a_dims, b_dims = b, a, b_dims, a_dims  # the product commutes: the array first
    flat = self.reshape(-1)
    fa = a.reshape(-1) if a_dims else a
    fb = b.reshape(-1) if b_dims else b
    n = flat.size
    size = min(n, _FMA_BLOCK)
    scratch = _fma_scratch
    if scratch.f64.size < size:
        scratch.f64 = np.empty(size, np.float64)
        scratch.f64b = np.empty(size, np.float64)
        scratch.u64 = np.empty(size, np.uint64)
        scratch.f32 = np.empty(size, np.float32)
        scratch.flags = np.empty(size, np.bool_)
    f64, f64b, u64, f32, flags = (scratch.f64, scratch.f64b, scratch.u64, scratch.f32,
                                  scratch.flags)
    for start in range(0, n, _FMA_BLOCK):
        stop = min(start + _FMA_BLOCK, n)
        m = stop - start
        if m == n:  # one block: the whole arrays
            out, x, y = flat, fa, fb
        else:
            out = flat[start:stop]
            x = fa[start:stop] if a_dims else fa
            y = fb[start:stop] if b_dims else fb
        if m == f64.size:
            s, addend, u, r32, suspect = f64, f64b, u64, f32, flags
        else:
            s, addend, u, r32, suspect = f64[:m], f64b[:m], u64[:m], f32[:m], flags[:m]
        np.copyto(s, x)
        np.multiply(s, y, out=s)       # exact: float32 * float32 fits a float64
        np.copyto(addend, out)
        s += addend                    # the one float64 rounding
        np.left_shift(s.view(np.uint64), 35, out=u)
        # a midpoint's shifted bits are 2**63, the one value that is int64's minimum
        midpoints = _least(u.view(np.int64)) == _INT64_MIN
        np.copyto(out, s, casting="same_kind")
        magnitude = np.abs(out, out=r32)
        tiny = not _least(magnitude) > _F32_TINY   # (a NaN in the block: look element-wise)
        if not (midpoints or tiny):
            continue
        np.equal(u, _MIDPOINT_TOP, out=suspect)
        if tiny:
            np.logical_or(suspect, magnitude <= _F32_TINY, out=suspect)
        idx = np.flatnonzero(suspect)
        out[idx] = fma32(x[idx] if a_dims else x, y[idx] if b_dims else y,
                         addend[idx].astype(np.float32))


_least = np.minimum.reduce


def _lerp_(self: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``self.lerp_(end, weight)`` with torch's two-sided formula (exact at both ends), fused."""
    w = self.dtype.type(weight)
    if abs(weight) < 0.5:
        _fma_(self, w, end - self)
    else:
        self[...] = fused_multiply_add(self - end, self.dtype.type(1) - w, end)


def _step_tensor(value: float) -> Tensor:
    """The ``step`` counter torch keeps: a 0-dim tensor of the scalar dtype."""
    from .._creation import _leaf

    return _leaf(np.array(value, dtype=_scalar_dtype().np_dtype))


def _zeros_like(p: Tensor) -> Tensor:
    """A fresh state tensor (a moving average, a buffer) shaped and typed like ``p``."""
    from .._creation import _leaf

    return _leaf(np.zeros_like(p._data))


def _grad_of(p: Tensor, maximize: bool) -> np.ndarray:
    g = p._grad._data
    return -g if maximize else g


class Optimizer:
    """Base class of the optimizers: holds ``param_groups`` and per-parameter ``state``.

    ``params`` is an iterable of tensors, or of dicts (parameter groups) with a
    ``"params"`` entry and per-group options; ``defaults`` fills in the options a
    group does not give.

    >>> import npgrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0., 0.], requires_grad=True)
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict[int, Callable] = _HookDict()
        self._optimizer_step_post_hooks: dict[int, Callable] = _HookDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict[Any, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass's own ``step`` runs the step hooks around it (torch wraps it the same way).
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_runs_hooks", False):
            cls.step = _with_step_hooks(step)  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    # Group keys that older saved optimizers may lack, filled in by __setstate__.
    _group_defaults_for_old_state: dict[str, Any] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", _HookDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", _HookDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults_for_old_state.items():
                group.setdefault(key, value)
        for p_state in self.state.values():  # torch keeps step counters as tensors now
            if "step" in p_state and not isinstance(p_state["step"], Tensor):
                p_state["step"] = _step_tensor(float(p_state["step"]))

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- parameter groups ------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with its own options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead.")
        else:
            params = list(params)
        tensors = []
        names = []
        for param in params:
            if isinstance(param, tuple):  # (name, tensor) pairs, as from named_parameters()
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps -----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to ``None`` (default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before each ``step``; it may return new args."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state dicts -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``.

        Parameters are replaced by their position over all groups; the state
        tensors are the optimizer's own (not copies), as in torch.
        """
        index_of: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the options and state of ``state_dict`` (made by ``state_dict()``)."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        param_of = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, Any] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = _cast_state(param, value, key, state_dict["param_groups"])
            else:
                state[key] = value
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _cast_state(param: Tensor, value: Any, param_id: Any, saved_groups: list,
                key: Any = None) -> Any:
    """A loaded state value in the parameter's dtype (``step`` counters stay as saved)."""
    if isinstance(value, Tensor):
        if key == "step":
            group = next((g for g in saved_groups if param_id in g["params"]), {})
            if group.get("capturable", False) or group.get("fused", False):
                return value.to(dtype=_float32())
            return value
        if param.is_floating_point() and value.dtype != param.dtype:
            return value.to(dtype=param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, v, param_id, saved_groups, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, param_id, saved_groups) for v in value)
    return value


def _float32() -> Any:
    from .. import _dtype

    return _dtype.float32


def _with_step_hooks(step: Callable) -> Callable:
    @functools.wraps(step)
    def run_step(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        out = step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    run_step._runs_hooks = True  # type: ignore[attr-defined]
    return run_step


def _check_differentiable(differentiable: bool) -> None:
    if differentiable:
        raise NotImplementedError("npgrad optimizers do not support differentiable=True: the "
                                  "update is not recorded by autograd")

