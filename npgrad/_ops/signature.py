"""torch's argument signatures as data: parsed signature strings, checked once per call, raising
the TypeErrors of torch's Python argument parser.

>>> sig = Overloads.parse(["log(Tensor input, *, Tensor out=None)"])
>>> sig.check((1.5,), {})
Traceback (most recent call last):
    ...
TypeError: log(): argument 'input' (position 1) must be Tensor, not float

Note [Signatures as data]
torch binds every public function and Tensor method through one argument parser, fed with the
op's signature strings, e.g. ``add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor
out=None)``.  A wrong argument type, count or keyword therefore always gets one of a small family
of TypeErrors, worded by the parser rather than by the op: "must be Tensor, not float", "takes 1
positional argument but 2 were given", "got an unexpected keyword argument", "received an
invalid combination of arguments".  npgrad keeps the same strings next to each op (the decorator
``@signature(...)`` below, or an op registry entry) and checks a call against them before the op's
body runs, so no Python or NumPy error escapes for a call torch rejects by type.

The strings use torch's own grammar (the C++ type names of its parser: ``Tensor``, ``Scalar``,
``int64_t``, ``SymInt``, ``double``, ``bool``, ``IntArrayRef[N]``, ``TensorList``,
``ScalarType``, ... with ``?`` for "None allowed", ``=default`` for optional and ``*`` for
keyword-only), so they can be copied from torch's generated bindings unchanged; the printed
names torch uses in its messages (``Number``, ``int``, ``float``, ``tuple of ints``,
``torch.dtype``) come from the types.

Note [Which rules, and why they look odd]
The rules are torch's, including its quirks, because code and tests written for torch match on
the text:
- An int-list parameter accepts a list whose *first* element is an int (later elements are
  checked when the list is unpacked, with the "failed to unpack the object at pos N" text), a
  single int when the parameter has a size (``IntArrayRef[1] dim``), and, when it is the only
  positional parameter, the positional arguments themselves (``view(2, 3)``).
- ``int`` parameters refuse ``bool`` but accept NumPy integers and 0-dim integer tensors that do
  not require grad; ``float`` / ``Number`` accept any Python or NumPy number and 0-dim tensors
  that do not require grad; ``bool`` accepts only ``bool``.
- With several overloads, the first that binds wins; when none does and exactly one overload
  takes that many arguments, that overload's own error is raised, otherwise the "invalid
  combination" listing, where an argument is marked ``!type!`` by a plain match of its Python
  type's name against the printed parameter types (so a ``Number`` or a defaulted parameter is
  always marked, as in torch).
- The missing-argument text says "arguments" for one missing argument, as torch's does.

Note [Deprecated overloads]
Some ops keep an old argument order as a hidden, deprecated overload (``add(Scalar alpha,
Tensor other)|deprecated``).  It changes the errors of every call: an op with one signature
raises that signature's own "missing 1 required positional arguments", an op with several the
"invalid combination" listing of its visible ones (``t.add()``).  npgrad lists these overloads
for that text only: they never bind, so a call in the old order is refused rather than run
with its arguments in the wrong places.

Note [The check's cost]
The check runs on every decorated call, so its common case is short: positional arguments only,
each of a plain accepted type (``type(x) is int``, ``isinstance(x, Tensor)``, ...), the rest of
the parameters optional.  ``compile_fast`` turns an op's overloads, once, at import, into one
straight-line function for exactly that case (one ``if`` per argument count, the tests inline,
the overloads joined by ``or``), because a loop over per-parameter predicates costs several
times as much per call.  Anything else (keywords, a NumPy int, a 0-dim tensor as an int, a
failed test) takes the general path, a direct transcription of torch's binding loop, which
also produces the errors and renames numpy-style keywords (``axis`` -> ``dim``) for the body.
Tensor operators (``__add__`` ...) never go through a check: torch's operators have their own
rules (they return NotImplemented), and they are the hot path.  Callers whose arguments are
already checked (a Tensor method forwarding to its op, an in-place op running its out-of-place
body) call the body directly: ``unchecked(op)``.
"""
from __future__ import annotations

import functools
import operator
import os
from typing import Any, Callable, ParamSpec, Sequence, TypeVar

import numpy as np

from .. import _dtype
from .._device import device as _device_cls
from .._vmap_mode import NOT_BATCHED

_P = ParamSpec("_P")
_R = TypeVar("_R")

# Note [The Tensor class, bound late]
# The op layer sits above the Tensor class, but the Tensor class's own methods are decorated too,
# so this module cannot import ``Tensor``: ``npgrad._tensor`` binds it (``bind_tensor_class``)
# right after defining it, as torch binds its Python Tensor class to its C parser at start-up.


class _Unbound:
    """Placeholder for the Tensor class until npgrad._tensor binds it."""


_TENSOR: Any = _Unbound
_GENERATOR: Any = _Unbound


def bind_tensor_class(cls: type) -> None:
    global _TENSOR
    _TENSOR = cls


def bind_generator_class(cls: type) -> None:
    global _GENERATOR
    _GENERATOR = cls


# torch's (C-level) type names of npgrad's classes, as torch's messages print them
_TORCH_TYPE_NAMES: dict[type, str] = {_dtype.dtype: "torch.dtype", _device_cls: "torch.device"}


def type_name(obj: Any) -> str:
    """The name torch's messages give an argument's type: CPython's ``tp_name`` (``float``,
    ``NoneType``, ``numpy.float64``, ``Tensor``, ``torch.dtype``)."""
    cls = type(obj)
    name = _TORCH_TYPE_NAMES.get(cls)
    if name is not None:
        return name
    if cls is _GENERATOR:
        return "torch._C.Generator"
    if cls.__flags__ & (1 << 9) or cls.__module__ == "builtins":  # a heap (Python-defined) type
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"  # a static C type: tp_name carries its module


