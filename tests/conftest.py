"""Shared pytest fixtures.  Autouse fixtures here guard global state between tests."""
from __future__ import annotations

import sys

import pytest

from npgrad import _forward, _mode
from npgrad.autograd import anomaly_mode


def _npgrad_state() -> tuple[bool, bool, bool, bool]:
    return (
        _mode.is_grad_enabled(),
        _mode.is_inference_mode_enabled(),
        anomaly_mode.is_anomaly_enabled(),
        anomaly_mode.is_anomaly_check_nan_enabled(),
    )


def _torch_state() -> tuple[bool, bool, bool, bool] | None:
    # Only look at torch if a test already imported it (oracle tests do).
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "is_anomaly_check_nan_enabled"):
        return None
    return (
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.is_anomaly_enabled(),
        torch.is_anomaly_check_nan_enabled(),
    )


_TORCH_ESCAPE_GUARDS: list = []

_DEFAULT = (True, False, False, True)  # grad on, inference off, anomaly off, check_nan on


@pytest.fixture(autouse=True)
def seal_global_modes():
    """Fail a test that leaks grad mode, inference mode, anomaly state or a dual level.

    The defaults are restored whatever happens, so one leaking test cannot
    make the following ones fail.
    """
    yield
    leaked = []
    state = _npgrad_state()
    if state != _DEFAULT:
        leaked.append(f"npgrad (grad, inference, anomaly, check_nan) = {state}")
        _mode._set_mode(_mode.GRAD)
        anomaly_mode.set_anomaly_enabled(False)
    torch_state = _torch_state()
    if torch_state is not None and torch_state != _DEFAULT:
        leaked.append(f"torch (grad, inference, anomaly, check_nan) = {torch_state}")
        torch = sys.modules["torch"]
        torch._C._set_grad_enabled(True)
        if torch.is_inference_mode_enabled():
            # torch has no setter for the flag: a live disabled-inference guard
            # turns it off for as long as the guard lives, so keep it alive.
            _TORCH_ESCAPE_GUARDS.append(torch._C._InferenceMode(False))
            torch._C._set_grad_enabled(True)
        torch.set_anomaly_enabled(False)
    if _forward.FW.active:
        leaked.append("npgrad forward-AD dual level left open")
        _forward.drop_all_tangents()
        _forward.FW.active = False
        _forward.FW.level = -1
    if torch_state is not None:
        torch_fw = sys.modules.get("torch.autograd.forward_ad")
        if torch_fw is not None and torch_fw._current_level >= 0:
            leaked.append("torch forward-AD dual level left open")
            torch_fw.exit_dual_level()
    if leaked:
        pytest.fail("test leaked global mode state: " + "; ".join(leaked), pytrace=False)
