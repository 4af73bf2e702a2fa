"""Grad-mode, inference-mode and anomaly *state* tests (no tensors).

Every scenario is a function of a "library" (npgrad, or real torch as the
oracle) returning what it observed.  Each table row is checked twice:
``test_<name>`` against hand-derived expectations from the spec
(shared/spec/torch_semantics.md items 1-48, 102-105), and
``test_<name>_torch`` runs the same scenario on torch (skipped without torch)
and checks torch agrees with the same expectations, so the table itself is
verified.
"""
from __future__ import annotations

import concurrent.futures
import functools
import gc
import inspect
import random
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from npgrad import _mode
from npgrad.autograd import anomaly_mode, grad_mode

# --------------------------------------------------------------------------
# The two libraries
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Lib:
    name: str
    no_grad: Any
    enable_grad: Any
    set_grad_enabled: Any
    inference_mode: Any
    is_grad_enabled: Callable[[], bool]
    is_inference_mode_enabled: Callable[[], bool]
    detect_anomaly: Any
    set_detect_anomaly: Any
    set_anomaly_enabled: Any
    is_anomaly_enabled: Callable[[], bool]
    is_anomaly_check_nan_enabled: Callable[[], bool]
    reset: Callable[[], None]  # back to grad on, inference off, whatever happened
    module_path: str  # prefix of set_grad_enabled's repr

    def state(self) -> tuple[bool, bool]:
        return (self.is_grad_enabled(), self.is_inference_mode_enabled())


def _npgrad_reset() -> None:
    _mode._set_mode(_mode.GRAD)


NPGRAD = Lib(
    name="npgrad",
    no_grad=grad_mode.no_grad,
    enable_grad=grad_mode.enable_grad,
    set_grad_enabled=grad_mode.set_grad_enabled,
    inference_mode=grad_mode.inference_mode,
    is_grad_enabled=_mode.is_grad_enabled,
    is_inference_mode_enabled=_mode.is_inference_mode_enabled,
    detect_anomaly=anomaly_mode.detect_anomaly,
    set_detect_anomaly=anomaly_mode.set_detect_anomaly,
    set_anomaly_enabled=anomaly_mode.set_anomaly_enabled,
    is_anomaly_enabled=anomaly_mode.is_anomaly_enabled,
    is_anomaly_check_nan_enabled=anomaly_mode.is_anomaly_check_nan_enabled,
    reset=_npgrad_reset,
    module_path="npgrad.autograd.grad_mode",
)

_TORCH_GUARDS: list = []  # live guards that keep a stuck torch thread out of inference mode


def torch_lib() -> Lib:
    torch = pytest.importorskip("torch")

    def reset() -> None:
        if torch.is_inference_mode_enabled():
            # torch has no inference-mode setter; a live disabled guard escapes it.
            _TORCH_GUARDS.append(torch._C._InferenceMode(False))
        torch._C._set_grad_enabled(True)

    return Lib(
        name="torch",
        no_grad=torch.no_grad,
        enable_grad=torch.enable_grad,
        set_grad_enabled=torch.set_grad_enabled,
        inference_mode=torch.inference_mode,
        is_grad_enabled=torch.is_grad_enabled,
        is_inference_mode_enabled=torch.is_inference_mode_enabled,
        detect_anomaly=torch.autograd.detect_anomaly,
        set_detect_anomaly=torch.autograd.set_detect_anomaly,
        set_anomaly_enabled=torch.set_anomaly_enabled,
        is_anomaly_enabled=torch.is_anomaly_enabled,
        is_anomaly_check_nan_enabled=torch.is_anomaly_check_nan_enabled,
        reset=reset,
        module_path="torch.autograd.grad_mode",
    )


def check_both(scenario: Callable[[Lib], Any], expected: Any) -> None:
    """Run ``scenario`` on npgrad and compare with ``expected``."""
    assert scenario(NPGRAD) == expected


def check_torch(scenario: Callable[[Lib], Any], expected: Any) -> None:
    """Run ``scenario`` on torch: torch must match the hand table, and npgrad must match torch."""
    torch_result = scenario(torch_lib())
    assert torch_result == expected
    assert scenario(NPGRAD) == torch_result


# --------------------------------------------------------------------------
# The managers and their hand-derived effects (spec 1.5)
# --------------------------------------------------------------------------

State = tuple  # (grad, inference)
DEFAULT: State = (True, False)

MANAGERS: dict[str, Callable[[Lib], Any]] = {
    "no_grad": lambda L: L.no_grad(),
    "enable_grad": lambda L: L.enable_grad(),
    "set_grad_enabled_True": lambda L: L.set_grad_enabled(True),
    "set_grad_enabled_False": lambda L: L.set_grad_enabled(False),
    "inference_mode": lambda L: L.inference_mode(),
    "inference_mode_False": lambda L: L.inference_mode(False),
}

EFFECTS: dict[str, Callable[[State], State]] = {
    "no_grad": lambda s: (False, s[1]),
    "enable_grad": lambda s: (True, s[1]),
    "set_grad_enabled_True": lambda s: (True, s[1]),
    "set_grad_enabled_False": lambda s: (False, s[1]),
    "inference_mode": lambda s: (False, True),
    "inference_mode_False": lambda s: (True, False),
}

# Where a scenario starts: the thread default, or after a global set_grad_enabled(False).
STARTS: dict[str, State] = {"default": (True, False), "global_off": (False, False)}


def enter_start(L: Lib, start: str) -> None:
    if start == "global_off":
        L.set_grad_enabled(False)


# --------------------------------------------------------------------------
# 1. Flags, enter/exit values
# --------------------------------------------------------------------------


def test_defaults_are_real_bools():
    assert NPGRAD.state() == DEFAULT
    assert type(NPGRAD.is_grad_enabled()) is bool
    assert type(NPGRAD.is_inference_mode_enabled()) is bool
    assert type(NPGRAD.is_anomaly_enabled()) is bool
    assert (NPGRAD.is_anomaly_enabled(), NPGRAD.is_anomaly_check_nan_enabled()) == (False, True)


