"""The four grad-mode managers: no_grad, enable_grad, set_grad_enabled, inference_mode.

The flags themselves live in ``npgrad._mode`` (see Note [One integer for the
mode]); this module only saves and restores them.  Every manager is also a
decorator (see ``npgrad.utils._contextlib``): each call of a decorated function
enters a fresh ``clone()`` and generator functions are re-entered on every
resume.

Note [Managers keep state on the instance]
As in torch, a manager stores what it must restore on itself (``prev``, or the
inference guard), set by ``__enter__`` or the constructor.  Consequences that
torch users can observe, and that we reproduce on purpose:
* one instance may be reused in *sequential* ``with`` blocks, but not nested in
  itself (the inner enter overwrites the saved state);
* ``no_grad().__exit__`` without ``__enter__`` switches grad *off* (its initial
  ``prev`` is False); ``enable_grad`` has no ``prev`` until entered;
* ``set_grad_enabled(mode)`` applies ``mode`` in its constructor and its exit
  restores the value seen at *construction*, so a plain call
  ``set_grad_enabled(False)`` changes the thread's mode persistently.

Note [The inference-mode guard]
torch's ``inference_mode.__enter__`` stores a guard object on the instance; the
guard switches the mode when it is *constructed* and switches back when it is
exited or destroyed.  ``_InferenceModeGuard`` models it, with ``__del__`` doing
the restore, so in CPython:
* ``inference_mode().__enter__()`` on a temporary is undone at once (the
  temporary, and its guard, die at the end of the statement);
* entering the same instance twice builds the new guard before dropping the
  old one, whose death restores the state from before the outer block: inside
  the inner block the thread is *out* of inference mode and after both exits
  it is stuck *in* it (torch does exactly this);
* exiting twice is harmless: a guard restores at most once.
"""
from __future__ import annotations

from typing import Any

from npgrad._mode import (GRAD, INFERENCE, _get_mode, _is_view_replay_enabled,
                          _set_grad_enabled, _set_mode, _set_view_replay_enabled, is_grad_enabled)
from npgrad.utils._contextlib import F, _DecoratorContextManager, _NoParamDecoratorContextManager

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]


def _c_type_name(obj: object) -> str:
    """The type name CPython puts in argument errors (``tp_name``).

    Classes written in Python give their bare name (``Tensor``); C types give
    their dotted name (``numpy.ndarray``), builtins their bare name (``int``).
    """
    tp = type(obj)
    module = getattr(tp, "__module__", "builtins")
    is_heap_type = bool(tp.__flags__ & (1 << 9))  # Py_TPFLAGS_HEAPTYPE
    if is_heap_type or module == "builtins":
        return tp.__name__
    return f"{module}.{tp.__qualname__}"


