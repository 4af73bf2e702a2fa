"""Process-wide settings torch exposes at top level: the thread count and deterministic algorithms.

They live here, with the other backend flags, and ``npgrad`` re-exports them.
npgrad's kernels are NumPy's, which are deterministic already; the settings
are recorded and reported back, as scripts expect; the thread count also sizes
the BLAS pool (Note [Sizing the BLAS pool] in ``npgrad/_threads.py``).
"""
from __future__ import annotations

import os

from .. import _threads

_num_threads = os.cpu_count() or 1
_deterministic = False
_deterministic_warn_only = False


def set_num_threads(int: int) -> None:  # noqa: A002 - torch's argument name
    """Set the number of intra-op threads: the size of the BLAS pool NumPy's matmuls use.

    >>> import npgrad
    >>> before = npgrad.get_num_threads()
    >>> npgrad.set_num_threads(1); npgrad.get_num_threads()
    1
    >>> npgrad.set_num_threads(before)
    """
    global _num_threads
    n = int
    if isinstance(n, bool) or not isinstance(n, type(1)):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _num_threads = n
    _threads.set_blas_threads(n)   # Note [Sizing the BLAS pool]


def get_num_threads() -> int:
    """The number set by ``set_num_threads``; by default the machine's CPU count.

    >>> import npgrad
    >>> npgrad.get_num_threads() >= 1
    True
    """
    return _num_threads


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record whether deterministic algorithms are required (npgrad's always are).

    >>> import npgrad
    >>> npgrad.use_deterministic_algorithms(True)
    >>> npgrad.are_deterministic_algorithms_enabled()
    True
    >>> npgrad.use_deterministic_algorithms(False)
    """
    global _deterministic, _deterministic_warn_only
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic = mode
    _deterministic_warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    >>> import npgrad
    >>> npgrad.are_deterministic_algorithms_enabled()
    False
    """
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic algorithms were requested with ``warn_only=True``.

    >>> import npgrad
    >>> npgrad.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _deterministic_warn_only
