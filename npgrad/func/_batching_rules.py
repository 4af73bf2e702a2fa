"""Batching rules: how an op runs once over every sample of its batched arguments.

A rule is ``rule(hooked, levels, args, kwargs)``: ``hooked`` is the op as the user called it
(a Tensor method, a checked function), ``levels`` the vmap levels its batched arguments carry
(outermost first).  It calls ``hooked`` on physical values (Note [Batched values] in
``_batched``: batch dims in front, one per level) and wraps the output, or returns
``NotImplemented`` for a case it does not cover, and the op falls back to one call per
sample.  Rules are keyed by the op's name, the same for the function, the method and the
operator (``add``, ``Tensor.add``, ``__add__``), since they take the same arguments.

Note [Pointwise rules from the registry]
An elementwise op needs only its arguments' batch dims lined up: each tensor argument gets
every level's batch dim (size 1 where it is not batched there) and size-1 logical dims up to
the widest argument's rank, so broadcasting of the per-sample shapes happens behind the batch
dims exactly as it would per sample.  The registry's elementwise kinds (``Pointwise``,
``PointwiseBinary``) are all such ops, so their names get this rule with no list to keep;
the operators and the elementwise ops that are not entries yet are named below.
torch's promotion ranks a 0-dim tensor below a dimensioned one; a sample that is 0-dim has a
dimensioned physical value, so when the tensors' dtypes differ the arguments are cast to the
dtype the per-sample call would compute in first.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _dtype
from .._ops import registry as _registry
from .._ops._shape_util import wrap_dim
from .._tensor import Tensor
from . import _batched
from ._batched import (RULES, BatchedTensor, full_physical, is_inplace, make, physical,
                       wrap_out)

_Rule = Callable[[Callable, tuple, tuple, dict], Any]


def rule(*names: str) -> Callable[[_Rule], _Rule]:
    """Register ``fn`` as the batching rule of the ops ``names``."""
    def register(fn: _Rule) -> _Rule:
        for name in names:
            RULES[name] = fn
        return fn
    return register


def _name(hooked: Callable) -> str:
    """The op's name: a function's or method's, or a registry entry's."""
    return str(getattr(hooked, "__name__", None) or getattr(hooked, "name", ""))


def _k(levels: tuple) -> int:
    return len(levels)


def _ldim(x: Any) -> int:
    return x.dim() if isinstance(x, Tensor) else 0


# -- pointwise ------------------------------------------------------------------------------

def _promoted(args: tuple, kwargs: dict) -> Any:
    """The dtype a per-sample call computes in, when the tensors' dtypes differ, else None."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    if len({t.dtype for t in tensors}) < 2:
        return None
    operands: list[Any] = []
    for a in args:
        if isinstance(a, Tensor):
            operands.append(np.empty((0,) if a.dim() else (), dtype=a.dtype.np_dtype))
        elif isinstance(a, (bool, int, float, complex)):
            operands.append(a)
    return _dtype.from_np(_dtype.result_type_np(tuple(operands)))


def pointwise(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Pointwise rules from the registry]."""
    if len(args) == 1 and not kwargs and type(args[0]) is BatchedTensor:
        # one batched operand: the op runs on its physical value as it is
        self_ = args[0]
        out = hooked(self_._value)
        if is_inplace(_name(hooked)):
            return self_
        return wrap_out(out, self_._levels)
    if "out" in kwargs:
        return NotImplemented
    name = _name(hooked)
    if name in _REFLECTED and len(args) == 2 and isinstance(args[1], Tensor):
        # ``plain <op> batched``: Python asked the subclass's reflected operator first; the
        # reflected operators of Tensor take a number, so run the operator itself
        hooked, args = getattr(Tensor, "__" + name[3:]), (args[1], args[0])
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    rank = max(_ldim(t) for t in tensors)
    cast = _promoted(args, kwargs) if _name(hooked).strip("_") in _PROMOTING else None
    self: Any = args[0] if args else None
    inplace = type(self) is BatchedTensor and is_inplace(_name(hooked))

    def line_up(a: Any) -> Any:
        if not isinstance(a, Tensor):
            return a
        p = physical(a, levels, rank)
        return p if cast is None or p.dtype == cast else p.to(cast)

    if inplace:
        own = self._levels
        value = self._value
        others = tuple(line_up_to(a, own, self.dim()) for a in args[1:])
        kw = {key: line_up_to(v, own, self.dim()) for key, v in kwargs.items()}
        hooked(value, *others, **kw)
        return self
    out = hooked(*(line_up(a) for a in args), **{k: line_up(v) for k, v in kwargs.items()})
    return wrap_out(out, levels)


def line_up_to(a: Any, levels: tuple, rank: int) -> Any:
    """A value written into a tensor batched at ``levels`` of logical rank ``rank``."""
    if not isinstance(a, Tensor):
        return a
    return physical(a, levels, rank if _ldim(a) <= rank else None)


_OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__",
    "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
    "__rxor__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__",
    "__ifloordiv__", "__imod__", "__iand__", "__ior__", "__ixor__")
_REFLECTED = frozenset(n for n in _OPERATORS if n.startswith("__r") and n != "__rshift__")
# elementwise ops that are not registry entries (yet), in-place forms included below
_ELEMENTWISE = (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "float_power", "rsub", "eq", "ne", "lt", "le",
    "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal", "where",
    "clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "masked_fill",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
    "nan_to_num", "round", "sign", "sgn", "signbit", "square", "relu", "relu6", "gelu",
    "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardsigmoid",
    "hardswish", "softplus", "softsign", "tanhshrink", "threshold", "logsigmoid", "sigmoid",
    "tanh", "exp", "log", "abs", "neg", "negative", "sqrt", "rsqrt", "reciprocal", "sin",
    "cos", "tan", "floor", "ceil", "trunc", "frac", "positive", "exp2", "expm1", "log1p",
    "log2", "log10", "erf", "erfc", "erfinv", "maximum", "minimum", "fmax", "fmin", "atan2",
    "arctan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "copysign", "heaviside",
    "nextafter", "deg2rad", "rad2deg", "isclose", "logit", "sinc", "i0", "lgamma", "digamma",
    "polygamma", "mvlgamma", "angle", "conj", "real", "imag", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "special_logit", "entr", "complex", "polar", "conj_physical", "sinh", "cosh",
    # same layout, another dtype or buffer
    "detach", "clone", "contiguous", "float", "double", "half", "bfloat16", "long", "int",
    "short", "char", "byte", "bool", "cpu", "type_as", "zero_", "fill_", "requires_grad_",
    "zeros_like", "ones_like", "empty_like", "full_like")


# the binary ops whose tensor operands all take part in the promotion (the cast above)
_PROMOTING = frozenset(n.strip("_").lstrip("ri") if n.startswith("__r") or n.startswith("__i")
                       else n.strip("_") for n in _OPERATORS) | frozenset((
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "rsub", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less",
    "greater_equal", "less_equal", "not_equal", "maximum", "minimum", "fmax", "fmin", "atan2",
    "arctan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "copysign", "nextafter", "mod",
    "truediv", "floordiv", "matmul", "and", "or", "xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "logical_and", "logical_or", "logical_xor", "max", "min"))


def _registry_names() -> list:
    names = []
    for entry in _registry.REGISTRY.values():
        if type(entry).__name__.startswith("Pointwise"):
            names.append(entry.name)
    return names


def _register_pointwise() -> None:
    names = set(_OPERATORS) | set(_ELEMENTWISE) | set(_registry_names())
    names |= {n + "_" for n in list(names) if not n.startswith("__") and not n.endswith("_")}
    for name in names:
        RULES.setdefault(name, pointwise)


@rule("to")
def to_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values())):
        return NotImplemented  # .to(other): the dtype of a batched tensor
    return wrap_out(hooked(args[0]._value, *args[1:], **kwargs), args[0]._levels)


# -- reductions -----------------------------------------------------------------------------

def _dims_arg(args: tuple, kwargs: dict, pos: int = 1) -> tuple[Any, bool]:
    """The ``dim`` argument (positional ``pos`` or keyword) and whether it was given."""
    if "dim" in kwargs:
        dims = kwargs["dim"]
        return dims, dims is not None and not (isinstance(dims, (tuple, list)) and not dims)
    if len(args) > pos and not isinstance(args[pos], (bool, Tensor)) and args[pos] is not None \
            and not _dtype_like(args[pos]):
        dims = args[pos]
        return dims, not (isinstance(dims, (tuple, list)) and not dims)
    return None, False


def _dtype_like(x: Any) -> bool:
    return isinstance(x, _dtype.dtype)


def _shift(dims: Any, rank: int, k: int) -> Any:
    if isinstance(dims, (tuple, list)):
        return tuple(wrap_dim(d, max(rank, 1)) + k for d in dims)
    return wrap_dim(dims, max(rank, 1)) + k


_FULL_BY_TUPLE = frozenset(("sum", "mean", "nansum", "nanmean", "amax", "amin", "all", "any",
                            "std", "var", "count_nonzero", "logsumexp", "var_mean", "std_mean"))
_FULL_FLAT = {"prod": None, "max": "amax", "min": "amin", "argmax": None, "argmin": None,
              "median": "values", "nanmedian": "values"}


@rule("sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "all", "any", "logsumexp",
      "std", "var", "count_nonzero", "max", "min", "argmax", "argmin", "cumsum",
      "cumprod", "softmax", "log_softmax", "_softmax", "_log_softmax", "median", "nanmedian",
      "cummax", "cummin", "var_mean", "std_mean", "mode", "sort", "argsort", "topk",
      "kthvalue", "logcumsumexp")
def reduction(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Reductions and scans over ``dim``: the dim moves past the batch dims; a reduction of
    the whole sample reduces its logical dims (or its flattened values)."""
    self = args[0]
    if type(self) is not BatchedTensor or "out" in kwargs:
        return NotImplemented
    name = _name(hooked)
    if any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values())):
        if name in ("max", "min") and len(args) == 2:
            return pointwise(hooked, levels, args, kwargs)  # the elementwise overload
        return NotImplemented
    k, rank = len(self._levels), self.dim()
    value = self._value
    pos = 2 if name in ("topk", "kthvalue") else 1
    dims, given = _dims_arg(args, kwargs, pos)
    if not given and "dim" in kwargs:  # dim=None, dim=(): the whole sample
        kwargs = {key: v for key, v in kwargs.items() if key != "dim"}
    elif not given and len(args) > pos and isinstance(args[pos], (tuple, list)):
        args = args[:pos] + args[pos + 1:]
    if given:
        if rank == 0:
            return _zero_dim_reduction(hooked, self, args, kwargs, dims, pos)
        if "dim" in kwargs:
            return wrap_out(hooked(value, *args[1:], **dict(kwargs, dim=_shift(dims, rank, k))),
                            self._levels)
        rest = list(args[1:])
        rest[pos - 1] = _shift(dims, rank, k)
        return wrap_out(hooked(value, *rest, **kwargs), self._levels)
    if name in ("sort", "argsort") and len(args) == 1 and rank:
        return wrap_out(hooked(value, k + rank - 1, **kwargs), self._levels)
    if name in ("topk", "kthvalue") and len(args) == 2 and rank and not given:
        return wrap_out(hooked(value, args[1], k + rank - 1, **kwargs), self._levels)
    unbiased = name in ("std", "var", "var_mean", "std_mean") and len(args) == 2 \
        and isinstance(args[1], bool)
    if len(args) > 1 and not unbiased:
        return NotImplemented
    if name in _FULL_BY_TUPLE and name != "logsumexp":
        all_dims: tuple[int, ...]
        if rank == 0:
            value, all_dims = value.unsqueeze(k), (k,)
        else:
            all_dims = tuple(range(k, k + rank))
        if unbiased:
            return wrap_out(hooked(value, all_dims, args[1], **kwargs), self._levels)
        return wrap_out(hooked(value, all_dims, **kwargs), self._levels)
    if name in _FULL_FLAT and not kwargs:
        flat = value.reshape(tuple(value.shape[:k]) + (-1,))
        how = _FULL_FLAT[name]
        if how == "values":
            return make(hooked(flat, k).values, self._levels)
        if how is not None:
            return make(getattr(flat, how)(k), self._levels)
        return make(hooked(flat, k), self._levels)
    return NotImplemented


