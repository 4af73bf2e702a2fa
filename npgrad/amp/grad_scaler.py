"""``torch.amp.GradScaler``: loss scaling, gradient unscaling with inf/nan checks, scale updates.

Note [GradScaler on a CPU-only run]
``GradScaler()`` and ``torch.cuda.amp.GradScaler()`` default to the cuda device;
a CPU build constructs them disabled, with torch's UserWarning, and a disabled
scaler is transparent: ``scale(loss)`` is ``loss`` itself, ``step(opt)`` is
``opt.step()``, ``update()`` does nothing and ``get_scale()`` is 1.0.
``GradScaler('cpu')`` is enabled, as in torch, and runs torch's algorithm:
outputs are multiplied by a float32 scale; ``unscale_`` multiplies each
gradient by the float32 reciprocal of the scale and records whether any is
inf/nan; ``step`` skips the optimizer step when one was; ``update`` backs the
scale off after a skipped step and grows it after ``growth_interval`` clean
steps in a row.
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

import numpy as np

from .._device import device as _device
from .._tensor import Tensor

_CUDA_DISABLED = "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf": False}


class GradScaler:
    """Scales losses so small float16 gradients do not underflow.

    See Note [GradScaler on a CPU-only run].

    >>> import warnings, npgrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     scaler = npgrad.amp.GradScaler()
    >>> loss = npgrad.tensor(2.)
    >>> scaler.scale(loss) is loss, scaler.get_scale()
    (True, 1.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if _device(device).type == "cuda" and enabled:
            warnings.warn(_CUDA_DISABLED, UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: np.float32 | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer_states: dict = defaultdict(_refresh_state)

    def is_enabled(self) -> bool:
        return self._enabled

    def _current_scale(self) -> np.float32:
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """``outputs`` times the scale (tensors, or nested lists/tuples of them)."""
        if not self._enabled:
            return outputs
        scale = float(self._current_scale())
        if isinstance(outputs, Tensor):
            return outputs * scale

        def apply(value: Any) -> Any:
            if isinstance(value, Tensor):
                return value * scale
            if isinstance(value, (list, tuple)):
                scaled = [apply(v) for v in value]
                return type(value)(scaled) if isinstance(value, tuple) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting any inf/nan."""
        if not self._enabled:
            return
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(np.reciprocal(np.float64(self._current_scale())))
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype.name == "float16":
                    raise ValueError("Attempting to unscale FP16 gradients.")
                data = g._data
                if not np.all(np.isfinite(data)):
                    found_inf = True
                np.multiply(data, inv_scale.astype(data.dtype), out=data)
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless the gradients held an inf/nan; returns its result."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Back off after an inf/nan, grow after ``growth_interval`` clean steps; reset stages."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else new_scale
            self._scale = np.float32(value)
        else:
            states = self._per_optimizer_states.values()
            if not states:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = self._current_scale()
            if any(s["found_inf"] for s in states):
                self._scale = np.float32(scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = np.float32(scale * np.float32(self._growth_factor))
                    if np.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_refresh_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return float(self._current_scale())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._scale = np.float32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]