def test_managers_are_classes():
    for cls in (grad_mode.no_grad, grad_mode.enable_grad, grad_mode.set_grad_enabled, grad_mode.inference_mode):
        assert inspect.isclass(cls)
        assert cls.__module__ == "npgrad.autograd.grad_mode"


def _enter_exit_values(L: Lib) -> list:
    out = []
    for name, make in MANAGERS.items():
        with make(L) as bound:
            out.append((name, bound))
        m = make(L)
        out.append((name, m.__enter__(), m.__exit__(None, None, None)))
        # __exit__ returns None, so exceptions are never swallowed.
        try:
            with make(L):
                raise KeyError(name)
        except KeyError as e:
            out.append(("raised", e.args[0]))
    L.reset()
    return out


ENTER_EXIT_EXPECTED = [x for n in MANAGERS for x in [(n, None), (n, None, None), ("raised", n)]]


def test_enter_and_exit_return_none():
    check_both(_enter_exit_values, ENTER_EXIT_EXPECTED)


def test_enter_and_exit_return_none_torch():
    check_torch(_enter_exit_values, ENTER_EXIT_EXPECTED)


# --------------------------------------------------------------------------
# 1.5 Nesting: all 36 ordered pairs, from both starting states
# --------------------------------------------------------------------------

NESTING_ROWS = [
    pytest.param(inner, outer, start, id=f"{inner}__in__{outer}--{start}")
    for start in STARTS
    for outer in MANAGERS
    for inner in MANAGERS
]


def _nesting(inner: str, outer: str, start: str) -> Callable[[Lib], list]:
    def scenario(L: Lib) -> list:
        enter_start(L, start)
        with MANAGERS[outer](L):
            with MANAGERS[inner](L):
                inside = L.state()
            after_inner = L.state()
        after_both = L.state()
        L.reset()
        return [inside, after_inner, after_both]

    return scenario


def _nesting_expected(inner: str, outer: str, start: str) -> list:
    s0 = STARTS[start]
    s1 = EFFECTS[outer](s0)
    return [EFFECTS[inner](s1), s1, s0]


@pytest.mark.parametrize("inner, outer, start", NESTING_ROWS)
def test_nesting(inner, outer, start):
    check_both(_nesting(inner, outer, start), _nesting_expected(inner, outer, start))


@pytest.mark.parametrize("inner, outer, start", NESTING_ROWS)
def test_nesting_torch(inner, outer, start):
    check_torch(_nesting(inner, outer, start), _nesting_expected(inner, outer, start))


def _random_nesting(seed: int) -> Callable[[Lib], list]:
    """Random nesting up to depth 5 with exceptions, against a stack model."""

    def scenario(L: Lib) -> list:
        rng = random.Random(seed)
        log: list = []

        def block(depth: int) -> None:
            name = rng.choice(list(MANAGERS))
            raise_here = rng.random() < 0.2
            with MANAGERS[name](L):
                log.append((name, L.state()))
                for _ in range(rng.randint(0, 2) if depth < 5 else 0):
                    try:
                        block(depth + 1)
                    except ArithmeticError:
                        pass
                    log.append(("back", L.state()))
                if raise_here:
                    raise ZeroDivisionError
            log.append(("left", L.state()))

        try:
            block(0)
        except ZeroDivisionError:
            pass
        log.append(("end", L.state()))
        L.reset()
        return log

    return scenario


def _random_nesting_model(seed: int) -> list:
    rng = random.Random(seed)
    log: list = []

    def block(depth: int, state: State) -> None:
        name = rng.choice(list(MANAGERS))
        raise_here = rng.random() < 0.2
        inner = EFFECTS[name](state)
        log.append((name, inner))
        for _ in range(rng.randint(0, 2) if depth < 5 else 0):
            try:
                block(depth + 1, inner)
            except ArithmeticError:
                pass
            log.append(("back", inner))
        if raise_here:
            raise ZeroDivisionError
        log.append(("left", state))

    try:
        block(0, DEFAULT)
    except ZeroDivisionError:
        pass
    log.append(("end", DEFAULT))
    return log


@pytest.mark.parametrize("seed", range(40))
def test_random_nesting(seed):
    check_both(_random_nesting(seed), _random_nesting_model(seed))


@pytest.mark.parametrize("seed", range(40))
def test_random_nesting_torch(seed):
    check_torch(_random_nesting(seed), _random_nesting_model(seed))


# --------------------------------------------------------------------------
# 1.3 set_grad_enabled specifics
# --------------------------------------------------------------------------


def _set_grad_enabled_plain(L: Lib) -> list:
    out = []
    s = L.set_grad_enabled(False)  # applies at construction, persistently
    out += [L.state(), s.prev, s.mode]
    t = L.set_grad_enabled(True)
    out += [L.state(), t.prev, t.mode]
    # Item 11: exit restores the value seen at construction, not at enter.
    s = L.set_grad_enabled(False)
    L.set_grad_enabled(False)
    with s:
        out.append(L.state())
    out.append(L.state())  # on again: s.prev was True
    # Item 14: a plain call inside a block is undone when the block exits.
    with L.no_grad():
        L.set_grad_enabled(True)
        out.append(L.state())
    out.append(L.state())
    with L.enable_grad():
        L.set_grad_enabled(False)
        out.append(L.state())
    out.append(L.state())
    # Item 15: a function that does not restore leaks to its caller.
    def leaky():
        L.set_grad_enabled(False)

    leaky()
    out.append(L.state())
    L.set_grad_enabled(True)
    # Item 16: with set_grad_enabled(is_train) for both values.
    for is_train in (True, False):
        with L.set_grad_enabled(is_train):
            out.append(L.state())
        out.append(L.state())
    # Item 9 / 23: attributes before entering.
    out += [L.no_grad().prev, L.inference_mode().mode, L.inference_mode(False).mode,
            L.inference_mode(mode=False).mode]
    L.reset()
    return out