def _zero_dim_reduction(hooked: Callable, self: BatchedTensor, args: tuple, kwargs: dict,
                        dims: Any, pos: int) -> Any:
    """A 0-dim sample reduced (or scanned) over its dim 0 / -1, as torch allows: over a
    size-1 dim put behind the levels, which every output then loses again."""
    one = dims[0] if isinstance(dims, (tuple, list)) and len(dims) == 1 else dims
    if one not in (0, -1) or isinstance(one, bool):
        return NotImplemented  # the op's own error, per sample
    k = len(self._levels)
    shifted = (k,) if isinstance(dims, (tuple, list)) else k
    if "dim" in kwargs:
        kwargs = dict(kwargs, dim=shifted)
    else:
        rest = list(args)
        rest[pos] = shifted
        args = tuple(rest)
    out = hooked(self._value.unsqueeze(k), *args[1:], **kwargs)

    def back(o: Any) -> Any:
        return o.squeeze(k) if isinstance(o, Tensor) and o.dim() == k + 1 else o
    if isinstance(out, Tensor):
        return make(back(out), self._levels)
    if isinstance(out, tuple):
        return wrap_out(_batched._rebuild(out, [back(o) for o in out]), self._levels)
    return NotImplemented


# -- shapes and views -----------------------------------------------------------------------

def _sizes(args: tuple) -> tuple | None:
    """The size arguments of view/reshape/expand: one sequence, or the ints themselves."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        items = tuple(args[0])
    else:
        items = tuple(args)
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in items):
        return None
    return items


def _batch(self: BatchedTensor) -> tuple:
    return tuple(self._value.shape[:len(self._levels)])


@rule("view", "reshape")
def view_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if type(self) is not BatchedTensor or kwargs:
        return NotImplemented
    sizes = _sizes(args[1:])
    if sizes is None:
        return NotImplemented
    if -1 in sizes and self.numel() == 0:
        return NotImplemented
    shape = _batch(self) + sizes
    value = self._value
    try:
        out = hooked(value, shape)
    except RuntimeError:
        if _name(hooked) != "view":
            raise
        out = value.reshape(shape)  # physical strides can refuse what the sample allows
    return make(out, self._levels)


@rule("view_as", "reshape_as", "expand_as")
def as_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self, other = args[0], args[1]
    name = _name(hooked).replace("_as", "")
    if type(self) is not BatchedTensor:
        return NotImplemented
    return getattr(self, name)(tuple(other.shape))


@rule("expand")
def expand_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if type(self) is not BatchedTensor or kwargs:
        return NotImplemented
    sizes = _sizes(args[1:])
    if sizes is None:
        return NotImplemented
    k = len(self._levels)
    value = physical(self, self._levels, len(sizes))
    logical = tuple(value.shape[k:])
    target = tuple(old if new == -1 else new for new, old in zip(sizes, logical)) \
        if len(sizes) == len(logical) else sizes
    return make(hooked(value, _batch(self) + target), self._levels)


@rule("unsqueeze", "squeeze", "transpose", "swapaxes", "swapdims", "movedim", "moveaxis",
      "flatten", "unflatten", "narrow", "select", "unbind", "split", "chunk", "tensor_split",
      "diagonal", "diag_embed", "roll", "repeat_interleave", "tril", "triu")
def dim_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if type(self) is not BatchedTensor or any(isinstance(a, Tensor) for a in args[1:]) \
            or any(isinstance(v, Tensor) for v in kwargs.values()):
        return NotImplemented
    name = _name(hooked)
    k, rank = len(self._levels), self.dim()
    value = self._value
    rest = list(args[1:])
    kw = dict(kwargs)
    if name == "unsqueeze":
        d = kw.pop("dim", rest[0] if rest else None)
        if not isinstance(d, int):
            return NotImplemented
        return make(hooked(value, wrap_dim(d, rank + 1) + k), self._levels)
    if name == "squeeze":
        d = kw.pop("dim", rest[0] if rest else None)
        if d is None:
            dims = tuple(k + i for i, s in enumerate(self.shape) if s == 1)
            return make(value.reshape(_batch(self) + tuple(s for s in self.shape if s != 1))
                        if dims else value.view(value.shape), self._levels)
        if rank == 0:
            return make(value.view(value.shape), self._levels)
        return make(hooked(value, _shift(d, rank, k)), self._levels)
    if name in ("tril", "triu"):
        if rank < 2:
            return NotImplemented
        return make(hooked(value, *rest, **kw), self._levels)
    if rank == 0:
        return NotImplemented
    if name in ("transpose", "swapaxes", "swapdims", "movedim", "moveaxis"):
        if len(rest) != 2 or kw:
            return NotImplemented
        return make(hooked(value, _shift(rest[0], rank, k), _shift(rest[1], rank, k)),
                    self._levels)
    if name == "flatten":
        start = kw.pop("start_dim", rest[0] if rest else 0)
        end = kw.pop("end_dim", rest[1] if len(rest) > 1 else -1)
        if kw or not isinstance(start, int) or not isinstance(end, int):
            return NotImplemented
        return make(hooked(value, _shift(start, rank, k), _shift(end, rank, k)), self._levels)
    if name in ("narrow", "select", "unflatten"):
        if kw or not rest:
            return NotImplemented
        return wrap_out(hooked(value, _shift(rest[0], rank, k), *rest[1:]), self._levels)
    if name in ("unbind", "split", "chunk", "tensor_split", "repeat_interleave", "roll"):
        pos = 0 if name == "unbind" else 1
        if "dim" in kw:
            kw["dim"] = _shift(kw["dim"], rank, k)
        elif len(rest) > pos:
            rest[pos] = _shift(rest[pos], rank, k)
        elif name == "unbind":
            rest = [k]
        elif name in ("split", "chunk", "tensor_split"):
            rest.append(k)
        else:
            return NotImplemented  # roll / repeat_interleave over the flattened sample
        return wrap_out(hooked(value, *rest, **kw), self._levels)
    if name in ("diagonal", "diag_embed"):
        # dims of the input (diagonal) or of the output, one dim more (diag_embed)
        names = ("offset", "dim1", "dim2")
        got = dict(zip(names, rest))
        for key, v in kw.items():
            if key not in names or key in got:
                return NotImplemented
            got[key] = v
        out_rank = rank if name == "diagonal" else rank + 1
        defaults = (0, 1) if name == "diagonal" else (-2, -1)
        dims = (got.get("dim1", defaults[0]), got.get("dim2", defaults[1]))
        if not all(isinstance(d, int) and -out_rank <= d < out_rank for d in dims):
            return NotImplemented
        if name == "diagonal" and rank < 2:
            return NotImplemented
        return make(hooked(value, got.get("offset", 0), wrap_dim(dims[0], out_rank) + k,
                           wrap_dim(dims[1], out_rank) + k), self._levels)
    return NotImplemented


# Note [Shape ops by their logical dims]
# These shape ops name their dims implicitly (fliplr: dim 1, hstack: dim 0 or 1, tile: the
# last ones, roll without dims: the flattened sample), so each is written as the explicit
# op on the sample (``flip``, ``cat``, ``repeat``, ...), which dispatches to its own rule.

def _ints(items: tuple) -> tuple | None:
    if len(items) == 1 and isinstance(items[0], (tuple, list)):
        items = tuple(items[0])
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        return None
    return tuple(items)


@rule("flip", "fliplr", "flipud")
def flip_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Shape ops by their logical dims]."""
    self = args[0]
    if type(self) is not BatchedTensor:
        return NotImplemented
    name, rank, k = _name(hooked), self.dim(), len(self._levels)
    if name == "flip":
        dims = _ints(args[1:]) if not kwargs else _ints((kwargs.get("dims"),))
        if dims is None or set(kwargs) - {"dims"} or not all(-rank <= d < rank for d in dims):
            return NotImplemented
    elif rank < (2 if name == "fliplr" else 1) or len(args) != 1 or kwargs:
        return NotImplemented
    else:
        dims = (1,) if name == "fliplr" else (0,)
    if not dims:
        return make(self._value.clone(), self._levels)
    return make(self._value.flip(tuple(wrap_dim(d, rank) + k for d in dims)), self._levels)


