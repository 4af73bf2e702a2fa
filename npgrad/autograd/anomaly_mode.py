"""Anomaly detection switches: process-global flags and the two managers over them.

Note [Anomaly flags are process-global]
Unlike grad mode, anomaly mode is one flag for the whole process (torch keeps
it in a C++ static): a thread turning it on turns it on for every thread.  The
state is two module-level booleans:

    _anomaly_enabled    record forward stacks; report the failing node in backward
    _anomaly_check_nan  with _anomaly_enabled, a backward node returning NaN raises

The engine reads them per node as ``anomaly_mode._anomaly_enabled`` (a module
attribute lookup, no call).  Read them through the module, never with
``from ... import _anomaly_enabled``, which would copy a stale value.  Only
``set_anomaly_enabled`` writes them.
"""
from __future__ import annotations

import sys
import warnings
from typing import Any

from npgrad.autograd.grad_mode import _c_type_name

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "set_anomaly_enabled",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]

_anomaly_enabled: bool = False
_anomaly_check_nan: bool = True

_PARAMS = ("enabled", "check_nan")


def _check_bool(value: object, name: str, n_positional: int) -> None:
    if type(value) is not bool:
        # The position is named only for an argument that was passed positionally.
        index = _PARAMS.index(name)
        where = f" (position {index + 1})" if index < n_positional else ""
        raise TypeError(
            f"set_anomaly_enabled(): argument '{name}'{where} must be bool, not {_c_type_name(value)}"
        )


def _parse_set_anomaly_args(args: tuple, kwargs: dict) -> tuple[bool, bool]:
    """Bind ``(enabled, check_nan=True)`` with the wording of torch's C binding."""
    if len(args) > len(_PARAMS):
        raise TypeError(
            f"set_anomaly_enabled() takes from 1 to 2 positional arguments but {len(args)} were given"
        )
    bound = dict(zip(_PARAMS, args))
    for name, value in kwargs.items():
        if name not in _PARAMS:
            raise TypeError(f"set_anomaly_enabled() got an unexpected keyword argument '{name}'")
        if name in bound:
            raise TypeError(f"set_anomaly_enabled() got multiple values for argument '{name}'")
        bound[name] = value
    if "enabled" not in bound:
        raise TypeError('set_anomaly_enabled() missing 1 required positional arguments: "enabled"')
    enabled = bound["enabled"]
    check_nan = bound.get("check_nan", True)
    _check_bool(enabled, "enabled", len(args))
    _check_bool(check_nan, "check_nan", len(args))
    return enabled, check_nan


def set_anomaly_enabled(*args: Any, **kwargs: Any) -> None:
    """set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None

    Set the process-global anomaly flags now and for good; restores nothing.
    ``set_anomaly_enabled(False)`` also resets ``check_nan`` to True.  In user
    code prefer ``set_detect_anomaly``, which remembers the previous state.

    >>> from npgrad.autograd import anomaly_mode
    >>> anomaly_mode.set_anomaly_enabled(True, check_nan=False)
    >>> anomaly_mode.is_anomaly_enabled(), anomaly_mode.is_anomaly_check_nan_enabled()
    (True, False)
    >>> anomaly_mode.set_anomaly_enabled(False)
    """
    # Parsed by hand: torch's binding words its argument errors unlike Python.
    global _anomaly_enabled, _anomaly_check_nan
    _anomaly_enabled, _anomaly_check_nan = _parse_set_anomaly_args(args, kwargs)


def is_anomaly_enabled() -> bool:
    """Return True if anomaly detection is on (in any thread: the flag is global)."""
    return _anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Return True if anomaly detection checks backward outputs for NaN."""
    return _anomaly_check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on for the autograd engine.

    Inside, every recorded node keeps the stack of its forward call, so an
    error in backward names the forward line that built the failing node; with
    ``check_nan`` a backward node returning NaN raises.  Building it warns
    (anomaly detection is slow).  Not a decorator.

    >>> import warnings
    >>> from npgrad.autograd import anomaly_mode
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with anomaly_mode.detect_anomaly():
    ...         anomaly_mode.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: applies at once, restored when a ``with`` block exits.

    >>> from npgrad.autograd import anomaly_mode
    >>> with anomaly_mode.set_detect_anomaly(True):
    ...     anomaly_mode.is_anomaly_enabled()
    True
    >>> anomaly_mode.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def warn_backward_error(msg: str) -> None:
    """Warn ``msg`` about a failing backward node while its error is propagating.

    Note [Anomaly report under an error filter]: the report rides along with the
    node's own error, which must stay the one raised.  So where a warnings filter
    turns the report into an exception (``simplefilter("error")``), torch's engine
    prints it to stderr instead and lets the original error propagate; we do the same.
    """
    try:
        warnings.warn(msg, UserWarning, stacklevel=3)
    except Warning as w:
        sys.stderr.write(f"{type(w).__name__}: {w}\n")