SET_GRAD_ENABLED_PLAIN_EXPECTED = [
    (False, False), True, False,
    (True, False), False, True,
    (False, False), (True, False),
    (True, False), (True, False),
    (False, False), (True, False),
    (False, False),
    (True, False), (True, False), (False, False), (True, False),
    False, True, False, False,
]


def test_set_grad_enabled_plain_call():
    check_both(_set_grad_enabled_plain, SET_GRAD_ENABLED_PLAIN_EXPECTED)


def test_set_grad_enabled_plain_call_torch():
    check_torch(_set_grad_enabled_plain, SET_GRAD_ENABLED_PLAIN_EXPECTED)


def _func():
    pass


# torch names an argument's type by its class: NumPy 2 calls the boolean scalar `numpy.bool`,
# NumPy 1 `numpy.bool_`.
NUMPY_BOOL = f"numpy.{type(np.bool_(False)).__name__}"

BAD_MODES = [
    pytest.param(0, "int", id="int"),
    pytest.param(1, "int", id="int1"),
    pytest.param(None, "NoneType", id="NoneType"),
    pytest.param("False", "str", id="str"),
    pytest.param(0.0, "float", id="float"),
    pytest.param(_func, "function", id="function"),
    pytest.param(np.bool_(False), NUMPY_BOOL, id="numpy.bool"),
    pytest.param(np.array(False), "numpy.ndarray", id="numpy.ndarray"),
    pytest.param([False], "list", id="list"),
]


def _bad_mode(value: Any) -> Callable[[Lib], list]:
    def scenario(L: Lib) -> list:
        out = []
        for start in (True, False):
            L.set_grad_enabled(start)
            with pytest.raises(TypeError) as info:
                L.set_grad_enabled(value)
            out.append((str(info.value), L.is_grad_enabled()))
            with pytest.raises(TypeError) as info:
                L.set_grad_enabled(mode=value)
            out.append((str(info.value), L.is_grad_enabled()))
        L.reset()
        return out

    return scenario


def _bad_mode_expected(type_name: str) -> list:
    msg = f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type_name}"
    return [(msg, True), (msg, True), (msg, False), (msg, False)]


@pytest.mark.parametrize("value, type_name", BAD_MODES)
def test_set_grad_enabled_rejects_non_bool(value, type_name):
    check_both(_bad_mode(value), _bad_mode_expected(type_name))


@pytest.mark.parametrize("value, type_name", BAD_MODES)
def test_set_grad_enabled_rejects_non_bool_torch(value, type_name):
    check_torch(_bad_mode(value), _bad_mode_expected(type_name))


def test_set_grad_enabled_arity_errors():
    with pytest.raises(TypeError, match=r"^set_grad_enabled.__init__\(\) missing 1 required positional argument: 'mode'$"):
        grad_mode.set_grad_enabled()
    with pytest.raises(TypeError, match=r"^no_grad.__init__\(\) takes 1 positional argument but 2 were given$"):
        grad_mode.no_grad(None)
    assert NPGRAD.state() == DEFAULT


def _reprs(L: Lib) -> list:
    out = []
    for mode in (False, True):
        s = L.set_grad_enabled(mode)
        out += [repr(s).replace(L.module_path, "<mod>"), str(s).replace(L.module_path, "<mod>")]
    L.reset()
    return out


REPRS_EXPECTED = [
    "<mod>.set_grad_enabled(mode=False)", "<mod>.set_grad_enabled(mode=False)",
    "<mod>.set_grad_enabled(mode=True)", "<mod>.set_grad_enabled(mode=True)",
]


def test_set_grad_enabled_repr():
    check_both(_reprs, REPRS_EXPECTED)
    assert repr(grad_mode.set_grad_enabled(False)) == "npgrad.autograd.grad_mode.set_grad_enabled(mode=False)"
    NPGRAD.reset()


def test_set_grad_enabled_repr_torch():
    check_torch(_reprs, REPRS_EXPECTED)


# --------------------------------------------------------------------------
# 2. Decorators
# --------------------------------------------------------------------------

# (label, how to decorate, effect of the decorator on the state)
DECORATOR_FORMS: list[tuple[str, Callable[[Lib, Callable], Callable], str]] = [
    ("no_grad()", lambda L, f: L.no_grad()(f), "no_grad"),
    ("no_grad", lambda L, f: L.no_grad(f), "no_grad"),
    ("enable_grad()", lambda L, f: L.enable_grad()(f), "enable_grad"),
    ("enable_grad", lambda L, f: L.enable_grad(f), "enable_grad"),
    ("inference_mode()", lambda L, f: L.inference_mode()(f), "inference_mode"),
    ("inference_mode", lambda L, f: L.inference_mode(f), "inference_mode"),
    ("inference_mode(True)", lambda L, f: L.inference_mode(True)(f), "inference_mode"),
    ("inference_mode(False)", lambda L, f: L.inference_mode(False)(f), "inference_mode_False"),
    ("inference_mode(mode=False)", lambda L, f: L.inference_mode(mode=False)(f), "inference_mode_False"),
    ("set_grad_enabled(False)", lambda L, f: L.set_grad_enabled(False)(f), "set_grad_enabled_False"),
    ("set_grad_enabled(True)", lambda L, f: L.set_grad_enabled(True)(f), "set_grad_enabled_True"),
]
DECORATOR_ROWS = [pytest.param(form, effect, id=label) for label, form, effect in DECORATOR_FORMS]

# Outer states a decorated function is called from.
CALLER_STATES: dict[str, tuple[str | None, State]] = {
    "default": (None, DEFAULT),
    "in_no_grad": ("no_grad", (False, False)),
    "in_inference": ("inference_mode", (False, True)),
}