def _apply_grad_mode(enabled: bool) -> None:
    """Set the thread's grad flag, accepting a real ``bool`` only (as torch's binding)."""
    if type(enabled) is not bool:
        raise TypeError(
            "set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
            f"not {_c_type_name(enabled)}"
        )
    _set_grad_enabled(enabled)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns grad mode off in this thread.

    Results computed inside do not require grad, even from inputs that do.
    Inference mode is left as it is.  Works as ``with no_grad():``,
    ``@no_grad()`` and bare ``@no_grad``.

    >>> import npgrad
    >>> with npgrad.no_grad():
    ...     npgrad.is_grad_enabled()
    False
    >>> npgrad.is_grad_enabled()
    True
    """

    def __init__(self) -> None:
        # Before entering, ``prev`` is False (see Note [Managers keep state on the instance]).
        self.prev = False

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        _set_grad_enabled(False)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        _apply_grad_mode(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns grad mode on in this thread.

    Useful inside ``no_grad``.  Inside inference mode the grad flag turns on
    but nothing is recorded: inference mode stays on.

    >>> import npgrad
    >>> with npgrad.no_grad():
    ...     with npgrad.enable_grad():
    ...         npgrad.is_grad_enabled()
    True
    """

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        _set_grad_enabled(True)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        # No ``prev`` before the first enter: AttributeError, as in torch.
        _apply_grad_mode(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off: as a plain call, a context manager or a decorator.

    The constructor applies ``mode`` at once and remembers the previous value in
    ``prev``; leaving a ``with`` block restores that value.  Only a real
    ``bool`` is accepted.

    >>> import npgrad
    >>> with npgrad.set_grad_enabled(False):
    ...     npgrad.is_grad_enabled()
    False
    >>> _ = npgrad.set_grad_enabled(False)  # persistent for this thread
    >>> npgrad.is_grad_enabled()
    False
    >>> _ = npgrad.set_grad_enabled(True)
    """

    def __init__(self, mode: bool) -> None:
        self.prev = is_grad_enabled()
        self.mode = mode
        _apply_grad_mode(mode)

    def __call__(self, orig_func: F) -> F:
        # Decorating must not change the mode: undo what the constructor did.
        _apply_grad_mode(self.prev)
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        _apply_grad_mode(self.mode)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        _apply_grad_mode(self.prev)

    def __str__(self) -> str:
        cls = type(self)
        return f"{cls.__module__}.{cls.__qualname__}(mode={self.mode})"

    def __repr__(self) -> str:
        return str(self)

    def clone(self) -> set_grad_enabled:
        """Return a new ``set_grad_enabled(self.mode)``, which applies the mode now."""
        return self.__class__(self.mode)


class _InferenceModeGuard:
    """Switches inference mode when built; switches back once, on exit or death.

    See Note [The inference-mode guard].
    """

    __slots__ = ("_prev", "_active")

    def __init__(self, enabled: bool) -> None:
        prev = _get_mode()
        self._prev = prev
        self._active = True
        others = prev & ~(GRAD | INFERENCE)
        # Inference mode on: grad off.  Inference mode off: grad on, always.
        _set_mode(others | (INFERENCE if enabled else GRAD))

    def exit(self) -> None:
        if self._active:
            self._active = False
            _set_mode(self._prev)

    def __del__(self) -> None:
        # A guard that dies while active restores the mode it replaced.
        try:
            self.exit()
        except Exception:  # interpreter shutdown: module state may be gone
            pass


class inference_mode(_DecoratorContextManager):
    """Context manager and decorator for inference mode.

    ``inference_mode()`` (or ``mode=True``) turns grad off and inference mode
    on: results are inference tensors and never recorded.
    ``inference_mode(False)`` turns grad on and inference mode off, whatever
    the surrounding state.  Leaving restores both flags.  Any non-bool
    argument is a function to decorate, so bare ``@inference_mode`` works.

    >>> import npgrad
    >>> with npgrad.inference_mode():
    ...     npgrad.is_inference_mode_enabled(), npgrad.is_grad_enabled()
    (True, False)
    """

    def __new__(cls, mode=True):  # type: ignore[no-untyped-def]  # signature shown as (mode=True), as torch
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        # Build the new guard before the old one (if any) is dropped.
        self._inference_mode_context = _InferenceModeGuard(self.mode)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self._inference_mode_context.exit()

    def clone(self) -> inference_mode:
        """Return a new, not yet entered ``inference_mode(self.mode)``."""
        return self.__class__(self.mode)


class _force_original_view_tracking(_DecoratorContextManager):
    """Set whether autograd always replays views (torch's view-replay flag), thread-local.

    Like ``set_grad_enabled``, it applies ``mode`` when constructed (so a plain call
    changes the flag) and restores the value seen then on exit.

    >>> import npgrad
    >>> with npgrad.autograd._force_original_view_tracking(True):
    ...     npgrad._mode._is_view_replay_enabled()
    True
    >>> npgrad._mode._is_view_replay_enabled()
    False
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _is_view_replay_enabled()
        self.mode = mode
        _set_view_replay_enabled(mode)

    def __call__(self, orig_func: F) -> F:
        _set_view_replay_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        _set_view_replay_enabled(self.mode)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        _set_view_replay_enabled(self.prev)

    def clone(self) -> _force_original_view_tracking:
        return self.__class__(self.mode)
