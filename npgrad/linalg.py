"""npgrad.linalg: torch.linalg's names for the linear-algebra ops npgrad has."""
from __future__ import annotations

from ._ops.linalg import (  # noqa: F401
    LinAlgError, cholesky, cond, det, eigh, eigvalsh, inv, lstsq, matrix_norm,
    matrix_power, matrix_rank, multi_dot, norm, pinv, qr, slogdet, solve, solve_triangular, svd,
    svdvals, vecdot)
from ._ops.matmul import linalg_cross as cross  # noqa: F401
from ._ops.matmul import matmul as _matmul
from ._ops.reduction import vector_norm  # noqa: F401
from ._ops.signature import renamed as _renamed

# torch binds it as ``linalg_matmul`` (Note [An alias has its own name in the errors])
matmul = _renamed(_matmul, "linalg_matmul")

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "eigh", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot",
           "vector_norm"]