@rule("repeat", "tile")
def repeat_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Shape ops by their logical dims]: new dims go behind the levels."""
    self = args[0]
    sizes = _ints(args[1:]) if not kwargs else _ints((kwargs.get("dims"),))
    if type(self) is not BatchedTensor or sizes is None or set(kwargs) - {"dims"}:
        return NotImplemented
    rank, k = self.dim(), len(self._levels)
    if _name(hooked) == "tile":
        sizes = (1,) * (rank - len(sizes)) + sizes
    elif len(sizes) < rank:
        return NotImplemented  # repeat's own error, per sample
    value = physical(self, self._levels, len(sizes))
    return make(value.repeat((1,) * k + sizes), self._levels)


@rule("broadcast_to")
def broadcast_to_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    size = kwargs.get("size", args[1] if len(args) > 1 else None)
    if type(self) is not BatchedTensor or len(args) + len(kwargs) != 2 or \
            not isinstance(size, (tuple, list)):
        return NotImplemented
    return self.expand(tuple(size))


@rule("ravel")
def ravel_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if type(args[0]) is not BatchedTensor or len(args) != 1 or kwargs:
        return NotImplemented
    return args[0].reshape(-1)


@rule("narrow_copy")
def narrow_copy_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if type(args[0]) is not BatchedTensor or kwargs or len(args) != 4:
        return NotImplemented
    return args[0].narrow(*args[1:]).clone()


@rule("msort")
def msort_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if type(args[0]) is not BatchedTensor or kwargs or len(args) != 1 or args[0].dim() == 0:
        return NotImplemented
    return args[0].sort(0).values


@rule("diag")
def diag_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """A vector's diagonal matrix (diag_embed), a matrix's diagonal (diagonal)."""
    self = args[0]
    offset = kwargs.get("diagonal", args[1] if len(args) > 1 else 0)
    if type(self) is not BatchedTensor or set(kwargs) - {"diagonal"} or len(args) > 2 or \
            not isinstance(offset, int) or self.dim() not in (1, 2):
        return NotImplemented
    k = len(self._levels)
    if self.dim() == 1:
        return make(self._value.diag_embed(offset, k, k + 1), self._levels)
    return make(self._value.diagonal(offset, k, k + 1), self._levels)


@rule("hstack", "vstack", "row_stack")
def hstack_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Shape ops by their logical dims]: ``cat`` along the dim the op picks."""
    from .._ops.shape import cat

    if len(args) != 1 or kwargs or not isinstance(args[0], (tuple, list)) or not args[0]:
        return NotImplemented
    tensors = list(args[0])
    if not all(isinstance(t, Tensor) and t.dim() >= 1 for t in tensors):
        return NotImplemented  # 0-d samples (atleast_1d first): per sample
    if _name(hooked) == "hstack":
        return cat(tensors, 0 if tensors[0].dim() == 1 else 1)
    return cat([t.unsqueeze(0) if t.dim() == 1 else t for t in tensors], 0)


@rule("hsplit", "vsplit", "dsplit")
def hsplit_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if type(self) is not BatchedTensor or kwargs or len(args) != 2:
        return NotImplemented
    name, rank, how = _name(hooked), self.dim(), args[1]
    d = {"hsplit": 1 if rank > 1 else 0, "vsplit": 0, "dsplit": 2}[name]
    if rank < {"hsplit": 1, "vsplit": 2, "dsplit": 3}[name]:
        return NotImplemented
    if isinstance(how, int) and (how <= 0 or self.shape[d] % how):
        return NotImplemented  # the op's own error, per sample
    if not isinstance(how, (int, list, tuple)):
        return NotImplemented
    return self.tensor_split(how, d)


@rule("broadcast_tensors")
def broadcast_tensors_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Every tensor expanded to the samples' broadcast shape, behind the levels."""
    from .._ops._shape_util import broadcast_shapes

    if kwargs or not args or not all(isinstance(t, Tensor) for t in args):
        return NotImplemented
    shape: tuple = ()
    for t in args:
        try:
            shape = broadcast_shapes(shape, tuple(t.shape))
        except (RuntimeError, ValueError):
            return NotImplemented  # the op's own error, per sample
    sizes = tuple(level.batch_size for level in levels)
    return tuple(make(physical(t, levels, len(shape)).expand(sizes + shape), levels)
                 for t in args)


# logical rank -> where the size-1 dims go (None: the sample's dims)
_ATLEAST_SHAPES: dict[int, dict[int, tuple]] = {
    1: {0: (1,)},
    2: {0: (1, 1), 1: (1, None)},
    3: {0: (1, 1, 1), 1: (1, None, 1), 2: (None, None, 1)},
}


@rule("atleast_1d", "atleast_2d", "atleast_3d")
def atleast_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Shape ops by their logical dims]: size-1 dims where the op puts them."""
    if kwargs or not args:
        return NotImplemented
    single = len(args) == 1 and isinstance(args[0], Tensor)
    tensors = args if len(args) > 1 else (args[0] if not single else (args[0],))
    if not isinstance(tensors, (tuple, list)) or not tensors or \
            not all(isinstance(t, Tensor) for t in tensors):
        return NotImplemented
    table = _ATLEAST_SHAPES[int(_name(hooked)[-2])]

    def one(t: Any) -> Any:
        spec = table.get(t.dim())
        if spec is None:
            return t
        dims = iter(tuple(t.shape))
        return t.reshape(tuple(next(dims) if s is None else s for s in spec))
    out = tuple(one(t) for t in tensors)
    return out[0] if single else out


@rule("multi_dot", "linalg_multi_dot")
def multi_dot_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """A chain of matmuls (a 1-D first or last factor a row or column vector)."""
    if kwargs or len(args) != 1 or not isinstance(args[0], (tuple, list)) or len(args[0]) < 2:
        return NotImplemented
    tensors = list(args[0])
    ranks = [t.dim() if isinstance(t, Tensor) else -1 for t in tensors]
    if ranks[0] not in (1, 2) or ranks[-1] not in (1, 2) or any(r != 2 for r in ranks[1:-1]) \
            or len({t.dtype for t in tensors}) != 1:
        return NotImplemented
    for a, b in zip(tensors, tensors[1:]):
        if a.shape[-1] != b.shape[0]:
            return NotImplemented
    return make(_chain(tensors, levels), levels)


def _chain(tensors: list, levels: tuple) -> Tensor:
    """The physical product of ``tensors``, left to right."""
    out = tensors[0]
    for b in tensors[1:]:
        out = make(_full(_matmul(out, b, levels), levels), levels)
    return out._value if type(out) is BatchedTensor else out


@rule("rot90")
def rot90_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    got = _params(args, kwargs, ("k", "dims"))
    self = args[0]
    if got is None or type(self) is not BatchedTensor:
        return NotImplemented
    dims = tuple(got.get("dims", (0, 1)))
    rank = self.dim()
    if len(dims) != 2 or rank < 2 or not all(isinstance(d, int) and -rank <= d < rank
                                             for d in dims):
        return NotImplemented
    k = len(self._levels)
    return make(hooked(self._value, got.get("k", 1), [wrap_dim(d, rank) + k for d in dims]),
                self._levels)


@rule("kron")
def kron_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Each dim of ``a`` interleaved with the same dim of ``b``, their product reshaped."""
    if kwargs or len(args) != 2 or not all(isinstance(t, Tensor) for t in args):
        return NotImplemented
    a, b = args
    rank, k = max(a.dim(), b.dim()), len(levels)
    pa, pb = physical(a, levels, rank), physical(b, levels, rank)
    sa, sb = tuple(pa.shape[k:]), tuple(pb.shape[k:])
    pa = pa.reshape(tuple(pa.shape[:k]) + tuple(x for s in sa for x in (s, 1)))
    pb = pb.reshape(tuple(pb.shape[:k]) + tuple(x for s in sb for x in (1, s)))
    out = _full(pa * pb, levels)
    sizes = tuple(level.batch_size for level in levels)
    return make(out.reshape(sizes + tuple(x * y for x, y in zip(sa, sb))), levels)


@rule("normalize")
def normalize_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    got = _params(args, kwargs, ("p", "dim", "eps", "out"))
    if got is None or type(args[0]) is not BatchedTensor or got.get("out") is not None:
        return NotImplemented
    self = args[0]
    d = got.get("dim", 1)
    if not isinstance(d, int) or not -max(self.dim(), 1) <= d < max(self.dim(), 1) or \
            self.dim() == 0:
        return NotImplemented
    return make(hooked(self._value, got.get("p", 2.0), _shift(d, self.dim(), len(levels)),
                       got.get("eps", 1e-12)), self._levels)


@rule("glu")
def glu_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    d = kwargs.get("dim", args[1] if len(args) > 1 else -1)
    if type(self) is not BatchedTensor or set(kwargs) - {"dim"} or len(args) > 2 or \
            not isinstance(d, int) or self.dim() == 0 or not -self.dim() <= d < self.dim():
        return NotImplemented
    return make(hooked(self._value, _shift(d, self.dim(), len(levels))), self._levels)


@rule("embedding")
def embedding_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Rows of ``weight`` picked by ``input``: batched indices pick from one table; a table
    per sample (an ensemble, ``vmap(grad(...))``) is indexed with each sample's indices."""
    got = _params(args, kwargs, ("weight", "padding_idx", "max_norm", "norm_type",
                                 "scale_grad_by_freq", "sparse"))
    if got is None or len(args) < 2 or got.get("max_norm") is not None or got.get("sparse"):
        return NotImplemented
    input, weight = args[0], got["weight"]
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor) or weight.dim() != 2 \
            or input.dtype.is_floating_point:
        return NotImplemented
    if type(weight) is not BatchedTensor:
        return make(hooked(physical(input, levels), *args[1:], **kwargs), levels)
    if len(levels) != 1:
        return NotImplemented
    from .._creation import arange

    table = full_physical(weight, levels)  # (B, V, D)
    idx = full_physical(input, levels)
    rows = arange(levels[0].batch_size).reshape((-1,) + (1,) * input.dim())
    if bool((idx._data < 0).any()) or bool((idx._data >= weight.shape[0]).any()):
        return NotImplemented  # the op's own index error, per sample
    return make(table[rows, idx], levels)


@rule("t_", "transpose_", "swapdims_", "swapaxes_", "squeeze_", "unsqueeze_")
def view_inplace_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """An in-place view op changes the batched value's shape: its out-of-place form's."""
    self = args[0]
    if type(self) is not BatchedTensor:
        return NotImplemented
    out = getattr(self, _name(hooked)[:-1])(*args[1:], **kwargs)
    if type(out) is not BatchedTensor or out._levels != self._levels:
        return NotImplemented
    self._value = out._value
    if getattr(self, "_bdims", None) is not None:
        del self._bdims  # Note [Printed batch dims]: the dims the input had are gone
    return self


@rule("masked_fill")
def masked_fill_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """A batched fill value is one number per sample: ``where`` over the lined-up values."""
    if kwargs or len(args) != 3:
        return NotImplemented
    self, mask, value = args
    if type(value) is not BatchedTensor:  # one fill value: it stays 0-dim
        rank = max(self.dim(), mask.dim()) if isinstance(mask, Tensor) else self.dim()
        if type(self) is not BatchedTensor and rank > self.dim():
            return NotImplemented
        return make(hooked(physical(self, levels, rank), physical(mask, levels, rank), value),
                    levels)
    if value.dim() != 0 or not isinstance(mask, Tensor):
        return NotImplemented
    from .._ops.pointwise import where

    rank = max(self.dim(), mask.dim())
    x = physical(self, levels, rank)
    fill = physical(value, levels, rank).to(self.dtype)
    return make(where(physical(mask, levels, rank), fill, x), levels)