def _decorated_calls(form: Callable) -> Callable[[Lib], list]:
    def scenario(L: Lib) -> list:
        out = []

        def body(x, *, y=1):
            """doc"""
            if x == "boom":
                raise RuntimeError("boom")
            return (x, y, L.state())

        before = L.state()
        wrapped = form(L, body)
        out.append(L.state() == before)  # decorating changes nothing (item 27)
        out.append((wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ is body, wrapped is not body,
                    str(inspect.signature(wrapped))))
        for caller, (outer, _) in CALLER_STATES.items():
            with MANAGERS[outer](L) if outer else _null():
                out.append((caller, wrapped(1, y=2)))
                with pytest.raises(RuntimeError, match="boom"):
                    wrapped("boom")
                out.append((caller, "after", L.state()))
                # Called twice: a fresh clone per call.
                out.append((caller, wrapped(3)))
        out.append(L.state())
        L.reset()
        return out

    return scenario


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


def _decorated_expected(effect: str) -> list:
    out: list = [True, ("body", "doc", True, True, "(x, *, y=1)")]
    for caller, (_, state) in CALLER_STATES.items():
        out.append((caller, (1, 2, EFFECTS[effect](state))))
        out.append((caller, "after", state))
        out.append((caller, (3, 1, EFFECTS[effect](state))))
    out.append(DEFAULT)
    return out


@pytest.mark.parametrize("form, effect", DECORATOR_ROWS)
def test_decorator_forms(form, effect):
    check_both(_decorated_calls(form), _decorated_expected(effect))


@pytest.mark.parametrize("form, effect", DECORATOR_ROWS)
def test_decorator_forms_torch(form, effect):
    check_torch(_decorated_calls(form), _decorated_expected(effect))


def _decorator_sharing(L: Lib) -> list:
    """One instance decorating functions that call each other; recursion; mixing with `with`."""
    out = []
    off = L.no_grad()
    on = L.enable_grad()

    @off
    def f(n):
        out.append(("f", n, L.state()))
        if n:
            g(n - 1)
            out.append(("f-after-g", n, L.state()))

    @on
    def g(n):
        out.append(("g", n, L.state()))
        f(n)
        out.append(("g-after-f", n, L.state()))

    @off
    def h():
        out.append(("h", L.state()))

    def outer_f():
        f(2)
        h()  # shares `off` with f
        out.append(("outer", L.state()))

    outer_f()
    with off:  # the decorating instance itself used as a with block
        h()
        out.append(("in-with", L.state()))
    out.append(("end", L.state()))
    L.reset()
    return out


SHARING_EXPECTED = [
    ("f", 2, (False, False)),
    ("g", 1, (True, False)),
    ("f", 1, (False, False)),
    ("g", 0, (True, False)),
    ("f", 0, (False, False)),
    ("g-after-f", 0, (True, False)),
    ("f-after-g", 1, (False, False)),
    ("g-after-f", 1, (True, False)),
    ("f-after-g", 2, (False, False)),
    ("h", (False, False)),
    ("outer", (True, False)),
    ("h", (False, False)),
    ("in-with", (False, False)),
    ("end", (True, False)),
]


def test_decorator_sharing_and_recursion():
    check_both(_decorator_sharing, SHARING_EXPECTED)


def test_decorator_sharing_and_recursion_torch():
    check_torch(_decorator_sharing, SHARING_EXPECTED)


def _decorating_non_functions(L: Lib) -> list:
    out = []
    for make in (lambda: L.no_grad(False), lambda: L.no_grad(5), lambda: L.enable_grad(0),
                 lambda: L.inference_mode(1), lambda: L.inference_mode(None),
                 lambda: L.inference_mode(mode=None)):
        w = make()
        out.append((inspect.isfunction(w), w.__name__, L.state()))
        with pytest.raises(TypeError) as info:
            w()
        out.append(str(info.value))
    # Bare @set_grad_enabled is the bool TypeError.
    with pytest.raises(TypeError) as info:
        L.set_grad_enabled(_func)
    out.append(str(info.value))
    out.append(L.state())
    return out


NON_FUNCTIONS_EXPECTED = [
    (True, "decorate_context", DEFAULT), "'bool' object is not callable",
    (True, "decorate_context", DEFAULT), "'int' object is not callable",
    (True, "decorate_context", DEFAULT), "'int' object is not callable",
    (True, "decorate_context", DEFAULT), "'int' object is not callable",
    (True, "decorate_context", DEFAULT), "'NoneType' object is not callable",
    (True, "decorate_context", DEFAULT), "'NoneType' object is not callable",
    "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not function",
    DEFAULT,
]


def test_non_bool_argument_means_decorate():
    check_both(_decorating_non_functions, NON_FUNCTIONS_EXPECTED)


def test_non_bool_argument_means_decorate_torch():
    check_torch(_decorating_non_functions, NON_FUNCTIONS_EXPECTED)


def _callables(L: Lib) -> list:
    """Methods, classmethod/staticmethod, lambdas, callable objects, partials (item 30)."""
    out = []

    class M:
        @L.no_grad()
        def method(self):
            return L.state()

        @classmethod
        @L.no_grad()
        def cm(cls):
            return (cls.__name__, L.state())

        @staticmethod
        @L.no_grad()
        def sm_under():
            return L.state()

        @L.no_grad()
        @staticmethod
        def sm_over():
            return L.state()

        def __call__(self, a):
            return (a, L.state())

    out += [M().method(), M.cm(), M().cm(), M.sm_under(), M.sm_over()]
    out.append(L.inference_mode()(lambda: L.state())())
    out.append(L.no_grad()(M())(7))
    out.append(L.no_grad()(functools.partial(lambda a, b: (a, b, L.state()), 1))(2))
    out.append(L.state())
    return out


OFF = (False, False)
CALLABLES_EXPECTED = [OFF, ("M", OFF), ("M", OFF), OFF, OFF, (False, True), (7, OFF), (1, 2, OFF), DEFAULT]


def test_decorating_callables():
    check_both(_callables, CALLABLES_EXPECTED)


def test_decorating_callables_torch():
    check_torch(_callables, CALLABLES_EXPECTED)


