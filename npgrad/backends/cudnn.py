"""npgrad.backends.cudnn: cuDNN's flags, settable as in torch; they change nothing on the CPU.

Scripts set ``torch.backends.cudnn.deterministic = True`` and
``benchmark = False`` for reproducibility; the flags are plain module
attributes here, as they read in torch.
"""
from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: cuDNN is not available without CUDA.

    >>> import npgrad
    >>> npgrad.backends.cudnn.is_available()
    False
    """
    return False


def version() -> None:
    """None: no cuDNN library is loaded.

    >>> import npgrad
    >>> print(npgrad.backends.cudnn.version())
    None
    """
    return None