@rule("view_as_complex", "view_as_real")
def complex_view_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """The pair of floats is the sample's last dim, also the physical value's.  A batch dim
    that was the input's last (``in_dims=-1``) leaves it strided, and the view is refused,
    as torch's is."""
    self = args[0]
    if type(self) is not BatchedTensor or kwargs or len(args) != 1:
        return NotImplemented
    return make(hooked(self._value), self._levels)


@rule("permute")
def permute_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    dims = _sizes(args[1:]) if not kwargs else _sizes((kwargs.get("dims"),))
    if type(self) is not BatchedTensor or dims is None or len(dims) != self.dim():
        return NotImplemented
    k, rank = len(self._levels), self.dim()
    return make(hooked(self._value, tuple(range(k)) + tuple(wrap_dim(d, rank) + k for d in dims)),
                self._levels)


@rule("t")
def t_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if type(self) is not BatchedTensor or self.dim() > 2:
        return NotImplemented
    k = len(self._levels)
    if self.dim() < 2:
        return make(self._value.view(self._value.shape), self._levels)
    return make(self._value.transpose(k, k + 1), self._levels)


@rule("T", "mT")
def transpose_property(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    k, rank = len(self._levels), self.dim()
    if rank < 2:
        return NotImplemented if _name(hooked) == "mT" else make(self._value, self._levels)
    value = self._value
    if rank == 2 or (getattr(hooked, "__name__", "") == "mT"):
        return make(value.transpose(k + rank - 2, k + rank - 1), self._levels)
    return make(value.permute(tuple(range(k)) + tuple(range(k + rank - 1, k - 1, -1))),
                self._levels)


@rule("__getitem__")
def getitem_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self, index = args
    if type(self) is not BatchedTensor:
        return NotImplemented
    items = index if type(index) is tuple else (index,)
    advanced = [i for i, x in enumerate(items)
                if isinstance(x, (Tensor, list, np.ndarray)) or x is True or x is False]
    if any(type(x) is BatchedTensor for x in items):
        return NotImplemented
    if len(advanced) > 1 and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return NotImplemented  # separated index tensors move their dims to the front
    k = len(self._levels)
    return make(hooked(self._value, (slice(None),) * k + items), self._levels)


@rule("__setitem__")
def setitem_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self, index, value = args
    if type(self) is not BatchedTensor:
        return NotImplemented
    items = index if type(index) is tuple else (index,)
    if any(isinstance(x, (Tensor, list, np.ndarray)) or isinstance(x, bool) for x in items):
        return NotImplemented
    region = self[index]
    k = len(self._levels)
    hooked(self._value, (slice(None),) * k + items,
           line_up_to(value, self._levels, region.dim()))
    return None


@rule("stack", "cat", "concat", "concatenate")
def stack_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if not args or not isinstance(args[0], (list, tuple)) or not args[0]:
        return NotImplemented
    name = _name(hooked)
    tensors = args[0]
    d = kwargs.get("dim", args[1] if len(args) > 1 else 0)
    if not isinstance(d, int) or len(args) > 2 or set(kwargs) - {"dim"}:
        return NotImplemented
    rank = tensors[0].dim()
    if any(t.dim() != rank for t in tensors):
        return NotImplemented  # cat's legacy empty 1-d tensors
    k = len(levels)
    shifted = wrap_dim(d, rank + (name == "stack")) + k
    phys = [full_physical(t, levels) for t in tensors]
    return make(hooked(phys, shifted), levels)


# -- matrix products ------------------------------------------------------------------------

def _matmul(a: Any, b: Any, levels: tuple) -> Tensor:
    """``a @ b`` per sample, on physical values, by matmul's own broadcasting."""
    from .._ops.matmul import matmul

    ra, rb = a.dim(), b.dim()
    pa = physical(a, levels)
    pb = physical(b, levels)
    k = len(levels)
    if ra == 1:
        pa = pa.unsqueeze(k)
    if rb == 1:
        pb = pb.unsqueeze(-1)
    la, lb = max(ra, 2), max(rb, 2)
    rank = max(la, lb)
    pa = _pad_logical(pa, k, rank - la)
    pb = _pad_logical(pb, k, rank - lb)
    out = matmul(pa, pb)
    if rb == 1:
        out = out.squeeze(-1)
    if ra == 1:
        out = out.squeeze(-2 if rb != 1 else -1)
    return out


def _pad_logical(p: Tensor, k: int, pad: int) -> Tensor:
    if pad <= 0:
        return p
    shape = tuple(p.shape)
    return p.reshape(shape[:k] + (1,) * pad + shape[k:])


@rule("matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "mv", "dot", "inner_product")
def matmul_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if len(args) != 2 or kwargs or not all(isinstance(a, Tensor) for a in args):
        return NotImplemented
    a, b = args
    name = _name(hooked)
    if name == "__rmatmul__":
        a, b = b, a
    ra, rb = a.dim(), b.dim()
    wants = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1)}.get(name)
    if wants is not None and (ra, rb) != wants:
        return NotImplemented  # the op's own error, per sample
    if ra == 0 or rb == 0 or a.dtype != b.dtype:
        return NotImplemented
    if a.shape[-1] != b.shape[-2 if rb > 1 else -1]:
        return NotImplemented
    return make(_matmul(a, b, levels), levels)


# Note [Per-sample parameters, fast]
# ``vmap(grad(loss))`` over a model hands every layer its parameters expanded to the batch
# (Note [grad under a batched vmap] in ``_transforms``), so ``linear`` and ``cross_entropy``
# meet batched weights and one-row samples on every call.  Their rules check that case on
# the physical NumPy shapes first and call the unchecked op bodies (``__wrapped__``: the
# arguments are known to bind) -- the per-sample gradient's cost is these calls' Python
# overhead, so the general paths below, with their logical-shape reads, are for the rest.

def _unchecked(fn: Callable) -> Callable:
    """An op's body without its signature check and vmap dispatch (a registry entry, which
    has neither, is itself)."""
    return getattr(fn, "__wrapped__", fn)


def _per_sample_linear(input: Any, weight: Any, bias: Any) -> Any:
    """``linear`` of one level, input (B, [1,] in) and weight (B, out, in) batched, bias
    (B, out) batched or absent: one ``baddbmm`` (or ``bmm``); None when it does not apply."""
    from .._ops import matmul as _matmul_ops, shape as _shape

    xv, wv = input._value, weight._value
    x, w = xv._data, wv._data
    if w.ndim != 3 or x.ndim not in (2, 3) or x.shape[-1] != w.shape[2] or x.dtype != w.dtype \
            or x.shape[0] != w.shape[0] or weight._levels != input._levels:
        return None
    if bias is not None:
        if type(bias) is not BatchedTensor or bias._levels != input._levels:
            return None
        bv = bias._value
        if bv._data.ndim != 2 or bv._data.shape[1] != w.shape[1] or bv._data.dtype != x.dtype:
            return None
    x3 = xv if x.ndim == 3 else _unchecked(_shape.unsqueeze)(xv, 1)
    w_t = _unchecked(_shape.transpose)(wv, 1, 2)
    if bias is None:
        out = _unchecked(_matmul_ops.bmm)(x3, w_t)
    else:
        out = _unchecked(_matmul_ops.baddbmm)(_unchecked(_shape.unsqueeze)(bv, 1), x3, w_t)
    if x.ndim == 2:
        out = _unchecked(_shape.squeeze)(out, 1)
    return make(out, input._levels)


@rule("linear")
def linear_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if "out" in kwargs:
        return NotImplemented
    input, weight = args[0], args[1]
    if len(levels) == 1 and type(weight) is BatchedTensor and type(input) is BatchedTensor \
            and not kwargs:  # Note [Per-sample parameters, fast]
        out = _per_sample_linear(input, weight, args[2] if len(args) > 2 else None)
        if out is not None:
            return out
    bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor) \
            or weight.dim() not in (1, 2):
        return NotImplemented
    if input.dim() == 0 or input.shape[-1] != weight.shape[-1] or input.dtype != weight.dtype:
        return NotImplemented
    if type(weight) is not BatchedTensor and (bias is None or type(bias) is not BatchedTensor):
        # one weight for every sample: the samples are rows of one physical input
        k = len(levels)
        x = physical(input, levels)
        if x.dim() - k == 1 and k > 0:
            lead = tuple(x.shape[:k])
            out = hooked(x.reshape((-1, x.shape[-1])), weight, bias)
            return make(out.reshape(lead + tuple(out.shape[1:])), levels)
        return make(hooked(x, weight, bias), levels)
    if len(levels) == 1 and weight.dim() == 2 and input.dim() in (1, 2) and \
            (bias is None or bias.dim() == 1):
        # one weight per sample: a batched matrix product, the bias added by it (baddbmm)
        from .._ops.matmul import baddbmm, bmm

        x = full_physical(input, levels)
        if input.dim() == 1:
            x = x.unsqueeze(1)
        w_t = full_physical(weight, levels).transpose(1, 2)
        if bias is None:
            out = bmm(x, w_t)
        else:
            b = physical(bias, levels)
            out = baddbmm(b.unsqueeze(-2), x, w_t)
        return make(out.squeeze(1) if input.dim() == 1 else out, levels)
    w_t = _transpose_last(weight) if weight.dim() == 2 else weight
    out = _matmul(input, w_t, levels)
    if bias is not None:
        rank = input.dim() if weight.dim() == 2 else input.dim() - 1
        out = out + physical(bias, levels, max(_ldim(bias), rank))
    return make(out, levels)


def _transpose_last(w: Any) -> Any:
    if type(w) is BatchedTensor:
        k = len(w._levels)
        return make(w._value.transpose(k, k + 1), w._levels)
    return w.t()


