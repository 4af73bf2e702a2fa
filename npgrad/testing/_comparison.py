"""assert_close: torch.testing's comparison of (nested) tensors and numbers, with its messages.

Note [How assert_close compares]
As in torch: the inputs are first walked as a tree -- sequences elementwise,
mappings key by key -- and every leaf pair is matched to a comparison (None,
bool, number, tensor); structure errors (lengths, keys, unsupported types) are
raised before any value is compared.  Then the pairs are compared in order and
the first failure is raised, with "The failure occurred for item [...]" naming
its place in the tree.  Tensors are checked for shape, then (optionally)
stride and dtype, then values: ``|actual - expected| <= atol + rtol * |expected|``
with per-dtype default tolerances.
"""
from __future__ import annotations

import cmath
import collections.abc
from typing import Any, Callable

import numpy as np

from .. import _dtype
from .._creation import as_tensor
from .._tensor import Tensor

# (rtol, atol) by dtype name; other dtypes (ints, bool) are compared exactly.
_DTYPE_PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# Python numbers get the tolerances of the dtype torch gives them.
_NUMBER_DTYPE = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A comparison failure: the exception type torch raises, its message, its place in the tree."""

    def __init__(self, type_: type, msg: str, id_: tuple = ()) -> None:
        super().__init__(msg)
        self.type = type_
        self.msg = msg
        self.id = id_

    def to_error(self, msg: Any) -> Exception:
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += "\n\nThe failure occurred for item " + "".join(str([i]) for i in self.id)
        return self.type(msg(text) if callable(msg) else text)


def _tolerances(names: list, rtol: float | None, atol: float | None, id_: tuple) -> tuple:
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {missing}.", id_)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*(_DTYPE_PRECISIONS.get(n, (0.0, 0.0)) for n in names))
    return max(rtols), max(atols)


def _mismatch_msg(identifier: str, extra: str | None, abs_diff: Any, abs_idx: Any, atol: float,
                  rel_diff: Any, rel_idx: Any, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_line(kind: str, diff: Any, idx: Any, tol: float) -> str:
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol)
    msg += diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray,
                         rtol: float, atol: float) -> str:
    total = matches.size
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, m = actual.ravel(), expected.ravel(), matches.ravel()
    if a.dtype.kind not in "fc":
        # torch widens to int64 and divides in the default float dtype
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[m] = 0
        rel_diff = abs_diff / np.abs(e)
        if a.dtype.kind not in "fc":
            rel_diff = (abs_diff.astype(np.float64) / np.abs(e)).astype(
                _dtype.get_default_dtype().np_dtype)
            abs_diff = abs_diff.astype(np.int64)
        rel_diff[m] = 0
    ia, ir = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    shape = matches.shape
    return _mismatch_msg("Tensor-likes", extra, abs_diff[ia].item(), _unravel(ia, shape), atol,
                         rel_diff[ir].item(), _unravel(ir, shape), rtol)


def _unravel(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


# -- the leaf pairs -----------------------------------------------------------------------

def _compare_none(actual: Any, expected: Any, id_: tuple) -> None:
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id_)


def _compare_bool(actual: Any, expected: Any, id_: tuple) -> None:
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id_)


def _compare_number(actual: Any, expected: Any, id_: tuple, rtol: Any, atol: Any,
                    equal_nan: bool, check_dtype: bool) -> None:
    actual = actual.item() if isinstance(actual, np.number) else actual
    expected = expected.item() if isinstance(expected, np.number) else expected
    rtol, atol = _tolerances([_NUMBER_DTYPE[type(x)] for x in (actual, expected)], rtol, atol,
                             id_)
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                       f"{type(expected)}.", id_)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol), id_)


def _compare_tensors(actual: Tensor, expected: Tensor, id_: tuple, rtol: Any, atol: Any,
                     equal_nan: bool, check_dtype: bool, check_stride: bool) -> None:
    a, e = actual._data, expected._data
    names = [_dtype.from_np(x.dtype).name for x in (a, e)]
    rtol, atol = _tolerances(names, rtol, atol, id_)

    def mismatch(attribute: str, left: Any, right: Any) -> _Failure:
        return _Failure(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                        f"{left} != {right}.", id_)

    if a.shape != e.shape:
        raise mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        raise mismatch("stride()", actual.stride(), expected.stride())
    if check_dtype and a.dtype != e.dtype:
        raise mismatch("dtype", actual.dtype, expected.dtype)
    if a.dtype != e.dtype:
        common = _dtype.result_type_np((a, e))
        a, e = a.astype(common), e.astype(common)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.shape == ():
        msg = _scalar_mismatch_msg(a.item(), e.item(), rtol, atol)
    else:
        msg = _tensor_mismatch_msg(a, e, matches, rtol, atol)
    raise _Failure(AssertionError, msg, id_)


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float,
             equal_nan: bool) -> np.ndarray:
    """torch.isclose: exact for ints and bools, inf equals inf, NaN equal only if asked."""
    if a.dtype.kind not in "fc":
        return np.asarray(a == e)
    with np.errstate(all="ignore"):
        close = np.abs(a - e) <= atol + rtol * np.abs(e)
        close |= a == e
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    return np.asarray(close)


# -- walking the tree -----------------------------------------------------------------------

def _is_sequence(x: Any) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _leaf_pairs(actual: Any, expected: Any, id_: tuple, out: list) -> None:
    """Collect ``(id, actual, expected, kind)`` leaves, raising structure errors as torch does."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", id_)
        for i in range(len(actual)):
            _leaf_pairs(actual[i], expected[i], (*id_, i), out)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}"),
                id_)
        keys: Any = actual_keys
        try:
            keys = sorted(keys)
        except Exception:  # unorderable keys: any order, as torch
            pass
        for key in keys:
            _leaf_pairs(actual[key], expected[key], (*id_, key), out)
        return
    out.append((id_, actual, expected, _kind(actual, expected, id_)))


