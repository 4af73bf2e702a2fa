"""npgrad.backends.mps: Apple's Metal backend, which npgrad does not have."""
from __future__ import annotations


def is_available() -> bool:
    """False: there is no MPS device.

    >>> import npgrad
    >>> npgrad.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """False: npgrad is not built with MPS.

    >>> import npgrad
    >>> npgrad.backends.mps.is_built()
    False
    """
    return False