@rule("einsum")
def einsum_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Each level gets a letter the equation does not use, in front of the subscripts of the
    operands batched there and of the output (an implicit output made explicit first)."""
    if kwargs or not args or not isinstance(args[0], str):
        return NotImplemented
    equation = args[0].replace(" ", "")
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) \
        else list(args[1:])
    if "->" in equation:
        inputs, output = equation.split("->")
    else:
        inputs = equation
        letters = inputs.replace(",", "").replace("...", "")
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    specs = inputs.split(",")
    if len(specs) != len(operands) or not all(isinstance(o, Tensor) for o in operands):
        return NotImplemented
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            if c not in equation]
    if len(free) < len(levels):
        return NotImplemented
    letter = dict(zip(levels, free))
    new_specs, values = [], []
    for spec, o in zip(specs, operands):
        own = o._levels if type(o) is BatchedTensor else ()
        new_specs.append("".join(letter[level] for level in own) + spec)
        values.append(o._value if type(o) is BatchedTensor else o)
    out_spec = "".join(letter[level] for level in levels) + output
    return make(hooked(",".join(new_specs) + "->" + out_spec, *values), levels)


# -- losses ---------------------------------------------------------------------------------

def _reduction(kwargs: dict, args: tuple, pos: int) -> Any:
    if "reduction" in kwargs:
        return kwargs["reduction"]
    if len(args) > pos:
        return args[pos]
    return "mean"


@rule("cross_entropy", "nll_loss")
def class_loss_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """The per-sample losses of the flattened samples, reduced per sample."""
    input, target = args[0], args[1]
    weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
    if len(args) > 3 or set(kwargs) - {"weight", "ignore_index", "reduction", "label_smoothing"}:
        return NotImplemented
    if kwargs.get("label_smoothing", 0.0) or type(weight) is BatchedTensor:
        return NotImplemented
    if not isinstance(target, Tensor) or target.dtype.is_floating_point \
            or input.dim() not in (1, 2) or target.dim() != input.dim() - 1:
        return NotImplemented
    reduction = kwargs.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        return NotImplemented
    ignore = kwargs.get("ignore_index", -100)
    if weight is None and type(input) is BatchedTensor and type(target) is BatchedTensor \
            and input._levels == target._levels and len(levels) == 1:
        # Note [Per-sample parameters, fast]: samples of one row, (1, C) and (1,)
        xv, tv = input._value, target._value
        x_np, t_np = xv._data, tv._data
        if x_np.ndim == 3 and x_np.shape[1] == 1 and t_np.ndim == 2 and t_np.shape[1] == 1 \
                and t_np.shape[0] == x_np.shape[0] and not (t_np == ignore).any():
            # the mean (or sum) of one loss is that loss; an ignored target would make the
            # mean 0 / 0, so it takes the general path
            from .._ops import shape as _shape

            flat_x = _unchecked(_shape.select)(xv, 1, 0)
            flat_t = _unchecked(_shape.select)(tv, 1, 0)
            losses = hooked(flat_x, flat_t, None, ignore_index=ignore, reduction="none")
            return make(losses, levels)
    k = len(levels)
    x = full_physical(input, levels)
    t = full_physical(target, levels)
    batch = tuple(x.shape[:k])
    classes = x.shape[-1]
    flat_x = x.reshape((-1, classes))
    flat_t = t.reshape((-1,))
    losses = hooked(flat_x, flat_t, weight, ignore_index=ignore, reduction="none")
    per = losses.reshape(batch + tuple(input.shape[:-1]))
    if reduction == "none":
        return make(per, levels)
    n = input.dim() - 1
    dims = tuple(range(k, k + n))
    if reduction == "mean" and weight is None and dims and \
            not bool((t._data == ignore).any()):  # every target counts: a plain mean
        return make(per.mean(dims), levels)
    total = per.sum(dims) if dims else per
    if reduction == "sum":
        return make(total, levels)
    valid = t != ignore
    if weight is not None:
        w = weight[t.clamp(0, classes - 1)] * valid
    else:
        w = valid.to(x.dtype)
    count = w.sum(dims) if dims else w
    return make(total / count, levels)


@rule("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
def regression_loss_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    input, target = args[0], args[1]
    if len(args) > 2 or set(kwargs) - {"reduction", "beta", "delta"}:
        return NotImplemented
    if not isinstance(target, Tensor) or tuple(input.shape) != tuple(target.shape):
        return NotImplemented  # torch's broadcast warning, per sample
    reduction = kwargs.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        return NotImplemented
    k = len(levels)
    rest = {key: v for key, v in kwargs.items() if key != "reduction"}
    # both at the full batch: per sample the shapes match, so the loss's size warning must
    # not see a size-1 batch dim on one side
    per = hooked(full_physical(input, levels), full_physical(target, levels), reduction="none",
                 **rest)
    if reduction == "none":
        return make(per, levels)
    dims = tuple(range(k, per.dim()))
    if not dims:
        return make(per, levels)
    return make(per.sum(dims) if reduction == "sum" else per.mean(dims), levels)


# -- shared helpers of the rules below -------------------------------------------------------

def _tensors_in(args: tuple, kwargs: dict) -> list:
    return [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]


def _only_first_batched(args: tuple, kwargs: dict) -> bool:
    """The first argument is batched, no other tensor argument is."""
    return type(args[0]) is BatchedTensor and not any(
        type(a) is BatchedTensor for a in (*args[1:], *kwargs.values()))


def _full(out: Tensor, levels: tuple) -> Tensor:
    """A physical result whose batch dims may be size 1 (no argument batched there), at the
    full batch sizes."""
    sizes = tuple(level.batch_size for level in levels)
    k = len(levels)
    if tuple(out.shape[:k]) == sizes:
        return out
    return out.expand(sizes + tuple(out.shape[k:]))


def _lined_up(tensors: list, levels: tuple, cores: list) -> list | None:
    """Physical values of ``tensors`` for an op that broadcasts its arguments' leading
    (batch) dims and works on the last ``cores[i]`` dims of argument ``i``: every argument
    gets the same number of leading dims (size-1 ones in front), so the vmap levels stay the
    first dims of the broadcast.  None when a sample is too small for its core."""
    ranks = [t.dim() for t in tensors]
    if any(r < c for r, c in zip(ranks, cores)):
        return None
    lead = max(r - c for r, c in zip(ranks, cores))
    return [physical(t, levels, lead + c) for t, c in zip(tensors, cores)]


# -- linear algebra: ops over the last one or two dims, batched over the leading ones -------

# Note [Matrix ops batch over leading dims]
# torch.linalg's functions take ``(*, m, n)`` inputs and broadcast the leading ``*`` dims, so
# the vmap levels are just more leading dims: a single batched matrix argument runs as it
# is; several are lined up (``_lined_up``) so their batch dims broadcast behind the levels.
# A sample of too few dims, or a case a rule does not know, falls back per sample, where the
# op raises its own error.

_MATRIX_OPS = ("inv", "inverse", "det", "logdet", "slogdet", "cholesky", "qr", "svd", "svdvals",
               "eigh", "eigvalsh", "pinv", "pinverse", "matrix_power", "matrix_exp", "cond",
               "eig", "eigvals", "inv_ex", "cholesky_ex", "lu_factor", "lu", "matrix_rank")


@rule(*_MATRIX_OPS)
def matrix_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Matrix ops batch over leading dims]: one batched matrix argument."""
    if not _only_first_batched(args, kwargs) or args[0].dim() < 2 or "out" in kwargs:
        return NotImplemented
    if any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values())):
        return NotImplemented  # a tolerance tensor (pinv's atol / rtol) has batch dims too
    return wrap_out(hooked(args[0]._value, *args[1:], **kwargs), args[0]._levels)


@rule("matrix_norm")
def matrix_norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if not _only_first_batched(args, kwargs) or "out" in kwargs:
        return NotImplemented
    self = args[0]
    rank = self.dim()
    rest = list(args[1:])
    kw = dict(kwargs)
    dims = kw.pop("dim", rest.pop(1) if len(rest) > 1 else (-2, -1))
    if rank < 2 or not isinstance(dims, (tuple, list)) or len(dims) != 2:
        return NotImplemented
    kw["dim"] = _shift(tuple(dims), rank, len(self._levels))
    return make(hooked(self._value, *rest, **kw), self._levels)


def _solve_rhs(a: Any, b: Any) -> bool:
    """torch's vector case of ``solve(A, B)``: B is a vector (per sample)."""
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


@rule("solve")
def solve_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if len(args) != 2 or set(kwargs) - {"left"} or kwargs.get("left", True) is not True:
        return NotImplemented
    a, b = args
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.dim() < 2:
        return NotImplemented
    vector = _solve_rhs(a, b)
    lined = _lined_up([a, b], levels, [2, 1 if vector else 2])
    if lined is None:
        return NotImplemented
    pa, pb = lined
    if vector:  # solved as a one-column matrix: the physical shapes no longer say "vector"
        return make(_full(hooked(pa, pb.unsqueeze(-1)).squeeze(-1), levels), levels)
    return make(_full(hooked(pa, pb), levels), levels)


@rule("solve_triangular", "cholesky_solve")
def two_matrix_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Two matrix arguments, leading dims broadcast."""
    if len(args) < 2 or not isinstance(args[0], Tensor) or not isinstance(args[1], Tensor) \
            or any(isinstance(a, Tensor) for a in (*args[2:], *kwargs.values())):
        return NotImplemented
    lined = _lined_up([args[0], args[1]], levels, [2, 2])
    if lined is None:
        return NotImplemented
    return make(_full(hooked(*lined, *args[2:], **kwargs), levels), levels)


@rule("vecdot", "linalg_cross", "cross")
def dim_pair_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Two broadcast arguments and a ``dim`` of their broadcast shape."""
    if len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]):
        return NotImplemented
    name = _name(hooked)
    rest = list(args[2:])
    kw = dict(kwargs)
    if "dim" in kw:
        d = kw["dim"]
    elif rest:
        d = rest[0]
    elif name == "cross":
        return NotImplemented  # the first dim of size 3, with torch's warning: per sample
    else:
        d = -1
    if not isinstance(d, int) or set(kw) - {"dim"}:
        return NotImplemented
    a, b = args[0], args[1]
    rank = max(a.dim(), b.dim())
    if rank == 0:
        return NotImplemented
    shifted = wrap_dim(d, rank) + len(levels)
    pa, pb = physical(a, levels, rank), physical(b, levels, rank)
    if rest:
        return make(_full(hooked(pa, pb, shifted), levels), levels)
    return make(_full(hooked(pa, pb, dim=shifted), levels), levels)


# -- norms and distances --------------------------------------------------------------------

def _norm_kwargs(args: tuple, kwargs: dict, names: tuple) -> dict | None:
    """The arguments after ``input``, by name (positional ones named in order)."""
    if len(args) - 1 > len(names):
        return None
    got = dict(zip(names, args[1:]))
    for key, v in kwargs.items():
        if key in got or key not in names:
            return None
        got[key] = v
    return got