# ---------------------------------------------------------------------------------------------
# the argument kinds: how each accepts an object, and its printed name


def _is_np_int(o: Any) -> bool:
    return isinstance(o, np.integer)


def _is_np_scalar(o: Any) -> bool:
    return isinstance(o, (np.integer, np.floating, np.complexfloating, np.bool_))


def _check_long(o: Any) -> bool:
    """torch's ``THPUtils_checkLong``: an int that is not a bool, or a NumPy integer."""
    return (isinstance(o, int) and o is not True and o is not False) or isinstance(o, np.integer)


def _check_index(o: Any) -> bool:
    """torch's ``THPUtils_checkIndex``: an int (not a bool) or anything with ``__index__``."""
    if o is True or o is False:
        return False
    if _check_long(o):
        return True
    if isinstance(o, _TENSOR):
        return o._data.ndim == 0 and o._data.dtype.kind in "iub"
    index = getattr(type(o), "__index__", None)
    if index is None:
        return False
    try:
        index(o)
    except Exception:
        return False
    return True


def _tensor_as_number(o: Any) -> bool:
    return isinstance(o, _TENSOR) and o._data.ndim == 0 and not o.requires_grad


def _ok_tensor(o: Any) -> bool:
    return isinstance(o, _TENSOR)


def _ok_scalar(o: Any) -> bool:
    if isinstance(o, (int, float, complex)) or _is_np_scalar(o):
        return True
    return _tensor_as_number(o)


def _ok_double(o: Any) -> bool:
    if isinstance(o, (int, float)) or _is_np_scalar(o):
        return True
    return _tensor_as_number(o)


def _ok_complex(o: Any) -> bool:
    return isinstance(o, complex) or _ok_double(o)


def _ok_int(o: Any) -> bool:
    if type(o) is int or _check_long(o):
        return True
    return (isinstance(o, _TENSOR) and o._data.ndim == 0 and o._data.dtype.kind in "iu"
            and not o.requires_grad)


def _ok_bool(o: Any) -> bool:
    return o is True or o is False


def _ok_dtype(o: Any) -> bool:
    return isinstance(o, _dtype.dtype) or o in (float, int, bool, complex)


def _ok_device(o: Any) -> bool:
    return _check_long(o) or isinstance(o, (str, _device_cls))


def _ok_str(o: Any) -> bool:
    return isinstance(o, str)


def _ok_generator(o: Any) -> bool:
    return isinstance(o, _GENERATOR)


def _ok_layout(o: Any) -> bool:
    # npgrad has one layout, ``npgrad.strided``, spelled as torch prints it
    return type(o).__name__ == "layout" or o == "torch.strided"


def _ok_memory_format(o: Any) -> bool:
    return type(o).__name__ == "memory_format"


def _ok_object(o: Any) -> bool:
    return True


def _ok_float_list(o: Any) -> bool:
    if not isinstance(o, (tuple, list)):
        return False
    return not o or isinstance(o[0], (int, float, complex)) or _is_np_scalar(o[0])


def _ok_scalar_list(o: Any) -> bool:
    if not isinstance(o, (tuple, list)):
        return False
    for item in o:
        if not (isinstance(item, (int, float, complex)) or _is_np_scalar(item)):
            return False
    return True


# kind -> (printed name, predicate); the int-list and Tensor-list kinds are handled by Param
_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "Tensor": ("Tensor", _ok_tensor),
    "Scalar": ("Number", _ok_scalar),
    "int64_t": ("int", _ok_int),
    "SymInt": ("int", _check_index),
    "double": ("float", _ok_double),
    "complex": ("complex", _ok_complex),
    "TensorList": ("tuple of Tensors", _ok_object),
    "IntArrayRef": ("tuple of ints", _ok_object),
    "SymIntArrayRef": ("tuple of ints", _ok_object),
    "ArrayRef<double>": ("tuple of floats", _ok_float_list),
    "Generator": ("torch.Generator", _ok_generator),
    "bool": ("bool", _ok_bool),
    "PyObject*": ("object", _ok_object),
    "ScalarType": ("torch.dtype", _ok_dtype),
    "Layout": ("torch.layout", _ok_layout),
    "MemoryFormat": ("torch.memory_format", _ok_memory_format),
    "Device": ("torch.device", _ok_device),
    "c10::string_view": ("str", _ok_str),
    "std::string": ("str", _ok_str),
    "ScalarList": ("tuple of Scalars", _ok_scalar_list),
}
# the names torch prints, accepted as spellings in signature strings too
_ALIASES = {"Number": "Scalar", "int": "int64_t", "float": "double", "str": "c10::string_view",
            "dtype": "ScalarType", "Dtype": "ScalarType", "Tensor[]": "TensorList",
            "int[]": "IntArrayRef", "SymInt[]": "SymIntArrayRef", "float[]": "ArrayRef<double>",
            "Scalar[]": "ScalarList", "c10::List<::std::optional<Tensor>>": "TensorList",
            "c10::List<std::optional<Tensor>>": "TensorList", "object": "PyObject*"}

# numpy-style spellings torch accepts for these parameter names (torch's compatibility table)
_NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
                "other": ("x2",)}

# functions whose Tensor parameters also take Python numbers (torch's list)
_NUMBERS_AS_TENSORS = frozenset(
    f"{base}{suffix}" for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract",
                                   "true_divide", "floor_divide")
    for suffix in ("", "_", "_out")) | {"to", "_to_copy", "copy_"}


