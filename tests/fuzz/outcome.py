"""What one call did (its result or its exception), summarised the same way for npgrad and
torch, and the comparison of two such outcomes into one mismatch category."""
from __future__ import annotations

import dataclasses
import math
import os
import re
import signal
import threading
import traceback
import warnings
from typing import Any, Callable

import numpy as np

# Tensors with more elements than this are compared by shape, dtype and flags only.
VALUE_LIMIT = 100_000
# Seconds one in-process call may take before it counts as a hang.
CALL_TIMEOUT_S = 10


# -- mismatch categories --------------------------------------------------------------------------
# Note [Mismatches are exceptions]
# Each category is an AssertionError subclass, so a known difference can be a pytest xfail with
# ``raises=`` naming only the categories it explains: a case in the registry that starts failing
# in a *different* way fails the suite instead of hiding behind its old reason.

class Mismatch(AssertionError):
    category = "mismatch"


class RawNumpyError(Mismatch):
    category = "raw_numpy_error"  # a NumPy exception (or NumPy's text) escaped npgrad


class InternalError(Mismatch):
    category = "internal_error"  # an AttributeError/TypeError... from npgrad's internals


class WrongExceptionType(Mismatch):
    category = "wrong_exception_type"  # both raise; npgrad's type is not torch's or a subclass


class WrongMessage(Mismatch):
    category = "wrong_message"  # both raise the same type with different text


class AcceptedWhereTorchRejects(Mismatch):
    category = "accepted_where_torch_rejects"


class RejectedWhereTorchAccepts(Mismatch):
    category = "rejected_where_torch_accepts"


class WrongResult(Mismatch):
    category = "wrong_result"  # both succeed: values, dtype, shape or requires_grad differ


class Crash(Mismatch):
    category = "crash"  # npgrad hung, died or ran out of memory (isolated cases)


CATEGORIES: dict[str, type[Mismatch]] = {
    c.category: c for c in (RawNumpyError, InternalError, WrongExceptionType, WrongMessage,
                            AcceptedWhereTorchRejects, RejectedWhereTorchAccepts, WrongResult,
                            Crash)}