def _vector_norm_over(self: BatchedTensor, ord: Any, dim: Any, keepdim: bool,
                      dtype: Any) -> Any:
    from .._ops.reduction import vector_norm

    k, rank = len(self._levels), self.dim()
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        if rank == 0:
            return NotImplemented
        dims: Any = tuple(range(k, k + rank))
    else:
        if rank == 0:
            return NotImplemented
        dims = _shift(dim, rank, k)
    kw = {"keepdim": keepdim}
    if dtype is not None:
        kw["dtype"] = dtype
    return make(vector_norm(self._value, ord, dims, **kw), self._levels)


@rule("vector_norm")
def vector_norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if not _only_first_batched(args, kwargs):
        return NotImplemented
    got = _norm_kwargs(args, kwargs, ("ord", "dim", "keepdim", "dtype"))
    if got is None:
        return NotImplemented
    return _vector_norm_over(args[0], got.get("ord", 2), got.get("dim"),
                             got.get("keepdim", False), got.get("dtype"))


@rule("norm")
def norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """``Tensor.norm`` / ``torch.norm`` (p, dim, keepdim, dtype) and ``torch.linalg.norm``
    (ord, dim, keepdim, dtype): the vector norms; matrix norms by ``matrix_norm``."""
    if not _only_first_batched(args, kwargs):
        return NotImplemented
    self = args[0]
    linalg_norm = "linalg" in str(getattr(hooked, "__module__", "")) or \
        "decompositions" in str(getattr(hooked, "__module__", ""))
    if linalg_norm:
        got = _norm_kwargs(args, kwargs, ("ord", "dim", "keepdim"))
        if got is None or set(kwargs) - {"ord", "dim", "keepdim"}:
            return NotImplemented
        ord, dim, keepdim = got.get("ord"), got.get("dim"), got.get("keepdim", False)
        if ord is None:
            return _vector_norm_over(self, 2, dim, keepdim, None)
        as_matrix = (dim is None and self.dim() == 2) or \
            (isinstance(dim, (tuple, list)) and len(dim) == 2)
        if as_matrix:
            from .._ops.linalg import matrix_norm

            k, rank = len(self._levels), self.dim()
            dims = (k, k + 1) if dim is None else _shift(tuple(dim), rank, k)
            return make(matrix_norm(self._value, ord, dims, keepdim), self._levels)
        if dim is None and self.dim() != 1:
            return NotImplemented  # torch's error: per sample
        return _vector_norm_over(self, ord, dim, keepdim, None)
    got = _norm_kwargs(args, kwargs, ("p", "dim", "keepdim", "dtype"))
    if got is None:
        return NotImplemented
    p = got.get("p", "fro")
    if p == "fro":
        dim = got.get("dim")
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            return NotImplemented
        p = 2
    if isinstance(p, str) or isinstance(p, bool) or not isinstance(p, (int, float)):
        return NotImplemented  # 'nuc': a matrix norm, per sample
    return _vector_norm_over(self, p, got.get("dim"), bool(got.get("keepdim", False)),
                             got.get("dtype"))


@rule("dist")
def dist_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """``norm(a - b, p)`` over every element of the broadcast samples."""
    if len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]) or \
            set(kwargs) - {"p"} or len(args) > 3:
        return NotImplemented
    a, b = args[0], args[1]
    if a.dtype != b.dtype or not a.dtype.is_floating_point:
        return NotImplemented
    p = kwargs.get("p", args[2] if len(args) > 2 else 2)
    rank = max(a.dim(), b.dim())
    if rank == 0:
        return NotImplemented
    diff = make(_full(physical(a, levels, rank) - physical(b, levels, rank), levels), levels)
    return _vector_norm_over(diff, p, None, False, None)


@rule("pairwise_distance", "cosine_similarity")
def pair_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Ops over the last dim (pairwise_distance) or a given ``dim`` (cosine_similarity) of
    broadcast arguments: lined up to one rank, the dim counted from the end."""
    if len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]):
        return NotImplemented
    a, b = args[0], args[1]
    rank = max(a.dim(), b.dim())
    if rank == 0:
        return NotImplemented
    name = _name(hooked)
    rest = list(args[2:])
    kw = dict(kwargs)
    if name == "cosine_similarity":
        d = kw.pop("dim", rest.pop(0) if rest else 1)
        if not isinstance(d, int) or not -rank <= d < rank:
            return NotImplemented
        kw["dim"] = wrap_dim(d, rank) - rank  # from the end: the levels stay in front
    elif a.dim() != b.dim() or rank < 1:
        return NotImplemented  # pairwise_distance's 1-D / 0-D special cases: per sample
    out = hooked(physical(a, levels, rank), physical(b, levels, rank), *rest, **kw)
    return make(_full(out, levels), levels)


# -- matrix products with an added term ------------------------------------------------------

def _scaled_sum(prod: Tensor, input: Any, levels: tuple, rank: int, beta: Any,
                alpha: Any) -> Tensor:
    """``beta * input + alpha * prod`` on physical values (``input`` ignored at beta 0)."""
    out = prod if alpha == 1 else prod * alpha
    if beta != 0:
        term = physical(input, levels, rank)
        out = out + (term if beta == 1 else term * beta)
    return _full(out, levels)


def _product_args(args: tuple, kwargs: dict, ranks: tuple) -> tuple | None:
    """(input, a, b, beta, alpha) of an addmm-like call, when its shapes and dtypes are the
    per-sample op's valid ones (else None: per sample, for the op's own error)."""
    if len(args) != 3 or set(kwargs) - {"beta", "alpha"}:
        return None
    input, a, b = args
    if not all(isinstance(t, Tensor) for t in args):
        return None
    if not (input.dtype == a.dtype == b.dtype) or not a.dtype.is_floating_point:
        return None
    if (a.dim(), b.dim()) != ranks[1:] or input.dim() > ranks[0]:
        return None
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    if isinstance(beta, Tensor) or isinstance(alpha, Tensor):
        return None
    return input, a, b, beta, alpha


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


@rule("addmm", "addmv", "addr", "baddbmm", "addbmm")
def add_product_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """``beta * input + alpha * (a @ b)`` (addmm, addmv, baddbmm), ``... outer(a, b)``
    (addr) and ``... (a @ b).sum(0)`` (addbmm): the product by matmul's broadcasting."""
    name = _name(hooked)
    ranks = {"addmm": (2, 2, 2), "addmv": (1, 2, 1), "addr": (2, 1, 1), "baddbmm": (3, 3, 3),
             "addbmm": (2, 3, 3)}[name]
    got = _product_args(args, kwargs, ranks)
    if got is None:
        return NotImplemented
    input, a, b, beta, alpha = got
    k = len(levels)
    if name == "addr":
        prod = physical(a, levels).unsqueeze(-1) * physical(b, levels).unsqueeze(-2)
        shape = (a.shape[0], b.shape[0])
    else:
        inner = b.shape[0] if b.dim() == 1 else b.shape[-2]
        if a.shape[-1] != inner or (name in ("baddbmm", "addbmm") and a.shape[0] != b.shape[0]):
            return NotImplemented
        prod = _matmul(a, b, levels)
        if name == "addbmm":
            prod = prod.sum(k)
        shape = tuple(prod.shape[k:])
    if not _broadcasts_to(tuple(input.shape), shape):
        return NotImplemented
    return make(_scaled_sum(prod, input, levels, len(shape), beta, alpha), levels)


@rule("outer", "ger")
def outer_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if len(args) != 2 or kwargs or not all(isinstance(a, Tensor) for a in args):
        return NotImplemented
    a, b = args
    if a.dim() != 1 or b.dim() != 1:
        return NotImplemented
    out = physical(a, levels).unsqueeze(-1) * physical(b, levels).unsqueeze(-2)
    return make(_full(out, levels), levels)


@rule("trace")
def trace_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if len(args) != 1 or kwargs or type(self) is not BatchedTensor or self.dim() != 2:
        return NotImplemented
    k = len(self._levels)
    return make(self._value.diagonal(0, k, k + 1).sum(-1), self._levels)


# -- gather / scatter / index ops ------------------------------------------------------------

# Note [Index ops under vmap]
# The index ops address one dim of a sample; the vmap levels are more dims in front, so the
# ``dim`` moves past them and every tensor argument that is indexed alongside the input
# (gather's and scatter's index and src, index_add's source) is taken at the full batch:
# an unbatched one is expanded (the same indices for each sample).  A 1-D ``index`` of
# index_select / index_add / index_copy / index_fill addresses the dim itself and stays as
# it is; a batched one (other indices per sample) falls back per sample.

def _dim_of(args: tuple, kwargs: dict, pos: int = 1) -> Any:
    return kwargs["dim"] if "dim" in kwargs else (args[pos] if len(args) > pos else None)


@rule("index_select")
def index_select_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if len(args) != 3 or kwargs:
        return NotImplemented
    self, d, index = args
    if type(self) is not BatchedTensor or type(index) is BatchedTensor or \
            not isinstance(d, int) or self.dim() == 0:
        return NotImplemented
    return make(hooked(self._value, _shift(d, self.dim(), len(levels)), index), levels)


@rule("gather")
def gather_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    if len(args) != 3 or set(kwargs) - {"sparse_grad"}:
        return NotImplemented
    self, d, index = args
    if not isinstance(self, Tensor) or not isinstance(index, Tensor) or \
            not isinstance(d, int) or self.dim() == 0 or index.dim() != self.dim():
        return NotImplemented
    return make(hooked(full_physical(self, levels), _shift(d, self.dim(), len(levels)),
                       full_physical(index, levels), **kwargs), levels)


@rule("take_along_dim")
def take_along_dim_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    d = _dim_of(args, kwargs, 2)
    if len(args) < 2 or not isinstance(d, int) or set(kwargs) - {"dim"} or len(args) > 3:
        return NotImplemented
    self, index = args[0], args[1]
    if not isinstance(index, Tensor) or self.dim() != index.dim() or self.dim() == 0:
        return NotImplemented
    rank = self.dim()
    return make(_full(hooked(physical(self, levels, rank), physical(index, levels, rank),
                             dim=_shift(d, rank, len(levels))), levels), levels)


_SCATTERS = ("scatter", "scatter_add", "scatter_reduce")


