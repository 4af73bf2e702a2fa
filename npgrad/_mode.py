"""Thread-local grad-mode and inference-mode state: the only place mode flags live.

Note [One integer for the mode]
The per-op hot path reads the mode once, so both flags are packed in one small
integer on a ``threading.local``:

    bit 0 (GRAD)      grad mode is on
    bit 1 (INFERENCE) inference mode is on

An op records a graph node only when ``mode == RECORDING`` (grad on, inference
off) and some input requires grad; its outputs are inference tensors when
``mode & INFERENCE``.  A new thread starts from the class attribute default
(grad on, inference off), whatever its creator is doing, as in PyTorch.
"""
from __future__ import annotations

import threading

GRAD = 1
INFERENCE = 2
RECORDING = GRAD  # grad on and inference off


class _ThreadMode(threading.local):
    mode: int = GRAD


_tls = _ThreadMode()


class _ThreadViewReplay(threading.local):
    # torch's ``_is_view_replay_enabled``: whether an in-place write through a view
    # regenerates the view by replaying its view ops.  npgrad always replays them
    # (``_ops/views.py``); the flag is kept, thread-local as torch's, for code that
    # sets and reads it (``autograd._force_original_view_tracking``).
    enabled: bool = False


_view_replay = _ThreadViewReplay()


def _is_view_replay_enabled() -> bool:
    return _view_replay.enabled


def _set_view_replay_enabled(enabled: bool) -> None:
    _view_replay.enabled = bool(enabled)


def is_grad_enabled() -> bool:
    """Return True if grad mode is on in this thread.

    >>> import npgrad
    >>> npgrad.is_grad_enabled()
    True
    """
    return bool(_tls.mode & GRAD)


def is_inference_mode_enabled() -> bool:
    """Return True if inference mode is on in this thread."""
    return bool(_tls.mode & INFERENCE)


def _set_grad_enabled(enabled: bool) -> None:
    _tls.mode = (_tls.mode & INFERENCE) | (GRAD if enabled else 0)


def _set_inference_enabled(enabled: bool) -> None:
    _tls.mode = (_tls.mode & GRAD) | (INFERENCE if enabled else 0)


def _get_mode() -> int:
    return _tls.mode


def _set_mode(mode: int) -> None:
    _tls.mode = mode