# -- outcomes -------------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    """A call's result summary, or its exception (class names along the MRO and the text)."""
    ok: bool
    value: Any = None
    exc_mro: tuple = ()  # ("module.Qualname", ...) of the exception's class
    message: str = ""
    from_numpy: bool = False  # the innermost frame of the traceback is inside NumPy
    crash: str = ""  # isolated runs: "timeout", "signal 11", "memory" ...

    @property
    def exc_name(self) -> str:
        return self.exc_mro[0].rsplit(".", 1)[-1] if self.exc_mro else ""

    def describe(self) -> str:
        if self.crash:
            return f"crash ({self.crash})"
        if self.ok:
            return "ok " + short(self.value)
        return f"{self.exc_name}: {self.message}"


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class CallTimeout(BaseException):
    """Raised by the alarm inside a call that runs too long (BaseException: not caught by the
    ``except Exception`` of the code under test)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CallTimeout()


def capture(call: Callable[[], Any], timeout_s: int = CALL_TIMEOUT_S) -> Outcome:
    """Run ``call`` with warnings silenced (and, on the main thread, an alarm) and summarise."""
    use_alarm = hasattr(signal, "SIGALRM") and _main_thread()
    old = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if use_alarm:
                signal.alarm(timeout_s)
            try:
                result = call()
                return Outcome(True, summarize(result))
            finally:
                if use_alarm:
                    signal.alarm(0)
    except CallTimeout:
        return Outcome(False, crash="timeout", message=f"no result after {timeout_s} s")
    except RecursionError as exc:
        return _exception_outcome(exc)
    except Exception as exc:  # noqa: BLE001 - the exception *is* the outcome
        return _exception_outcome(exc)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _exception_outcome(exc: BaseException) -> Outcome:
    mro = tuple(f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__
                if c not in (object, BaseException))
    tb = traceback.extract_tb(exc.__traceback__)
    innermost = tb[-1].filename if tb else ""
    from_numpy = (f"{os.sep}numpy{os.sep}" in innermost
                  or type(exc).__module__.split(".")[0] == "numpy")
    return Outcome(False, exc_mro=mro, message=str(exc), from_numpy=from_numpy)


# -- result summaries -----------------------------------------------------------------------------

def _is_tensor(obj: Any) -> bool:
    return any(c.__name__ == "Tensor" and c.__module__.split(".")[0] in ("torch", "npgrad")
               for c in type(obj).__mro__)


def summarize(obj: Any, depth: int = 0) -> Any:
    """A comparable, picklable summary: tensors by (shape, dtype, requires_grad, values)."""
    if depth > 6:
        return ("deep",)
    if _is_tensor(obj):
        shape = tuple(int(s) for s in obj.shape)
        dtype = str(obj.dtype).split(".")[-1]
        values = None
        if math.prod(shape) <= VALUE_LIMIT and all(s <= VALUE_LIMIT for s in shape):
            values = obj.detach().numpy().copy()
        return ("tensor", shape, dtype, bool(obj.requires_grad), values)
    if type(obj).__name__ == "dtype" and type(obj).__module__.split(".")[0] in ("torch",
                                                                                 "npgrad"):
        return ("dtype", str(obj).split(".")[-1])
    if isinstance(obj, bool):
        return ("bool", obj)
    if isinstance(obj, int):
        return ("int", obj)
    if isinstance(obj, float):
        return ("float", obj)
    if isinstance(obj, (str, type(None))):
        return ("scalar", obj)
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.shape, str(obj.dtype), obj.copy())
    if isinstance(obj, tuple):
        return ("tuple", tuple(summarize(o, depth + 1) for o in obj))
    if isinstance(obj, list):
        return ("list", tuple(summarize(o, depth + 1) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((str(k), summarize(v, depth + 1)) for k, v in obj.items()))
    return ("object", type(obj).__name__)


def _tolerance(dtype: str) -> tuple[float, float]:
    if dtype in ("float16", "bfloat16"):
        return 1e-3, 1e-3
    if dtype == "float32":
        return 1e-5, 1e-6
    return 1e-10, 1e-12


# Note [Mixed-precision tolerance]
# A result is compared at its own dtype's tolerance, except when the case mixed float dtypes
# (a float32 argument made float64 or the reverse, a float16 one among float32 ones): torch
# then computes parts of a composite (a loss's log-sum-exp, a norm before a division) in the
# less precise input dtype and only promotes later, so its float64 or float32 result carries
# that dtype's rounding.  Matching that rounding bit for bit would mean copying each kernel's
# order of operations; the comparison instead uses the tolerance of the least precise input
# (``loosest``), which still catches any real difference (a wrong formula, broadcast or
# dtype: the dtype itself is compared exactly).
def _values_equal(a: np.ndarray, b: np.ndarray, dtype: str, loosest: str = "") -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        rtol, atol = max(_tolerance(dtype), _tolerance(loosest or dtype))
        with np.errstate(all="ignore"):
            return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                    atol=atol, equal_nan=True))
    return bool(np.array_equal(a, b))


def result_difference(mine: Any, theirs: Any, compare_values: bool = True,
                      where: str = "result", loosest: str = "") -> str:
    """'' when the summaries agree, else what differs first."""
    if mine[0] != theirs[0]:
        if {mine[0], theirs[0]} == {"tuple", "list"}:
            pass  # torch returns tuples where a list is just as good, and vice versa
        else:
            return f"{where}: {short(mine)} where torch gives {short(theirs)}"
    kind = theirs[0]
    if kind == "tensor" and mine[0] == "tensor":
        names = ("shape", "dtype", "requires_grad")
        for name, m, t in zip(names, mine[1:4], theirs[1:4]):
            if m != t:
                return f"{where}: {name} {m} where torch gives {t}"
        if compare_values and mine[4] is not None and theirs[4] is not None:
            if not _values_equal(mine[4], theirs[4], theirs[2], loosest):
                return f"{where}: values {short(mine[4])} where torch gives {short(theirs[4])}"
        return ""
    if kind in ("tuple", "list", "dict"):
        if len(mine[1]) != len(theirs[1]):
            return f"{where}: {len(mine[1])} items where torch gives {len(theirs[1])}"
        for i, (m, t) in enumerate(zip(mine[1], theirs[1])):
            if kind == "dict":
                if m[0] != t[0]:
                    return f"{where}: key {m[0]!r} where torch has {t[0]!r}"
                m, t = m[1], t[1]
            diff = result_difference(m, t, compare_values, f"{where}[{i}]", loosest)
            if diff:
                return diff
        return ""
    if kind == "ndarray":
        if mine[1:3] != theirs[1:3] or (compare_values
                                        and not _values_equal(mine[3], theirs[3], mine[2],
                                                              loosest)):
            return f"{where}: {short(mine)} where torch gives {short(theirs)}"
        return ""
    if kind == "float" and compare_values:
        m, t = mine[1], theirs[1]
        if math.isnan(m) and math.isnan(t):
            return ""
        if not math.isclose(m, t, rel_tol=1e-6, abs_tol=1e-9):
            return f"{where}: {m!r} where torch gives {t!r}"
        return ""
    if kind == "float":
        return ""
    if kind in ("int", "bool", "scalar", "dtype", "object") and (compare_values or kind != "int"):
        if mine != theirs:
            return f"{where}: {short(mine)} where torch gives {short(theirs)}"
    return ""


# -- comparison -----------------------------------------------------------------------------------

# torch's C++ errors may end in a trace of where they were raised: not part of the message.
_CPP_TAIL = re.compile(r"\nException raised from .*", re.S)

# NumPy's own texts (raised from NumPy's C code, so no NumPy frame shows in the traceback).
NUMPY_TEXTS = re.compile(
    r"operands could not be broadcast together|could not broadcast|"
    r"negative dimensions are not allowed|is out of bounds for array|"
    r"cannot reshape array|ufunc '|Maximum allowed size exceeded|array is too big|"
    r"setting an array element with a sequence|all the input array dimensions|"
    r"shape mismatch: |Unable to allocate|only integer scalar arrays|"
    r"could not convert string to float|did not contain a loop with signature|"
    r"non-broadcastable output operand|The truth value of an array|"
    r"axis \S+ is out of bounds|need at least one array|zero-size array to reduction|"
    r"arrays used as indices must be|Cannot cast ufunc|iterator is too large|"
    r"repeats may not contain|Integers to negative integer powers|"
    r"invalid entry in coordinates array|Cannot interpret '|data type .* not understood|"
    r"too many indices for array|boolean index did not match|numpy|ndarray")

# Python's own texts for a programming error inside npgrad (torch would not say these).
INTERNAL_TEXTS = re.compile(
    r"object has no attribute|unsupported operand type|positional argument|"
    r"unexpected keyword argument|object is not subscriptable|object is not iterable|"
    r"is not callable|cannot unpack|not supported between instances|list indices must|"
    r"takes no arguments|missing \d+ required|can only concatenate|"
    r"cannot be interpreted as an integer|unhashable type|maximum recursion|"
    r"local variable|referenced before assignment|object of type .* has no len|"
    r"argument of type|bad operand type|got multiple values for|"
    r"must be real number, not|int\(\) argument must be|float\(\) argument must be|"
    r"invalid literal for|object does not support item assignment|"
    r"'NoneType' object|tuple index out of range|list index out of range|string index|"
    r"values to unpack")

INTERNAL_TYPES = {"builtins.AttributeError", "builtins.KeyError", "builtins.NameError",
                  "builtins.UnboundLocalError", "builtins.AssertionError",
                  "builtins.RecursionError", "builtins.ZeroDivisionError",
                  "builtins.SystemError", "builtins.StopIteration"}


def torch_message(message: str) -> str:
    return _CPP_TAIL.sub("", message)


def _type_matches(mine: Outcome, theirs: Outcome) -> bool:
    """npgrad's exception is torch's type or a subclass (a torch-defined class by its name)."""
    if not theirs.exc_mro:
        return False
    wanted = theirs.exc_mro[0]
    if wanted.startswith("builtins."):
        return wanted in mine.exc_mro
    name = wanted.rsplit(".", 1)[-1]
    return any(m.rsplit(".", 1)[-1] == name for m in mine.exc_mro)


def _is_raw_numpy(mine: Outcome) -> bool:
    return mine.from_numpy or bool(NUMPY_TEXTS.search(mine.message))


def _is_internal(mine: Outcome) -> bool:
    return mine.exc_mro[:1] and mine.exc_mro[0] in INTERNAL_TYPES or bool(
        INTERNAL_TEXTS.search(mine.message))


def compare(mine: Outcome, theirs: Outcome, compare_values: bool = True,
            loosest: str = "") -> Mismatch | None:
    """The mismatch between npgrad's outcome and torch's, or None when they agree (or when
    torch itself gave no outcome: the caller skips such a case).  ``loosest``: the least
    precise float dtype among mixed-precision inputs (Note [Mixed-precision tolerance])."""
    if theirs.crash:
        return None
    if mine.crash:
        return Crash(f"npgrad: {mine.describe()}; torch: {theirs.describe()}")
    if mine.ok and theirs.ok:
        diff = result_difference(mine.value, theirs.value, compare_values, loosest=loosest)
        return WrongResult(diff) if diff else None
    if mine.ok:
        return AcceptedWhereTorchRejects(
            f"npgrad returns {short(mine.value)}; torch raises {theirs.describe()}")
    theirs_msg = torch_message(theirs.message) if not theirs.ok else ""
    if not theirs.ok and _type_matches(mine, theirs) and mine.message == theirs_msg:
        return None
    text = f"npgrad raises {mine.describe()}\ntorch: {_describe_torch(theirs)}"
    if _is_raw_numpy(mine) and not (not theirs.ok and mine.message == theirs_msg):
        return RawNumpyError(text)
    if _is_internal(mine) and (theirs.ok or mine.message != theirs_msg):
        return InternalError(text)
    if theirs.ok:
        return RejectedWhereTorchAccepts(text)
    if not _type_matches(mine, theirs):
        return WrongExceptionType(text)
    return WrongMessage(text)


def _describe_torch(theirs: Outcome) -> str:
    if theirs.ok:
        return "returns " + short(theirs.value)
    return f"{theirs.exc_name}: {torch_message(theirs.message)}"
