"""npgrad.random: torch.random's names for the default CPU generator, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ._random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                      seed, set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run the block, then put the default generator back where it was (no devices to fork
    on a CPU-only build).

    >>> import npgrad
    >>> _ = npgrad.manual_seed(0)
    >>> with npgrad.random.fork_rng():
    ...     _ = npgrad.rand(3)
    >>> npgrad.rand(1)
    tensor([0.4963])
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