def _lazy_results(L: Lib) -> list:
    """Item 33: lazy code returned by a decorated regular function runs under the caller's mode.
    Item 34: async def bodies run under the awaiting code's mode."""
    out = []

    @L.no_grad()
    def make():
        return (L.state() for _ in range(1)), lambda: L.state()

    gen, closure = make()
    out += [next(gen), closure()]

    @L.no_grad()
    async def coro_fn():
        return L.state()

    out.append(inspect.iscoroutinefunction(coro_fn))
    for outer in (None, "no_grad"):
        coro = coro_fn()
        with MANAGERS[outer](L) if outer else _null():
            with pytest.raises(StopIteration) as info:
                coro.send(None)
        out.append(info.value.value)
    return out


LAZY_EXPECTED = [DEFAULT, DEFAULT, False, DEFAULT, OFF]


def test_lazy_results_run_under_caller_mode():
    check_both(_lazy_results, LAZY_EXPECTED)


def test_lazy_results_run_under_caller_mode_torch():
    check_torch(_lazy_results, LAZY_EXPECTED)


CLASS_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only decorate "
    "functions or methods. To preserve the current behavior of class decoration, you can directly "
    "decorate the `__init__` method and nothing else."
)

CLASS_FORMS = [
    pytest.param(lambda L: L.no_grad(), "no_grad", id="no_grad()"),
    pytest.param(lambda L: L.no_grad, "no_grad", id="no_grad"),
    pytest.param(lambda L: L.inference_mode, "inference_mode", id="inference_mode"),
    pytest.param(lambda L: L.inference_mode(False), "inference_mode_False", id="inference_mode(False)"),
    pytest.param(lambda L: L.enable_grad(), "enable_grad", id="enable_grad()"),
]


def _class_decoration(get_decorator: Callable) -> Callable[[Lib], list]:
    def scenario(L: Lib) -> list:
        class C:
            def __init__(self, v):
                self.v = v
                self.seen = L.state()

            def method(self):
                return L.state()

        with L.no_grad():  # so enable_grad's effect is visible
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                D = get_decorator(L)(C)
            c = D(3)
            out = [
                [(w.category, str(w.message)) for w in caught],
                inspect.isclass(D), inspect.isfunction(D), D.__name__,
                isinstance(c, C), c.v, c.seen, c.method(),
            ]
        return out

    return scenario


def _class_expected(effect: str) -> list:
    return [[(FutureWarning, CLASS_WARNING)], False, True, "<lambda>", True, 3,
            EFFECTS[effect](OFF), OFF]


@pytest.mark.parametrize("get_decorator, effect", CLASS_FORMS)
def test_class_decoration_warns(get_decorator, effect):
    check_both(_class_decoration(get_decorator), _class_expected(effect))


@pytest.mark.parametrize("get_decorator, effect", CLASS_FORMS)
def test_class_decoration_warns_torch(get_decorator, effect):
    check_torch(_class_decoration(get_decorator), _class_expected(effect))


# --------------------------------------------------------------------------
# 2. Generators (items 31, 32)
# --------------------------------------------------------------------------

GENERATOR_ROWS = [pytest.param(form, effect, id=label) for label, form, effect in DECORATOR_FORMS]


def _generator_protocol(form: Callable, caller: str | None) -> Callable[[Lib], list]:
    def scenario(L: Lib) -> list:
        log: list = []

        def body(n):
            log.append(("start", L.state()))
            try:
                received = yield ("first", L.state())
                log.append(("received", received, L.state()))
                try:
                    yield ("second", L.state())
                except ValueError as e:
                    log.append(("caught", str(e), L.state()))
                    yield ("recovered", L.state())
                sub = yield from _sub(L, log)
                log.append(("sub-returned", sub, L.state()))
                yield ("last", L.state())
                return ("done", n)
            finally:
                log.append(("finally", L.state()))

        gen_fn = form(L, body)
        with MANAGERS[caller](L) if caller else _null():
            caller_state = L.state()
            out: list = [inspect.isgeneratorfunction(gen_fn), gen_fn.__name__]
            g = gen_fn(5)
            out.append(("created", list(log), L.state()))  # nothing ran yet
            out.append(next(g))
            out.append(("between", L.state()))
            out.append(g.send("hello"))
            out.append(("between", L.state()))
            out.append(g.throw(ValueError("v")))
            out.append(next(g))  # from the sub-generator
            out.append(g.send("to-sub"))
            out.append(("between", L.state()))
            with pytest.raises(StopIteration) as info:
                next(g)
            out.append(("returned", info.value.value, L.state()))
            # close() while suspended runs finally under the mode.
            g2 = gen_fn(6)
            next(g2)
            g2.close()
            out.append(("closed", L.state()))
            # An unhandled throw propagates and the caller's mode survives.
            g3 = gen_fn(7)
            next(g3)
            with pytest.raises(KeyError):
                g3.throw(KeyError("k"))
            out.append(("thrown", L.state()))
            # Iterating in a for loop.
            out.append([v[0] for v in gen_fn(8) if v[0] != "second"][:2])
            out.append(("caller", caller_state == L.state()))
        out.append(log)
        out.append(L.state())
        return out

    return scenario


def _sub(L, log):
    got = yield ("sub", L.state())
    log.append(("sub-received", got, L.state()))
    return "sub-value"


def _generator_expected(effect: str, caller: str | None) -> list:
    c = EFFECTS[caller](DEFAULT) if caller else DEFAULT
    m = EFFECTS[effect](c)
    log = [
        ("start", m), ("received", "hello", m), ("caught", "v", m),
        ("sub-received", "to-sub", m), ("sub-returned", "sub-value", m), ("finally", m),
        ("start", m), ("finally", m),  # g2, closed
        ("start", m), ("finally", m),  # g3, thrown
        ("start", m), ("received", None, m), ("sub-received", None, m),
        ("sub-returned", "sub-value", m), ("finally", m),  # the for loop
    ]
    return [
        True, "body", ("created", [], c), ("first", m), ("between", c), ("second", m), ("between", c),
        ("recovered", m), ("sub", m), ("last", m), ("between", c), ("returned", ("done", 5), c),
        ("closed", c), ("thrown", c), ["first", "sub"], ("caller", True), log, DEFAULT,
    ]


