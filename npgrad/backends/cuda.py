"""npgrad.backends.cuda: CUDA backend flags (npgrad has no CUDA build)."""
from __future__ import annotations


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: settable flags that change nothing on the CPU."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    """False: npgrad is not built with CUDA.

    >>> import npgrad
    >>> npgrad.backends.cuda.is_built()
    False
    """
    return False