@rule(*_SCATTERS, *(n + "_" for n in _SCATTERS))
def scatter_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Index ops under vmap]: input, index and src at the full batch."""
    if len(args) < 3 or set(kwargs) - {"src", "value", "reduce", "include_self"}:
        return NotImplemented
    self, d, index = args[0], args[1], args[2]
    if not isinstance(d, int) or not isinstance(index, Tensor) or self.dim() == 0 or \
            index.dim() != self.dim():
        return NotImplemented
    rest = list(args[3:])
    kw = dict(kwargs)
    src = kw.get("src", rest[0] if rest else None)
    if isinstance(src, Tensor):
        if src.dim() != self.dim():
            return NotImplemented
        if "src" in kw:
            kw["src"] = full_physical(src, levels)
        else:
            rest[0] = full_physical(src, levels)
    elif type(kw.get("value")) is BatchedTensor:
        return NotImplemented
    shifted = _shift(d, self.dim(), len(levels))
    if is_inplace(_name(hooked)):
        if type(self) is not BatchedTensor or self._levels != levels:
            return NotImplemented
        hooked(self._value, shifted, full_physical(index, levels), *rest, **kw)
        return self
    return make(hooked(full_physical(self, levels), shifted, full_physical(index, levels), *rest,
                       **kw), levels)


_INDEX_OPS = ("index_add", "index_copy", "index_fill")


@rule(*_INDEX_OPS, *(n + "_" for n in _INDEX_OPS))
def index_op_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Index ops under vmap]: a plain 1-D (or 0-D) index, the source at the full
    batch; index_fill's value a number or a plain 0-D tensor."""
    if len(args) != 4 or set(kwargs) - {"alpha"}:
        return NotImplemented
    self, d, index, other = args
    name = _name(hooked).rstrip("_")
    if not isinstance(d, int) or type(index) is BatchedTensor or self.dim() == 0:
        return NotImplemented
    if name == "index_fill":
        if type(other) is BatchedTensor:
            return NotImplemented
    elif not isinstance(other, Tensor) or other.dim() != self.dim():
        return NotImplemented
    else:
        other = full_physical(other, levels)
    shifted = _shift(d, self.dim(), len(levels))
    if is_inplace(_name(hooked)):
        if type(self) is not BatchedTensor or self._levels != levels:
            return NotImplemented
        hooked(self._value, shifted, index, other, **kwargs)
        return self
    return make(hooked(full_physical(self, levels), shifted, index, other, **kwargs), levels)


@rule("select_scatter", "slice_scatter", "diagonal_scatter")
def view_scatter_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """``src`` written into a view (select / slice / diagonal) of ``input``: both at the full
    batch, the view's dims moved past the levels."""
    if len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]):
        return NotImplemented
    self, src = args[0], args[1]
    name = _name(hooked)
    rank, k = self.dim(), len(levels)
    if rank == 0:
        return NotImplemented
    names = {"select_scatter": ("dim", "index"), "slice_scatter": ("dim", "start", "end", "step"),
             "diagonal_scatter": ("offset", "dim1", "dim2")}[name]
    got = dict(zip(names, args[2:]))
    for key, v in kwargs.items():
        if key not in names or key in got:
            return NotImplemented
        got[key] = v
    defaults = {"dim": 0, "dim1": 0, "dim2": 1}
    for key in ("dim", "dim1", "dim2"):
        if key in names:
            d = got.get(key, defaults[key])
            if not isinstance(d, int) or not -rank <= d < rank:
                return NotImplemented
            got[key] = wrap_dim(d, rank) + k
    return make(hooked(full_physical(self, levels), full_physical(src, levels), **got), levels)


# -- convolutions, pools and other ops with an optional leading batch dim -------------------

# Note [Ops with a batch dim of their own]
# Convolutions and pools take ``(N, C, *spatial)`` or an unbatched ``(C, *spatial)``; with
# their weights unbatched, the vmap levels (and N) flatten into one N, the op runs once, and
# the output's N unflattens again.  Batched convolution weights (other filters per sample):
# Note [Batched convolution weights].

_SPATIAL = {"conv1d": 1, "conv2d": 2, "conv3d": 3, "conv_transpose1d": 1,
            "conv_transpose2d": 2, "conv_transpose3d": 3, "avg_pool1d": 1, "avg_pool2d": 2,
            "avg_pool3d": 3, "max_pool1d": 1, "max_pool2d": 2, "max_pool3d": 3,
            "max_pool1d_with_indices": 1, "max_pool2d_with_indices": 2,
            "max_pool3d_with_indices": 3, "adaptive_avg_pool1d": 1, "adaptive_avg_pool2d": 2,
            "adaptive_avg_pool3d": 3, "adaptive_max_pool1d": 1, "adaptive_max_pool2d": 2,
            "adaptive_max_pool3d": 3}


@rule(*_SPATIAL)
def batch_dim_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Ops with a batch dim of their own]."""
    if not _only_first_batched(args, kwargs):
        if _name(hooked).startswith("conv"):
            return conv_weights_rule(hooked, levels, args, kwargs)
        return NotImplemented
    return _flat_batch(hooked, args, kwargs, _SPATIAL[_name(hooked)])


def _flat_batch(hooked: Callable, args: tuple, kwargs: dict, spatial: int,
                optional_batch: bool = True) -> Any:
    """The op on the first argument's levels (and its own N, if it has one) as one N:
    a per-sample input of ``spatial + 2`` dims, or of ``spatial + 1`` (``optional_batch``)."""
    self = args[0]
    k, rank = len(self._levels), self.dim()
    if rank not in ((spatial + 1, spatial + 2) if optional_batch else (spatial + 2,)):
        return NotImplemented
    value = self._value
    lead_rank = k + (rank == spatial + 2)
    lead = tuple(value.shape[:lead_rank])
    n = 1
    for s in lead:
        n *= s
    if n == 0:
        return NotImplemented
    flat = value.reshape((n,) + tuple(value.shape[lead_rank:]))
    out = hooked(flat, *args[1:], **kwargs)

    def unflatten(o: Any) -> Any:
        if not isinstance(o, Tensor):
            return o
        return o.reshape(lead + tuple(o.shape[1:]))
    if isinstance(out, Tensor):
        return make(unflatten(out), self._levels)
    if isinstance(out, tuple):
        return wrap_out(type(out)(unflatten(o) for o in out), self._levels)
    return NotImplemented


@rule("pixel_shuffle", "pixel_unshuffle")
def leading_dims_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Ops over the last three dims that take any leading dims."""
    if not _only_first_batched(args, kwargs) or args[0].dim() < 3:
        return NotImplemented
    return make(hooked(args[0]._value, *args[1:], **kwargs), args[0]._levels)


def _params(args: tuple, kwargs: dict, names: tuple) -> dict | None:
    """The arguments after ``input`` by name (positional ones in order); None for an
    argument the op does not take (its own error, per sample)."""
    if len(args) - 1 > len(names):
        return None
    got = dict(zip(names, args[1:]))
    for key, v in kwargs.items():
        if key not in names or key in got:
            return None
        got[key] = v
    return got


def _levels_size(levels: tuple) -> int:
    n = 1
    for level in levels:
        n *= level.batch_size
    return n


# Note [Batched convolution weights]
# An ensemble convolves each sample with its own filters.  As torch's rule does, the
# levels go into the channels: input (L.., N, C, *s) becomes (N, L*C, *s), the weights
# (L.., O, C/g, *k) become (L*O, C/g, *k) and the groups L*g, so group ``l*g + j`` sees
# sample l's channels of group j and its filters only; the output's (N, L*O, *s') splits
# back into (L.., N, O, *s').  Transposed convolutions group their input channels the same
# way (weights (L.., C, O/g, *k)), so the same reshapes serve them.

_CONV_PARAMS = ("weight", "bias", "stride", "padding", "dilation", "groups")
_CONV_T_PARAMS = ("weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")


def conv_weights_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Batched convolution weights]."""
    name = _name(hooked)
    transposed = name.startswith("conv_transpose")
    got = _params(args, kwargs, _CONV_T_PARAMS if transposed else _CONV_PARAMS)
    if got is None or len(args) < 2:
        return NotImplemented
    input, weight, bias = args[0], got.pop("weight"), got.pop("bias", None)
    groups = got.get("groups", 1)
    spatial = _SPATIAL[name]
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor) or \
            not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        return NotImplemented
    rank = input.dim()
    if rank not in (spatial + 1, spatial + 2) or weight.dim() != spatial + 2 or \
            input.dtype != weight.dtype or any(s == 0 for s in input.shape):
        return NotImplemented
    channels = input.shape[-spatial - 1]
    wanted = weight.shape[0] if transposed else weight.shape[1] * groups
    if channels != wanted or (transposed and weight.shape[0] % groups):
        return NotImplemented  # the op's own error, per sample
    if bias is not None and (not isinstance(bias, Tensor) or bias.dim() != 1):
        return NotImplemented
    k, n = len(levels), _levels_size(levels)
    x = full_physical(input, levels)
    if rank == spatial + 1:
        x = x.unsqueeze(k)
    shape = tuple(x.shape)
    batch = shape[k]
    x = x.reshape((n,) + shape[k:]).transpose(0, 1)
    x = x.reshape((batch, n * channels) + shape[-spatial:])
    w = full_physical(weight, levels)
    w = w.reshape((n * weight.shape[0],) + tuple(weight.shape[1:]))
    b = None if bias is None else full_physical(bias, levels).reshape((-1,))
    got["groups"] = groups * n
    out = hooked(x, w, b, **got)
    out_shape = tuple(out.shape)
    per = out_shape[1] // n
    out = out.reshape((batch, n, per) + out_shape[2:]).transpose(0, 1)
    out = out.reshape(tuple(shape[:k]) + (batch, per) + out_shape[2:])
    if rank == spatial + 1:
        out = out.squeeze(k)
    return make(out, levels)


# -- normalization, padding, resampling ------------------------------------------------------

# Note [Normalization under vmap]
# layer_norm and group_norm normalize within a sample, so the levels join the sample's own N
# (group_norm) or stay in front (layer_norm); batch_norm normalizes each channel over N and
# the spatial dims, so the levels join the channels instead (as in Note [Batched convolution
# weights]).  Weights per sample (an ensemble; every layer under ``vmap(grad(...))``) are
# applied after the unweighted op, lined up with the channels.  batch_norm in training mode
# with running statistics that are not batched is torch's refusal: it would update them in
# place with every sample's statistics.

BATCH_NORM_MSG = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt module "
    "and do not need eval mode, please see the functorch website for resources on how to "
    "patch your module to work with vmap")


def _affine(out: Tensor, weight: Any, bias: Any, levels: tuple, rank: int, channel: int) -> Any:
    """``out * weight + bias`` on physical values, weights of one logical dim put at the
    sample's ``channel`` dim, or of ``rank - channel`` trailing dims (``channel`` < 0)."""
    def shaped(t: Any) -> Any:
        p = physical(t, levels)
        if channel < 0:
            return physical(t, levels, rank)
        k = len(levels)
        shape = tuple(p.shape)
        return p.reshape(shape[:k] + (1,) * channel + shape[k:] + (1,) * (rank - channel - 1))
    if weight is not None:
        out = out * shaped(weight)
    if bias is not None:
        out = out + shaped(bias)
    return out