@pytest.mark.parametrize("caller", [None, "no_grad", "inference_mode"])
@pytest.mark.parametrize("form, effect", GENERATOR_ROWS)
def test_generator_decorated(form, effect, caller):
    check_both(_generator_protocol(form, caller), _generator_expected(effect, caller))


@pytest.mark.parametrize("caller", [None, "no_grad", "inference_mode"])
@pytest.mark.parametrize("form, effect", GENERATOR_ROWS)
def test_generator_decorated_torch(form, effect, caller):
    check_torch(_generator_protocol(form, caller), _generator_expected(effect, caller))


def _plain_generator_leaks(L: Lib) -> list:
    def gen():
        with L.no_grad():
            yield L.state()
        yield L.state()

    g = gen()
    out = [next(g), L.state(), next(g), L.state()]
    g.close()
    return out


def test_plain_generator_inside_with_leaks():
    check_both(_plain_generator_leaks, [OFF, OFF, DEFAULT, DEFAULT])


def test_plain_generator_inside_with_leaks_torch():
    check_torch(_plain_generator_leaks, [OFF, OFF, DEFAULT, DEFAULT])


# --------------------------------------------------------------------------
# 3. Exceptions, reuse, clone, quirks
# --------------------------------------------------------------------------

EXCEPTIONS = [ValueError, KeyboardInterrupt, SystemExit, GeneratorExit]


def _exception_safety(L: Lib) -> list:
    out = []
    for start in STARTS:
        for name, make in MANAGERS.items():
            for exc in EXCEPTIONS:
                enter_start(L, start)
                try:
                    with make(L):
                        raise exc("x")
                except exc:
                    pass
                out.append(L.state())
                L.reset()

            # return / break / continue leave the block through the exit too
            def ret():
                with make(L):
                    return L.state()

            enter_start(L, start)
            out.append((ret(), L.state()))
            for _ in range(2):
                with make(L):
                    break
            out.append(L.state())
            for _ in range(2):
                with make(L):
                    continue
            out.append(L.state())
            L.reset()
    return out


def _exception_safety_expected() -> list:
    out = []
    for start, s0 in STARTS.items():
        for name in MANAGERS:
            out += [s0] * len(EXCEPTIONS)
            out += [(EFFECTS[name](s0), s0), s0, s0]
    return out


def test_exceptions_restore_state():
    check_both(_exception_safety, _exception_safety_expected())


def test_exceptions_restore_state_torch():
    check_torch(_exception_safety, _exception_safety_expected())


def _reuse(L: Lib) -> list:
    out = []
    # Item 39: sequential reuse of one instance.
    for name, make in MANAGERS.items():
        m = make(L)
        for _ in range(3):
            with m:
                out.append((name, L.state()))
            out.append((name, "out", L.state()))
        L.reset()
    # Item 40: not re-entrant.
    m = L.no_grad()
    with m:
        with m:
            pass
        out.append(("no_grad-inner-exit", L.state()))
    out.append(("no_grad-both", L.state()))  # stays off
    L.reset()
    e = L.enable_grad()
    with L.no_grad():
        with e:
            with e:
                pass
            out.append(("enable_grad-inner-exit", L.state()))
        out.append(("enable_grad-in-no_grad", L.state()))  # grad on inside no_grad
        L.set_grad_enabled(False)
    out.append(("enable_grad-end", L.state()))
    L.reset()
    i = L.inference_mode()
    with i:
        out.append(("inference-outer", L.state()))
        with i:
            out.append(("inference-inner", L.state()))  # out of inference mode
        out.append(("inference-inner-exit", L.state()))
    out.append(("inference-both", L.state()))  # stuck in inference mode
    L.reset()
    return out


def _reuse_expected() -> list:
    out = []
    for name in MANAGERS:
        out += [(name, EFFECTS[name](DEFAULT)), (name, "out", DEFAULT)] * 3
    out += [
        ("no_grad-inner-exit", OFF), ("no_grad-both", OFF),
        ("enable_grad-inner-exit", DEFAULT), ("enable_grad-in-no_grad", DEFAULT), ("enable_grad-end", DEFAULT),
        ("inference-outer", (False, True)), ("inference-inner", DEFAULT),
        ("inference-inner-exit", (False, True)), ("inference-both", (False, True)),
    ]
    return out


def test_reuse_and_non_reentrancy():
    check_both(_reuse, _reuse_expected())


def test_reuse_and_non_reentrancy_torch():
    check_torch(_reuse, _reuse_expected())


def _clone(L: Lib) -> list:
    out = []
    for make in (lambda: L.no_grad(), lambda: L.enable_grad(), lambda: L.inference_mode(),
                 lambda: L.inference_mode(False)):
        m = make()
        c = m.clone()
        out.append((type(c) is type(m), c is not m, getattr(c, "mode", None) == getattr(m, "mode", None),
                    L.state()))
    s = L.set_grad_enabled(False)
    L.set_grad_enabled(True)
    c = s.clone()  # a new construction: applies the mode now, prev is the current state
    out.append((type(c) is type(s), c.mode, c.prev, L.state()))
    L.reset()
    return out


CLONE_EXPECTED = [(True, True, True, DEFAULT)] * 4 + [(True, False, True, OFF)]


def test_clone():
    check_both(_clone, CLONE_EXPECTED)


def test_clone_torch():
    check_torch(_clone, CLONE_EXPECTED)


def _exit_without_enter(L: Lib) -> list:
    out = []
    L.no_grad().__exit__(None, None, None)
    out.append(("no_grad", L.state()))  # off: initial prev is False
    L.reset()
    for make in (L.enable_grad, L.inference_mode):
        with pytest.raises(AttributeError) as info:
            make().__exit__(None, None, None)
        out.append((str(info.value), L.state()))
    s = L.set_grad_enabled(False)
    s.__exit__(None, None, None)
    out.append(("set_grad_enabled", L.state()))
    # inference_mode's exit twice is harmless.
    i = L.inference_mode()
    i.__enter__()
    i.__exit__(None, None, None)
    out.append(("inference-exit", L.state()))
    with L.no_grad():
        i.__exit__(None, None, None)
        out.append(("inference-exit-again", L.state()))
    L.reset()
    return out


