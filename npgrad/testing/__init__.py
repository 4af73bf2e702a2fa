"""npgrad.testing: torch.testing's ``assert_close`` and ``make_tensor``.

>>> import npgrad
>>> npgrad.testing.assert_close(npgrad.tensor(1.), npgrad.tensor(1.))
"""
from __future__ import annotations

from ._comparison import assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401

__all__ = ["assert_close", "make_tensor"]