def _optional_tensors(*items: Any) -> bool:
    return all(t is None or isinstance(t, Tensor) for t in items)


@rule("layer_norm")
def layer_norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Normalization under vmap]."""
    got = _params(args, kwargs, ("normalized_shape", "weight", "bias", "eps"))
    if got is None or not isinstance(args[0], Tensor):
        return NotImplemented
    input, shape = args[0], got.get("normalized_shape")
    weight, bias, eps = got.get("weight"), got.get("bias"), got.get("eps", 1e-05)
    shape = (shape,) if isinstance(shape, int) else shape
    if not isinstance(shape, (tuple, list)) or not _optional_tensors(weight, bias) or \
            isinstance(eps, Tensor):
        return NotImplemented
    rank = input.dim()
    if not shape or len(shape) > rank or tuple(input.shape[rank - len(shape):]) != tuple(shape):
        return NotImplemented
    x = full_physical(input, levels)
    if type(weight) is not BatchedTensor and type(bias) is not BatchedTensor:
        return make(hooked(x, shape, weight, bias, eps), levels)
    for t in (weight, bias):
        if t is not None and tuple(t.shape) != tuple(shape):
            return NotImplemented
    out = hooked(x, shape, None, None, eps)
    return make(_full(_affine(out, weight, bias, levels, rank, -1), levels), levels)


@rule("group_norm")
def group_norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Normalization under vmap]: the levels join the sample's N."""
    got = _params(args, kwargs, ("num_groups", "weight", "bias", "eps"))
    if got is None or not isinstance(args[0], Tensor):
        return NotImplemented
    input, groups = args[0], got.get("num_groups")
    weight, bias, eps = got.get("weight"), got.get("bias"), got.get("eps", 1e-05)
    rank = input.dim()
    if rank < 2 or not isinstance(groups, int) or not _optional_tensors(weight, bias) or \
            any(t is not None and tuple(t.shape) != (input.shape[1],) for t in (weight, bias)) \
            or 0 in tuple(input.shape):
        return NotImplemented
    k, n = len(levels), _levels_size(levels)
    x = full_physical(input, levels)
    shape = tuple(x.shape)
    flat = x.reshape((n * shape[k],) + shape[k + 1:])
    if type(weight) is not BatchedTensor and type(bias) is not BatchedTensor:
        return make(hooked(flat, groups, weight, bias, eps).reshape(shape), levels)
    out = hooked(flat, groups, None, None, eps).reshape(shape)
    return make(_full(_affine(out, weight, bias, levels, rank, 1), levels), levels)


@rule("batch_norm")
def batch_norm_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Normalization under vmap]: the levels join the channels."""
    got = _params(args, kwargs, ("running_mean", "running_var", "weight", "bias", "training",
                                 "momentum", "eps"))
    if got is None or len(args) < 3 or not isinstance(args[0], Tensor):
        return NotImplemented
    input = args[0]
    mean, var = got.get("running_mean"), got.get("running_var")
    weight, bias = got.get("weight"), got.get("bias")
    training = got.get("training", False)
    momentum, eps = got.get("momentum", 0.1), got.get("eps", 1e-05)
    rank = input.dim()
    if rank < 2 or not _optional_tensors(mean, var, weight, bias) or \
            type(mean) is BatchedTensor or type(var) is BatchedTensor or \
            not isinstance(training, bool) or 0 in tuple(input.shape):
        return NotImplemented
    channels = input.shape[1]
    if any(t is not None and tuple(t.shape) != (channels,) for t in (mean, var, weight, bias)):
        return NotImplemented
    k, n = len(levels), _levels_size(levels)
    x = full_physical(input, levels)
    shape = tuple(x.shape)
    batched_affine = type(weight) is BatchedTensor or type(bias) is BatchedTensor
    if not training:
        if mean is None or var is None:
            return NotImplemented
        flat = x.reshape((n * shape[k],) + shape[k + 1:])
        if not batched_affine:
            return make(hooked(flat, mean, var, weight, bias, False, momentum, eps)
                        .reshape(shape), levels)
        out = hooked(flat, mean, var, None, None, False, momentum, eps).reshape(shape)
        return make(_full(_affine(out, weight, bias, levels, rank, 1), levels), levels)
    if mean is not None or var is not None:
        if type(input) is BatchedTensor:
            raise RuntimeError(BATCH_NORM_MSG)
        # only the weights are batched: the statistics are the one input's, updated once
        out = physical(hooked(input, mean, var, None, None, True, momentum, eps), levels)
        return make(_full(_affine(out, weight, bias, levels, rank, 1), levels), levels)
    # (L.., N, C, *s) -> (N, L*C, *s): each sample's channel is a channel of its own
    inner = (n,) + shape[k:]
    moved = x.reshape(inner).transpose(0, 1).reshape((shape[k], n * channels) + shape[k + 2:])
    w = None if weight is None else full_physical(weight, levels).reshape((-1,))
    b = None if bias is None else full_physical(bias, levels).reshape((-1,))
    out = hooked(moved, None, None, w, b, True, momentum, eps)
    out = out.reshape((shape[k], n) + shape[k + 1:]).transpose(0, 1).reshape(shape)
    return make(out, levels)


@rule("pad")
def pad_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Constant padding pads the last dims, behind the levels; the other modes take an
    optional batch dim (Note [Ops with a batch dim of their own])."""
    got = _params(args, kwargs, ("pad", "mode", "value"))
    if got is None or not _only_first_batched(args, kwargs):
        return NotImplemented
    pad, mode = got.get("pad"), got.get("mode", "constant")
    if not isinstance(pad, (tuple, list)) or len(pad) % 2 or \
            not all(isinstance(p, int) and not isinstance(p, bool) for p in pad):
        return NotImplemented
    n = len(pad) // 2
    self = args[0]
    if mode == "constant":
        if n > self.dim():
            return NotImplemented
        return make(hooked(self._value, *args[1:], **kwargs), self._levels)
    if mode not in ("reflect", "replicate", "circular"):
        return NotImplemented
    return _flat_batch(hooked, args, kwargs, n)


@rule("interpolate")
def interpolate_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """``(N, C, *spatial)`` only: the levels join N."""
    if not _only_first_batched(args, kwargs) or args[0].dim() < 3:
        return NotImplemented
    return _flat_batch(hooked, args, kwargs, args[0].dim() - 2, optional_batch=False)


@rule("cdist")
def cdist_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Matrix ops batch over leading dims]: two point sets, leading dims broadcast."""
    if len(args) < 2 or not isinstance(args[0], Tensor) or not isinstance(args[1], Tensor) \
            or any(isinstance(a, Tensor) for a in (*args[2:], *kwargs.values())):
        return NotImplemented
    a, b = args[0], args[1]
    if a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-1] or a.dtype != b.dtype:
        return NotImplemented
    lined = _lined_up([a, b], levels, [2, 2])
    if lined is None:
        return NotImplemented
    return make(_full(hooked(*lined, *args[2:], **kwargs), levels), levels)


# Note [Elementwise losses]
# These losses are an elementwise loss reduced over the sample ('mean', 'sum') or not
# ('none'): the rule asks the op for reduction='none' on the lined-up physical values and
# reduces each sample's logical dims itself.  The operands that pair with ``input`` element
# by element must have its per-sample shape (torch checks or warns on a mismatch: those go
# per sample); weights broadcast against it, so they are lined up to its rank.  The legacy
# ``size_average`` / ``reduce`` arguments go per sample.

# name -> (its parameters after ``input`` in order, the paired operands, the weights)
_ELEMENTWISE_LOSSES = {
    "binary_cross_entropy": (("target", "weight", "size_average", "reduce", "reduction"),
                             ("target",), ("weight",)),
    "binary_cross_entropy_with_logits": (("target", "weight", "size_average", "reduce",
                                          "reduction", "pos_weight"),
                                         ("target",), ("weight", "pos_weight")),
    "soft_margin_loss": (("target", "size_average", "reduce", "reduction"), ("target",), ()),
    "hinge_embedding_loss": (("target", "margin", "size_average", "reduce", "reduction"),
                             ("target",), ()),
    "margin_ranking_loss": (("input2", "target", "margin", "size_average", "reduce",
                             "reduction"), ("input2", "target"), ()),
    "kl_div": (("target", "size_average", "reduce", "reduction", "log_target"), ("target",),
               ()),
}


@rule(*_ELEMENTWISE_LOSSES)
def elementwise_loss_rule(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """Note [Elementwise losses]."""
    name = _name(hooked)
    params, paired, weights = _ELEMENTWISE_LOSSES[name]
    if len(args) - 1 > len(params) or not isinstance(args[0], Tensor):
        return NotImplemented
    got = dict(zip(params, args[1:]))
    for key, v in kwargs.items():
        if key not in params or key in got:
            return NotImplemented
        got[key] = v
    if got.pop("size_average", None) is not None or got.pop("reduce", None) is not None:
        return NotImplemented
    reduction = got.pop("reduction", "mean")
    if reduction not in ("mean", "sum", "none") and not (name == "kl_div"
                                                          and reduction == "batchmean"):
        return NotImplemented
    if name == "kl_div" and reduction == "mean":
        return NotImplemented  # torch's warning about 'mean', per sample
    input = args[0]
    rank = input.dim()
    shape = tuple(input.shape)
    for key in paired:
        other = got.get(key)
        if not isinstance(other, Tensor) or tuple(other.shape) != shape:
            return NotImplemented
        got[key] = full_physical(other, levels)
    for key in weights:
        w = got.get(key)
        if isinstance(w, Tensor):
            if w.dim() > rank:
                return NotImplemented
            got[key] = physical(w, levels, rank)
    k = len(levels)
    first = params[0]
    per = hooked(full_physical(input, levels), got.pop(first), reduction="none", **got)
    if reduction == "none":
        return make(per, levels)
    if rank == 0:
        return NotImplemented if reduction == "batchmean" else make(per, levels)
    dims = tuple(range(k, k + rank))
    if reduction == "sum":
        return make(per.sum(dims), levels)
    if reduction == "batchmean":
        return make(per.sum(dims) / shape[0], levels)
    return make(per.mean(dims), levels)



_register_pointwise()
for _random in _batched.RANDOM_OPS:
    RULES[_random] = _batched.random_op
RULES["normal"] = _batched.random_op  # normal(Tensor mean, ...) on a batched mean