EXIT_WITHOUT_ENTER_EXPECTED = [
    ("no_grad", OFF),
    ("'enable_grad' object has no attribute 'prev'", DEFAULT),
    ("'inference_mode' object has no attribute '_inference_mode_context'", DEFAULT),
    ("set_grad_enabled", DEFAULT),
    ("inference-exit", DEFAULT),
    ("inference-exit-again", OFF),
]


def test_exit_without_enter():
    check_both(_exit_without_enter, EXIT_WITHOUT_ENTER_EXPECTED)


def test_exit_without_enter_torch():
    check_torch(_exit_without_enter, EXIT_WITHOUT_ENTER_EXPECTED)


def _inference_guard_lifetime(L: Lib) -> list:
    out = []
    L.inference_mode().__enter__()  # temporary: undone at once
    out.append(("temporary", L.state()))
    L.inference_mode(False).__enter__()
    out.append(("temporary-False", L.state()))
    L.no_grad().__enter__()  # plain flag: persists
    out.append(("no_grad-temporary", L.state()))
    L.reset()
    m = L.inference_mode()
    m.__enter__()
    out.append(("kept", L.state()))
    del m
    gc.collect()
    out.append(("deleted", L.state()))
    with L.inference_mode():
        m = L.inference_mode(False)
        m.__enter__()
        out.append(("False-in-inference", L.state()))
    out.append(("outer-exited-first", L.state()))
    m.__exit__(None, None, None)
    out.append(("inner-exited-last", L.state()))  # its guard restores what it saw
    L.reset()
    return out


INFERENCE_GUARD_EXPECTED = [
    ("temporary", DEFAULT), ("temporary-False", DEFAULT), ("no_grad-temporary", OFF),
    ("kept", (False, True)), ("deleted", DEFAULT),
    ("False-in-inference", DEFAULT), ("outer-exited-first", DEFAULT), ("inner-exited-last", (False, True)),
]


def test_inference_guard_lifetime():
    check_both(_inference_guard_lifetime, INFERENCE_GUARD_EXPECTED)


def test_inference_guard_lifetime_torch():
    check_torch(_inference_guard_lifetime, INFERENCE_GUARD_EXPECTED)


# --------------------------------------------------------------------------
# 4. Threads
# --------------------------------------------------------------------------


def _in_thread(fn: Callable[[], Any]) -> Any:
    result: list = []
    t = threading.Thread(target=lambda: result.append(fn()))
    t.start()
    t.join()
    return result[0]


def _thread_defaults(L: Lib) -> list:
    out = []
    for name, make in MANAGERS.items():
        with make(L):
            out.append((name, _in_thread(L.state), L.state()))
    L.set_grad_enabled(False)
    out.append(("global_off", _in_thread(L.state), L.state()))
    L.reset()
    # A thread's own changes, even leaked, stay in it; dying in inference mode is harmless.
    def leak():
        L.set_grad_enabled(False)
        m = L.inference_mode()
        m.__enter__()
        leak.keep = m  # keep the guard alive past the thread's end
        return L.state()

    out.append(("leaky-thread", _in_thread(leak), L.state()))
    # Drop the guard in yet another thread: a guard restores the state of the
    # thread it dies in (torch's C++ guard does the same), so dying here would
    # put this thread into the leaky thread's previous state.
    _in_thread(lambda: leak.__dict__.pop("keep") and None)
    out.append(("after-drop", L.state()))
    return out


def _thread_defaults_expected() -> list:
    out = [(name, DEFAULT, EFFECTS[name](DEFAULT)) for name in MANAGERS]
    out.append(("global_off", DEFAULT, OFF))
    out.append(("leaky-thread", (False, True), DEFAULT))
    out.append(("after-drop", DEFAULT))
    return out


def test_new_threads_start_from_defaults():
    check_both(_thread_defaults, _thread_defaults_expected())


def test_new_threads_start_from_defaults_torch():
    check_torch(_thread_defaults, _thread_defaults_expected())