def _kind(actual: Any, expected: Any, id_: tuple) -> str:
    bools = (bool, np.bool_)
    numbers = (int, float, complex, np.number)
    if actual is None or expected is None:
        return "none"
    if isinstance(actual, bools) and isinstance(expected, bools):
        return "bool"
    if (isinstance(actual, numbers) and isinstance(expected, numbers)
            and not isinstance(actual, bools) and not isinstance(expected, bools)):
        return "number"
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return "tensor"
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        return "array"  # compared as the tensors they convert to, as torch does
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", id_)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None) -> None:
    """Raise ``AssertionError`` (torch's message) unless ``actual`` and ``expected`` are close.

    Tensors, NumPy arrays, Python numbers, bools and None, nested in sequences and mappings.
    Default tolerances follow the dtype: float32 ``rtol=1.3e-6, atol=1e-5``,
    float64 ``1e-7, 1e-7``, integers and bools exact.

    >>> import npgrad
    >>> npgrad.testing.assert_close(npgrad.tensor([1., 2.]), npgrad.tensor([1., 2.000001]))
    >>> npgrad.testing.assert_close([1.0], [1.5])
    Traceback (most recent call last):
    AssertionError: Scalars are not close!
    <BLANKLINE>
    Expected 1.5 but got 1.0.
    Absolute difference: 0.5 (up to 1e-07 allowed)
    Relative difference: 0.3333333333333333 (up to 1e-07 allowed)
    <BLANKLINE>
    The failure occurred for item [0]
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    try:
        leaves: list = []
        _leaf_pairs(actual, expected, (), leaves)
        for id_, a, e, kind in leaves:
            if kind == "none":
                _compare_none(a, e, id_)
            elif kind == "bool":
                _compare_bool(a, e, id_)
            elif kind == "number":
                _compare_number(a, e, id_, rtol, atol, equal_nan, check_dtype)
            else:
                if kind == "array":
                    a, e = as_tensor(a), as_tensor(e)
                _compare_tensors(a, e, id_, rtol, atol, equal_nan, check_dtype, check_stride)
    except _Failure as failure:
        raise failure.to_error(msg) from None