class Param:
    """One parameter of a signature: its kind, name, and whether it may be omitted or None."""

    __slots__ = ("kind", "name", "printed_type", "optional", "allow_none", "keyword_only",
                 "size", "default", "numpy_names", "ok", "int_list", "tensor_list")

    def __init__(self, text: str, keyword_only: bool, numbers_as_tensors: bool) -> None:
        type_str, _, rest = text.partition(" ")
        if not rest:
            raise ValueError(f"signature parameter without a type: {text!r}")
        self.allow_none = type_str.endswith("?")
        type_str = type_str.rstrip("?")
        self.size = 0
        if type_str.endswith("]") and not type_str.endswith("[]"):
            type_str, _, size = type_str[:-1].partition("[")
            self.size = int(size)
        kind = _ALIASES.get(type_str, type_str)
        if kind not in _KINDS:
            raise ValueError(f"unknown parameter type {type_str!r} in {text!r}")
        self.kind = kind
        self.printed_type, ok = _KINDS[kind]
        if kind == "Tensor" and numbers_as_tensors:
            ok = _ok_tensor_or_number
        self.ok = ok
        self.int_list = kind in ("IntArrayRef", "SymIntArrayRef")
        self.tensor_list = kind == "TensorList"
        name, eq, default = rest.partition("=")
        self.name = name
        self.optional = bool(eq)
        self.default = default if eq else None
        if default == "None":
            self.allow_none = True
        self.keyword_only = keyword_only
        self.numpy_names = _NUMPY_NAMES.get(name, ())

    def printed(self) -> str:
        text = f"{self.printed_type} {self.name}"
        return f"{text} = {self.default}" if self.optional else text

    def accepts(self, obj: Any, argnum: int) -> tuple[bool, int]:
        """Whether ``obj`` binds to this parameter, and (for an int list whose first element is
        not an int) the index of the failing element, else -1.  A Tensor list with a
        non-Tensor element raises at once, as torch's does."""
        if self.int_list:
            return _is_int_list(obj, self.size)
        if self.tensor_list:
            if not isinstance(obj, (tuple, list)):
                return False, -1
            for i, item in enumerate(obj):
                if not isinstance(item, _TENSOR):
                    raise TypeError(f"expected Tensor as element {i} in argument {argnum}, "
                                    f"but got {type_name(item)}")
            return True, -1
        return self.ok(obj), -1

    def fast_test(self, var: str, helpers: list) -> str:
        """A Python expression, True only where ``accepts`` binds ``var`` without any later
        error (an int list whose elements are all ints); anything else goes the general way.
        Predicates that are not one expression are passed in ``helpers``."""
        kind = self.kind
        if self.int_list:
            test = f"_all_ints({var}, {self.size})"
        elif self.tensor_list:
            test = f"_all_tensors({var})"
        elif kind == "Tensor":
            test = (f"isinstance({var}, _TENSOR)" if self.ok is _ok_tensor
                    else f"(isinstance({var}, _TENSOR) or type({var}) in _NUMBER_TYPES)")
        elif kind == "int64_t" or kind == "SymInt":
            test = f"(type({var}) is int and {_INT64_MIN} <= {var} <= {_INT64_MAX})"
        elif kind == "bool":
            test = f"({var} is True or {var} is False)"
        elif kind == "double":
            test = f"(type({var}) is float or type({var}) is int)"
        elif kind == "Scalar":
            test = (f"(type({var}) in _NUMBER_TYPES and (type({var}) is not int or "
                    f"{_INT64_MIN} <= {var} < {_UINT64_END}))")
        elif kind == "ScalarType":
            test = f"type({var}) is _DTYPE"
        else:
            helpers.append(self.ok)
            test = f"_h{len(helpers) - 1}({var})"
        return f"({var} is None or {test})" if self.allow_none else test


_NUMBER_TYPES = frozenset((int, float, bool, complex))
_DTYPE = _dtype.dtype
# the range of a Python int torch's parser converts: int64 for an int, int64 or uint64 for a
# Scalar (Note [Python ints as scalars] in _ops/_core.py)
_INT64_MIN, _INT64_MAX, _UINT64_END = -2 ** 63, 2 ** 63 - 1, 2 ** 64


def _all_ints(o: Any, size: int) -> bool:
    if type(o) is tuple or type(o) is list:
        for item in o:
            if type(item) is not int:
                return False
        return True
    return size > 0 and type(o) is int and _INT64_MIN <= o <= _INT64_MAX


def _all_tensors(o: Any) -> bool:
    if type(o) is not tuple and type(o) is not list:
        return False
    for item in o:
        if not isinstance(item, _TENSOR):
            return False
    return True


def _ok_tensor_or_number(o: Any) -> bool:
    return isinstance(o, (_TENSOR, int, float, complex)) or _is_np_scalar(o)


def _is_int_list(obj: Any, size: int) -> tuple[bool, int]:
    if isinstance(obj, (tuple, list)):
        first = obj[0] if obj else None
        if not obj or _check_index(first) or (
                isinstance(first, _TENSOR) and first._data.size == 1
                and first._data.dtype.kind in "iub"):  # a one-element integer tensor, any rank
            return True, -1
        return False, 0
    # a single int where the list has a size (``IntArrayRef[1] dim``): an int, or a
    # one-element integer (or bool) tensor, as torch's parser reads it
    if size <= 0:
        return False, -1
    if isinstance(obj, _TENSOR):
        return obj._data.size == 1 and obj._data.dtype.kind in "iub", -1
    return _check_long(obj), -1