def _concurrent_threads(L: Lib) -> list:
    n = 8
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def work(i: int) -> None:
        name = list(MANAGERS)[i % len(MANAGERS)]
        seen = []
        for _ in range(50):
            if i % 2:
                L.set_grad_enabled(False)
            barrier.wait() if _ == 0 else None
            with MANAGERS[name](L):
                seen.append(L.state())
            seen.append(L.state())
        results[i] = (name, sorted(set(seen)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results + [L.state()]


def _concurrent_expected() -> list:
    out = []
    for i in range(8):
        name = list(MANAGERS)[i % len(MANAGERS)]
        start = OFF if i % 2 else DEFAULT
        out.append((name, sorted({EFFECTS[name](start), start})))
    return out + [DEFAULT]


def test_concurrent_threads_keep_own_settings():
    check_both(_concurrent_threads, _concurrent_expected())


def test_concurrent_threads_keep_own_settings_torch():
    check_torch(_concurrent_threads, _concurrent_expected())


def _pool_worker(L: Lib) -> list:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        with L.no_grad():
            first = pool.submit(L.state).result()  # the caller's no_grad is not seen
        pool.submit(L.set_grad_enabled, False).result()
        second = pool.submit(L.state).result()  # the worker kept its plain set_grad_enabled(False)
        pool.submit(L.reset).result()
        third = pool.submit(L.state).result()
    return [first, second, third, L.state()]


def test_pool_worker_keeps_plain_setting():
    check_both(_pool_worker, [DEFAULT, OFF, DEFAULT, DEFAULT])


def test_pool_worker_keeps_plain_setting_torch():
    check_torch(_pool_worker, [DEFAULT, OFF, DEFAULT, DEFAULT])


# --------------------------------------------------------------------------
# 10. Anomaly mode (items 37, 48, 102-104)
# --------------------------------------------------------------------------

ANOMALY_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)


def _anomaly(L: Lib) -> list:
    out = []

    def flags():
        return (L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled())

    out.append(flags())
    # Raw setter: permanent, returns None, check_nan follows its default.
    out.append(L.set_anomaly_enabled(True))
    out.append(flags())
    out.append(L.set_anomaly_enabled(True, False))
    out.append(flags())
    L.set_anomaly_enabled(False, False)
    out.append(flags())
    L.set_anomaly_enabled(False)
    out.append(flags())  # also resets check_nan
    L.set_anomaly_enabled(enabled=True, check_nan=False)
    out.append(flags())
    L.set_anomaly_enabled(False)
    # Not a context manager, and fails only after enabling.
    with pytest.raises(TypeError):
        with L.set_anomaly_enabled(True):
            pass
    out.append(flags())
    L.set_anomaly_enabled(False)
    for call in (lambda: L.set_anomaly_enabled(), lambda: L.set_anomaly_enabled(check_nan=False),
                 lambda: L.set_anomaly_enabled(1), lambda: L.set_anomaly_enabled(True, 1),
                 lambda: L.set_anomaly_enabled(None), lambda: L.set_anomaly_enabled(np.bool_(True)),
                 lambda: L.set_anomaly_enabled(True, False, 3), lambda: L.set_anomaly_enabled(True, foo=3),
                 lambda: L.set_anomaly_enabled(True, enabled=True),
                 lambda: L.set_anomaly_enabled(True, True, check_nan=True),
                 lambda: L.set_anomaly_enabled(True, check_nan=1), lambda: L.set_anomaly_enabled(enabled=None)):
        with pytest.raises(TypeError) as info:
            call()
        out.append((str(info.value), flags()))

    # detect_anomaly: warns at construction; enter sets; exit restores construction-time flags.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = L.detect_anomaly(check_nan=False)
    out.append([(w.category, str(w.message)) for w in caught])
    out.append(flags())  # construction changes nothing
    with d as bound:
        out.append((bound, flags()))
        out.append(_in_thread(flags))  # process-global
    out.append(flags())
    with pytest.raises(TypeError) as info:
        d(_func)
    out.append(str(info.value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ZeroDivisionError):
            with L.detect_anomaly():
                1 / 0
    out.append(flags())

    # set_detect_anomaly: applies at construction, exit restores.
    s = L.set_detect_anomaly(True, check_nan=False)
    out.append(flags())
    with s as bound:
        out.append((bound, flags()))
    out.append(flags())
    L.set_anomaly_enabled(True)
    with L.set_detect_anomaly(False):
        out.append(flags())
    out.append(flags())
    L.set_anomaly_enabled(False)
    with pytest.raises(TypeError) as info:
        L.set_detect_anomaly(False)(_func)
    out.append(str(info.value))
    with pytest.raises(TypeError) as info:
        L.set_detect_anomaly(1)
    out.append((str(info.value), flags()))
    # Anomaly set in a thread is seen everywhere.
    _in_thread(lambda: L.set_anomaly_enabled(True, False))
    out.append(flags())
    L.set_anomaly_enabled(False)
    return out


_MISSING_MSG = 'set_anomaly_enabled() missing 1 required positional arguments: "enabled"'
_ARG = "set_anomaly_enabled(): argument '{}' (position {}) must be bool, not {}"
ANOMALY_EXPECTED = [
    (False, True),
    None, (True, True),
    None, (True, False),
    (False, False),
    (False, True),
    (True, False),
    (True, True),
    (_MISSING_MSG, (False, True)),
    (_MISSING_MSG, (False, True)),
    (_ARG.format("enabled", 1, "int"), (False, True)),
    (_ARG.format("check_nan", 2, "int"), (False, True)),
    (_ARG.format("enabled", 1, "NoneType"), (False, True)),
    (_ARG.format("enabled", 1, NUMPY_BOOL), (False, True)),
    ("set_anomaly_enabled() takes from 1 to 2 positional arguments but 3 were given", (False, True)),
    ("set_anomaly_enabled() got an unexpected keyword argument 'foo'", (False, True)),
    ("set_anomaly_enabled() got multiple values for argument 'enabled'", (False, True)),
    ("set_anomaly_enabled() got multiple values for argument 'check_nan'", (False, True)),
    ("set_anomaly_enabled(): argument 'check_nan' must be bool, not int", (False, True)),
    ("set_anomaly_enabled(): argument 'enabled' must be bool, not NoneType", (False, True)),
    [(UserWarning, ANOMALY_WARNING)],
    (False, True),
    (None, (True, False)),
    (True, False),
    (False, True),
    "'detect_anomaly' object is not callable",
    (False, True),
    (True, False),
    (None, (True, False)),
    (False, True),
    (False, True),
    (True, True),
    "'set_detect_anomaly' object is not callable",
    (_ARG.format("enabled", 1, "int"), (False, True)),
    (True, False),
]


def test_anomaly():
    check_both(_anomaly, ANOMALY_EXPECTED)


def test_anomaly_torch():
    check_torch(_anomaly, ANOMALY_EXPECTED)


def test_anomaly_module_flags_track_setter():
    # The engine reads these module attributes directly (Note [Anomaly flags are process-global]).
    assert (anomaly_mode._anomaly_enabled, anomaly_mode._anomaly_check_nan) == (False, True)
    with anomaly_mode.set_detect_anomaly(True, check_nan=False):
        assert (anomaly_mode._anomaly_enabled, anomaly_mode._anomaly_check_nan) == (True, False)
    assert (anomaly_mode._anomaly_enabled, anomaly_mode._anomaly_check_nan) == (False, True)


def test_anomaly_is_not_affected_by_grad_modes():
    with anomaly_mode.set_detect_anomaly(True):
        with grad_mode.inference_mode(), grad_mode.no_grad():
            assert anomaly_mode.is_anomaly_enabled()
        assert NPGRAD.state() == DEFAULT
    assert not anomaly_mode.is_anomaly_enabled()