def _int_list_element_ok(item: Any) -> bool:
    """How torch unpacks each element of an int list once the list is bound: ints (``True``
    included), NumPy integers, one-element integer tensors, anything with ``__index__``."""
    if isinstance(item, int) or isinstance(item, np.integer):
        return True
    if isinstance(item, _TENSOR):
        return item._data.size == 1 and item._data.dtype.kind in "iub"
    return _check_index(item)


def _int_kind(p: Param) -> bool:
    return p.int_list or p.kind in ("int64_t", "SymInt")


def _needs_int(o: Any) -> bool:
    """Whether an object bound to an int (or int-list) parameter is not yet what the op gets."""
    if isinstance(o, (tuple, list)):
        return any(_needs_int(item) for item in o)
    return isinstance(o, (np.integer, _TENSOR))


def _as_int(o: Any) -> Any:
    return operator.index(o) if isinstance(o, (np.integer, _TENSOR)) else o


def _as_ints(items: Sequence) -> tuple:
    return tuple(_as_int(o) for o in items)


def _as_int_value(o: Any) -> Any:
    if isinstance(o, (tuple, list)):
        return _as_ints(o) if _needs_int(o) else o
    return _as_int(o)


class Signature:
    """One overload: ``name(params)``, parsed from torch's signature grammar."""

    __slots__ = ("name", "params", "min_args", "max_args", "max_pos_args", "hidden",
                 "deprecated", "varargs_int_list", "text", "_int_lists", "binds_fast", "aliases",
                 "positional", "_ints", "_int_positions", "_int_names")

    def __init__(self, text: str) -> None:
        self.text = text
        self.hidden = False
        self.deprecated = False
        body = text
        for suffix in ("|hidden", "|deprecated"):
            if body.endswith(suffix):
                body = body[: -len(suffix)]
                self.hidden = True
                self.deprecated = suffix == "|deprecated"
        open_paren = body.index("(")
        if not body.endswith(")"):
            raise ValueError(f"malformed signature: {text!r}")
        self.name = body[:open_paren].strip()
        inner = body[open_paren + 1:-1].strip()
        numbers = self.name in _NUMBERS_AS_TENSORS
        params: list[Param] = []
        keyword_only = False
        for part in (p.strip() for p in inner.split(", ")) if inner else ():
            if part == "*":
                keyword_only = True
            else:
                params.append(Param(part, keyword_only, numbers))
        self.params = tuple(params)
        self.max_args = len(params)
        self.min_args = sum(1 for p in params if not p.optional)
        self.max_pos_args = sum(1 for p in params if not p.keyword_only)
        self.varargs_int_list = self.max_pos_args == 1 and params[0].int_list
        positional = [p for p in params if not p.keyword_only]
        self._int_lists = any(p.int_list for p in params)
        self._ints = any(p.int_list or p.kind in ("int64_t", "SymInt", "Scalar")
                         for p in params)
        # the int and Scalar parameters, so ``parsed`` visits only their arguments
        self._int_positions = tuple((k, p) for k, p in enumerate(positional)
                                    if p.int_list or p.kind in ("int64_t", "SymInt", "Scalar"))
        self._int_names = {p.name: p for p in params
                           if p.int_list or p.kind in ("int64_t", "SymInt", "Scalar")}
        # numpy-style keyword spellings -> the parameter's own name (torch accepts both)
        self.aliases = {alias: p.name for p in params for alias in p.numpy_names}
        self.positional = tuple(positional)
        self.binds_fast = compile_fast([self])

    def printed(self) -> str:
        """The signature as torch's messages list it: ``(Tensor input, *, Tensor out = None)``."""
        parts = []
        keyword = False
        for p in self.params:
            if p.keyword_only and not keyword:
                parts.append("*")
                keyword = True
            parts.append(p.printed())
        return "(" + ", ".join(parts) + ")"

    def bind(self, args: tuple, kwargs: dict, raise_error: bool) -> bool:
        """torch's binding loop: True when the call binds; else False, or torch's TypeError
        when ``raise_error``.  Int-list elements are checked by ``unpack`` afterwards."""
        nargs = len(args)
        remaining = len(kwargs)
        varargs = self.varargs_int_list
        if nargs > self.max_pos_args and not varargs:
            if raise_error:
                self._extra_args(nargs)
            return False
        arg_pos = 0
        for i, param in enumerate(self.params):
            obj: Any = _MISSING
            is_kwd = False
            if arg_pos < nargs:
                if param.keyword_only:
                    if raise_error:
                        self._extra_args(nargs)
                    return False
                obj = args[arg_pos]
            elif kwargs:
                obj = kwargs.get(param.name, _MISSING)
                for alias in param.numpy_names:
                    if obj is not _MISSING:
                        break
                    obj = kwargs.get(alias, _MISSING)
                is_kwd = True
            varargs_eligible = varargs and arg_pos == 0 and not is_kwd
            if (obj is _MISSING and param.optional) or (obj is None and param.allow_none):
                pass
            elif obj is _MISSING:
                if raise_error:
                    self._missing_args(i)
                return False
            else:
                ok, failed_idx = param.accepts(obj, i)
                if not ok:
                    if varargs_eligible:
                        # the positional arguments themselves as the list: view(2, 3); a
                        # failing element here is reported as the argument's own type
                        if _is_int_list(args, param.size)[0]:
                            arg_pos = nargs
                            continue
                        if nargs > self.max_pos_args:
                            # several positional arguments that are no int list
                            if raise_error:
                                self._extra_args(nargs)
                            return False
                    if not raise_error:
                        return False
                    self._type_error(param, obj, is_kwd, arg_pos, failed_idx)
            if not is_kwd:
                arg_pos += 1
            elif obj is not _MISSING:
                remaining -= 1
        if arg_pos < nargs:  # a list at position 0 and more positional arguments: view((2,), 3)
            if raise_error:
                self._extra_args(nargs)
            return False
        if remaining > 0:
            if raise_error:
                self._extra_kwargs(kwargs, nargs)
            return False
        return True

    def canonical(self, kwargs: dict) -> dict:
        """``kwargs`` with numpy-style spellings (``axis``, ``keepdims``, ``x``) renamed to the
        parameters they bound to, for the op's body."""
        aliases = self.aliases
        if not aliases or not any(k in aliases for k in kwargs):
            return kwargs
        return {aliases.get(k, k) if aliases.get(k, k) not in kwargs else k: v
                for k, v in kwargs.items()}

    def parsed(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments as torch's parser hands them to the op: numpy-style keywords renamed
        (``canonical``), and an int parameter bound from a NumPy integer or an integer tensor
        (alone, in an int list, or as the list's separate arguments: ``new_ones(tensor(2))``)
        given a Python int, as torch's C++ op receives ``int64_t``."""
        kwargs = self.canonical(kwargs)
        if not self._ints:
            return args, kwargs
        if self.varargs_int_list and len(args) > 1:
            self._check_int_ranges(args, kwargs)
            return _as_ints(args), kwargs  # the ints as separate arguments: view(3, 2)
        convert, convert_kw = self._check_int_ranges(args, kwargs)
        names = self._int_names
        if convert:
            args = tuple(_as_int_value(a) if _int_kind(p) else a
                         for p, a in zip(self.positional, args)) + args[len(self.positional):]
        if convert_kw:
            kwargs = {k: _as_int_value(v) if k in names and _int_kind(names[k]) else v
                      for k, v in kwargs.items()}
        return args, kwargs

    @staticmethod
    def _check_int(param: Param, obj: Any) -> bool:
        """torch's conversion of one argument bound to an int or Scalar parameter: a Python
        int out of range raises (a Scalar takes [-2**63, 2**64), an int int64, as the op's C++
        arguments); returns whether an int parameter got a NumPy integer or an integer
        tensor to turn into a Python int."""
        if type(obj) is int:
            if param.kind == "Scalar":
                if obj >= _UINT64_END:
                    raise OverflowError("int too big to convert")
                if obj < _INT64_MIN:
                    raise OverflowError("can't convert negative int to unsigned")
            elif not _INT64_MIN <= obj <= _INT64_MAX:  # an int, or an int list's one int
                raise ValueError("Overflow when unpacking long long")
            return False
        return _int_kind(param) and _needs_int(obj)

    def _check_int_ranges(self, args: tuple, kwargs: dict) -> tuple[bool, bool]:
        """``_check_int`` over every argument bound to an int or Scalar parameter: whether a
        positional and whether a keyword argument needs turning into a Python int."""
        nargs = len(args)
        convert = convert_kw = False
        for k, param in self._int_positions:
            if k < nargs:
                convert = self._check_int(param, args[k]) or convert
        names = self._int_names
        for key, value in kwargs.items():
            named = names.get(key)
            if named is not None:
                convert_kw = self._check_int(named, value) or convert_kw
        return convert, convert_kw

    def unpack(self, args: tuple, kwargs: dict) -> None:
        """The element checks torch runs when it unpacks a bound int list."""
        nargs = len(args)
        arg_pos = 0
        for param in self.params:
            if arg_pos < nargs:
                obj = args[arg_pos]
                arg_pos += 1
                if param.int_list and self.varargs_int_list and not isinstance(
                        obj, (tuple, list)) and nargs > 1:
                    obj = args  # bound as varargs: view(2, 3)
            else:
                obj = kwargs.get(param.name, _MISSING)
                for alias in param.numpy_names:
                    if obj is not _MISSING:
                        break
                    obj = kwargs.get(alias, _MISSING)
            if param.int_list and isinstance(obj, (tuple, list)):
                for pos, item in enumerate(obj):
                    if not _int_list_element_ok(item):
                        raise TypeError(
                            f"{self.name}(): argument '{param.name}' failed to unpack the object "
                            f"at pos {pos + 1} with error \"type must be tuple of ints,but got "
                            f"{type_name(item)}\"")

    # -- torch's error texts ------------------------------------------------------------------

    def _extra_args(self, nargs: int) -> None:
        lo, hi = self.min_args, self.max_pos_args
        if lo != hi:
            raise TypeError(f"{self.name}() takes from {lo} to {hi} positional arguments but "
                            f"{nargs} were given")
        raise TypeError(f"{self.name}() takes {hi} positional argument{'' if hi == 1 else 's'} "
                        f"but {nargs} {'was' if nargs == 1 else 'were'} given")

    def _missing_args(self, idx: int) -> None:
        names = [f'"{p.name}"' for p in self.params[idx:] if not p.optional]
        # torch's text: "arguments" for one missing argument, "argument" for several
        raise TypeError(f"{self.name}() missing {len(names)} required positional "
                        f"argument{'s' if len(names) == 1 else ''}: {', '.join(names)}")

    def _extra_kwargs(self, kwargs: dict, nargs: int) -> None:
        names = [p.name for p in self.params]
        for key in kwargs:
            if key not in names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if names.index(key) < nargs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
        raise TypeError("invalid keyword arguments")

    def _type_error(self, param: Param, obj: Any, is_kwd: bool, arg_pos: int,
                    failed_idx: int) -> None:
        if is_kwd:
            raise TypeError(f"{self.name}(): argument '{param.name}' must be "
                            f"{param.printed_type}, not {type_name(obj)}")
        if failed_idx != -1:
            seq = obj if isinstance(obj, (tuple, list)) else ()
            item = seq[failed_idx] if seq else obj
            raise TypeError(f"{self.name}(): argument '{param.name}' (position {arg_pos + 1}) "
                            f"must be {param.printed_type}, but found element of type "
                            f"{type_name(item)} at pos {failed_idx}")
        raise TypeError(f"{self.name}(): argument '{param.name}' (position {arg_pos + 1}) must "
                        f"be {param.printed_type}, not {type_name(obj)}")


def compile_fast(signatures: Sequence[Signature]) -> Callable[[tuple, dict], bool]:
    """``binds_fast(args, kwargs)``, the common case of Note [The check's cost]: True when the
    call surely binds one of ``signatures`` (positional arguments only, each of a plain accepted
    type, the rest optional).  Compiled once into straight-line code: one test per argument
    count, each argument tested inline, the overloads joined by ``or``."""
    helpers: list = []
    cases: dict[int, list[str]] = {}
    varargs = False
    for sig in signatures:
        for n in range(len(sig.positional) + 1):
            if all(p.optional for p in sig.params[n:]):
                tests = [p.fast_test(f"args[{k}]", helpers)
                         for k, p in enumerate(sig.positional[:n])]
                cases.setdefault(n, []).append(" and ".join(tests) or "True")
        varargs = varargs or (sig.varargs_int_list and all(p.optional for p in sig.params[1:]))
    body = ["    def binds_fast(args, kwargs):", "        if kwargs:",
            "            return False", "        n = len(args)"]
    for n, tests in sorted(cases.items()):
        body += [f"        if n == {n}:", f"            return {' or '.join(tests)}"]
    if varargs:  # the ints as separate arguments: view(3, 2)
        body += ["        if n > 1:", "            for arg in args:",
                 "                if type(arg) is not int:", "                    return False",
                 "            return True"]
    body += ["        return False", "    return binds_fast"]
    source = "\n".join([f"def make({', '.join(f'_h{k}' for k in range(len(helpers)))}):"]
                        + body)
    namespace: dict[str, Any] = {}
    # run in this module's globals, so that the late-bound _TENSOR is read at call time
    exec(source, globals(), namespace)
    fast: Callable[[tuple, dict], bool] = namespace["make"](*helpers)
    return fast


class _Missing:
    __slots__ = ()


_MISSING = _Missing()


class Overloads:
    """All overloads of one function or method, checked as torch's parser checks them."""

    __slots__ = ("name", "signatures", "visible", "_single", "_first", "_binding", "binds_fast")

    def __init__(self, signatures: Sequence[Signature]) -> None:
        if not signatures:
            raise ValueError("an op needs at least one signature")
        self.signatures = tuple(signatures)
        self.name = self.signatures[0].name
        self.visible = tuple(s for s in self.signatures if not s.hidden)
        # Note [Deprecated overloads]: they only make the op one of several overloads
        self._single = len(self.signatures) == 1
        self._first = self.signatures[0]
        self._binding = tuple(s for s in self.signatures if not s.deprecated)
        self.binds_fast = compile_fast(self._binding)

    @classmethod
    def parse(cls, texts: Sequence[str]) -> Overloads:
        return cls([Signature(t) for t in texts])

    def check(self, args: tuple, kwargs: dict) -> dict:
        """Raise torch's TypeError unless ``args`` / ``kwargs`` bind to one of the overloads;
        return ``kwargs`` with numpy-style spellings renamed (Signature.canonical)."""
        if self.binds_fast(args, kwargs):
            return kwargs
        sig = self.match(args, kwargs)
        if sig._ints:
            sig._check_int_ranges(args, kwargs)
        return sig.canonical(kwargs)

    def match(self, args: tuple, kwargs: dict) -> Signature:
        """The overload the call binds to (torch's choice), or torch's TypeError."""
        if self._single:
            sig = self._first
            sig.bind(args, kwargs, True)
            if sig._int_lists:
                sig.unpack(args, kwargs)
            return sig
        for sig in self._binding:
            if sig.bind(args, kwargs, False):
                if sig._int_lists:
                    sig.unpack(args, kwargs)
                return sig
        num = len(args) + len(kwargs)
        plausible = [s for s in self.signatures
                     if s.min_args <= num <= s.max_args and not s.hidden]
        if len(plausible) == 1:
            plausible[0].bind(args, kwargs, True)
        raise TypeError(invalid_combination(
            args, kwargs, self.name + "()", [s.printed() for s in self.visible]))


# ---------------------------------------------------------------------------------------------
# "received an invalid combination of arguments": torch formats it from the *printed* overloads,
# re-parsing them, so a parameter with a default never matches by name or type (its last word
# is the default).  Reproduced as torch does it, quirks included.


def _colors() -> tuple[str, str, str, str]:
    try:
        tty = os.isatty(1) and os.isatty(2)
    except (OSError, ValueError):
        tty = False
    if tty:
        return "\33[31;1m", "\33[0m", "\33[32;1m", "\33[0m"
    return "!", "!", "", ""


def _type_matches(printed: str, obj: Any) -> bool:
    name = type_name(obj)
    if printed.startswith("[") and printed.endswith(" or None]"):
        if obj is None:
            return True
        printed = printed[1:-len(" or None]")]
    if printed == "float":
        return name in ("float", "int", "long")
    if printed == "int":
        return name in ("int", "long")
    return name == printed


def _parse_option(option: str) -> tuple[list[tuple[str, str]], bool]:
    args = []
    for arg in option[1:-1].split(", "):
        last_space = arg.rfind(" ")
        name = arg[last_space + 1:]
        type_end = last_space if last_space >= 0 else len(arg)
        if "..." in arg:
            type_end -= 4
        args.append((name, arg[:type_end]))
    return args, "..." in option


def _describe(obj: Any) -> str:
    if isinstance(obj, (tuple, list)):
        items = ", ".join(type_name(o) for o in obj)
        if isinstance(obj, tuple):
            return f"tuple of ({items}{',' if len(obj) == 1 else ''})"
        return f"list of [{items}]"
    return type_name(obj)


def _kwarg_items(kwargs: dict) -> list[tuple[str, Any]]:
    # torch walks its own hash map of the keywords: for a few keywords, the reverse of the
    # order they were given in
    return list(reversed(list(kwargs.items())))


def _arg_desc(args: tuple, kwargs: dict) -> str:
    parts = [type_name(a) + ", " for a in args]
    parts += [f"{k}={type_name(v)}, " for k, v in _kwarg_items(kwargs)]
    text = "".join(parts)
    if args:
        text = text[:-2]
    return "(" + text + ")"


def _formatted_arg_desc(option: list[tuple[str, str]], variadic: bool, args: tuple,
                        kwargs: dict) -> str:
    red, reset_red, green, reset_green = _colors()
    text = ""
    for i in range(len(args) + len(kwargs)):
        is_kwarg = i >= len(args)
        obj = kwargs[option[i][0]] if is_kwarg else args[i]
        if i < len(option):
            matching = _type_matches(option[i][1], obj)
        elif variadic:
            matching = _type_matches(option[-1][1], obj)
        else:
            matching = False
        text += green if matching else red
        if is_kwarg:
            text += option[i][0] + "="
        text += _describe(obj)
        text += (reset_green if matching else reset_red) + ", "
    if args:
        text = text[:-2]
    return "(" + text + ")"


def _unmatched_kwargs(option: list[tuple[str, str]], kwargs: dict) -> list[str]:
    start = max(len(option) - len(kwargs), 0)
    tail = {name for name, _ in option[start:]}
    return [k for k, _ in _kwarg_items(kwargs) if k not in tail]


def invalid_combination(args: tuple, kwargs: dict, function_name: str,
                        options: Sequence[str]) -> str:
    """torch's "received an invalid combination of arguments" text for these printed overloads."""
    msg = function_name + " received an invalid combination of arguments - "
    if len(options) == 1:
        option, variadic = _parse_option(options[0])
        unmatched = _unmatched_kwargs(option, kwargs) if kwargs else []
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        count_ok = len(args) + len(kwargs) == len(option) or (
            variadic and len(args) + len(kwargs) > len(option))
        got = (_formatted_arg_desc(option, variadic, args, kwargs) if count_ok
               else _arg_desc(args, kwargs))
        return msg + "got " + got + ", but expected " + options[0]
    msg += "got " + _arg_desc(args, kwargs) + ", but expected one of:\n"
    for text in options:
        option, variadic = _parse_option(text)
        msg += " * " + text + "\n"
        num = len(args) + len(kwargs)
        if num == len(option) or (variadic and num > len(option)):
            unmatched = _unmatched_kwargs(option, kwargs) if kwargs else []
            if unmatched:
                msg += ("      didn't match because some of the keywords were incorrect: "
                        + ", ".join(unmatched) + "\n")
            else:
                msg += ("      didn't match because some of the arguments have invalid types: "
                        + _formatted_arg_desc(option, variadic, args, kwargs) + "\n")
    return msg


# ---------------------------------------------------------------------------------------------
# the decorators


# Note [Signatures parsed on first use]
# About 500 functions and methods carry signature strings; parsing them and compiling their
# fast paths at import took most of a third of a second, for ops a program may never call.
# So a decorator keeps its strings and builds the ``Overloads`` the first time its function
# is called: the first call's fast-path test compiles the overloads and replaces itself.

class LazyOverloads:
    """An op's overloads, parsed when first asked for (Note [Signatures parsed on first use])."""

    __slots__ = ("texts", "_overloads")

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = tuple(texts)
        self._overloads: Overloads | None = None

    def get(self) -> Overloads:
        if self._overloads is None:
            self._overloads = Overloads.parse(self.texts)
        return self._overloads


# While a vmap runs on batched values anywhere in the process, the dispatcher of
# npgrad.func._batched (else None): every checked call gives it the first look.
_vmap_dispatch: Callable[..., Any] | None = None


def set_vmap_dispatch(dispatch: Callable[..., Any] | None) -> None:
    global _vmap_dispatch
    _vmap_dispatch = dispatch


def batchable(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Let the vmap dispatcher see calls of ``fn``, a public op without a signature check
    (a loss, say): one global read per call while no vmap runs."""
    @functools.wraps(fn)
    def entry(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _vmap_dispatch is not None:
            out = _vmap_dispatch(entry, fn.__name__, args, kwargs)
            if out is not NOT_BATCHED:
                return out  # type: ignore[no-any-return]
        return fn(*args, **kwargs)
    return entry


def signature(*texts: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Check a function's arguments against torch's signature strings before it runs.

    >>> @signature("log(Tensor input, *, Tensor out=None)")
    ... def log(input, *, out=None): ...
    """
    lazy = LazyOverloads(texts)

    def decorate(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        fast: Callable[[tuple, dict], bool]
        match: Callable[[tuple, dict], Signature]

        def first_fast(args: tuple, kwargs: dict) -> bool:
            nonlocal fast, match
            overloads = lazy.get()
            fast, match = overloads.binds_fast, overloads.match
            return fast(args, kwargs)

        def first_match(args: tuple, kwargs: dict) -> Signature:
            return lazy.get().match(args, kwargs)

        fast, match = first_fast, first_match

        @functools.wraps(fn)
        def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            if _vmap_dispatch is not None:  # Note [Batched values] in npgrad.func._batched
                out = _vmap_dispatch(checked, fn.__name__, args, kwargs)
                if out is not NOT_BATCHED:
                    return out  # type: ignore[no-any-return]
            if not fast(args, kwargs):
                args, kwargs = match(args, kwargs).parsed(args, kwargs)  # type: ignore[assignment]
            return fn(*args, **kwargs)

        checked.__signature_overloads__ = lazy  # type: ignore[attr-defined]
        checked.__signature_decorator__ = signature  # type: ignore[attr-defined]
        return checked
    return decorate


def method_signature(*texts: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """The Tensor-method form: the strings leave out ``self`` (as torch's method bindings do),
    positions count from the first argument after it, and a method whose only signature takes
    nothing (``"log()"``) refuses arguments with CPython's "TensorBase.log() takes no
    arguments (1 given)"."""
    lazy = LazyOverloads(texts)

    def decorate(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        if len(texts) == 1 and texts[0].endswith("()"):
            qualified = f"TensorBase.{texts[0][:-2]}()"

            @functools.wraps(fn)
            def no_args(self: Any, *args: Any, **kwargs: Any) -> Any:
                if args or kwargs:
                    if kwargs:
                        raise TypeError(f"{qualified} takes no keyword arguments")
                    raise TypeError(f"{qualified} takes no arguments ({len(args)} given)")
                return fn(self)  # type: ignore[call-arg]

            no_args.__signature_overloads__ = lazy  # type: ignore[attr-defined]
            no_args.__signature_decorator__ = method_signature  # type: ignore[attr-defined]
            return no_args  # type: ignore[return-value]

        fast: Callable[[tuple, dict], bool]
        match: Callable[[tuple, dict], Signature]

        def first_fast(args: tuple, kwargs: dict) -> bool:
            nonlocal fast, match
            overloads = lazy.get()
            fast, match = overloads.binds_fast, overloads.match
            return fast(args, kwargs)

        def first_match(args: tuple, kwargs: dict) -> Signature:
            return lazy.get().match(args, kwargs)

        fast, match = first_fast, first_match

        @functools.wraps(fn)
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _vmap_dispatch is not None:  # Note [Batched values] in npgrad.func._batched
                out = _vmap_dispatch(checked, fn.__name__, (self, *args), kwargs)
                if out is not NOT_BATCHED:
                    return out
            if not fast(args, kwargs):
                args, kwargs = match(args, kwargs).parsed(args, kwargs)
            return fn(self, *args, **kwargs)  # type: ignore[arg-type]

        checked.__signature_overloads__ = lazy  # type: ignore[attr-defined]
        checked.__signature_decorator__ = method_signature  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]
    return decorate


# Note [An alias has its own name in the errors]
# torch binds each of its names for an op separately (``arccos`` beside ``acos``,
# ``special.erf`` as ``special_erf``, ``Tensor.multiply`` with its own two overloads), so an
# error names the spelling the user called: "TensorBase.arccos() takes no arguments (1 given)",
# "special_erf() missing 1 required positional arguments: \"input\"".  ``renamed`` gives a
# decorated op a second entry point with the alias's strings and the same body.

def renamed(fn: Callable[_P, _R], name: str, *texts: str) -> Callable[_P, _R]:
    """``fn`` (decorated by ``signature`` or ``method_signature``) under torch's other name
    ``name``: ``texts`` are that name's signature strings, by default ``fn``'s renamed
    (Note [An alias has its own name in the errors])."""
    decorator = fn.__signature_decorator__  # type: ignore[attr-defined]
    if not texts:
        own = fn.__signature_overloads__.texts  # type: ignore[attr-defined]
        texts = tuple(name + text[text.index("("):] for text in own)
    alias: Callable[_P, _R] = decorator(*texts)(unchecked(fn))
    alias.__name__ = name
    alias.__qualname__ = alias.__qualname__.rpartition(".")[0] + "." + name \
        if "." in alias.__qualname__ else name
    return alias


# Note [Checking a C op called mid-function]
# Many of torch's public functions are plain Python (``F.mse_loss``, ``F.nll_loss``,
# ``torch.functional.einsum``): they run a few Python-level checks and then call a C op, whose
# parser raises the TypeError, worded with the C op's name and parameters
# (``nll_loss_nd(): argument 'input' (position 1) must be Tensor, not str``).  npgrad's version
# of such a function calls a ``checker`` built from the C op's strings at the point where
# torch's Python calls the op, with the arguments torch passes it.

def checker(*texts: str) -> Callable[..., None]:
    """``check(*args, **kwargs)``: raise torch's TypeError unless the arguments bind to the C
    op of these signature strings (Note [Checking a C op called mid-function])."""
    lazy = LazyOverloads(texts)

    def check(*args: Any, **kwargs: Any) -> None:
        overloads = lazy.get()
        if not overloads.binds_fast(args, kwargs):
            overloads.match(args, kwargs)

    check.__signature_overloads__ = lazy  # type: ignore[attr-defined]
    return check


def unchecked(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """The body of a decorated op, without its check: for callers whose arguments are already
    checked (a Tensor method forwarding to its op), or that pass npgrad's own keywords."""
    body: Callable[_P, _R] = getattr(fn, "__wrapped__", fn)
    return body
