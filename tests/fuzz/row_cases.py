"""Cases over the op table: each row's ``fn(mod, *inputs)`` with its own inputs (float32), then
with one input at a time replaced by each tensor variant (wrong types, NaN/inf, empty, 0-dim,
non-contiguous, int/bool/half, other float width, mismatched shapes, more or fewer dims)."""
from __future__ import annotations

from typing import Any

import numpy as np

from fuzz.case import Case
from fuzz.values import NA, TENSOR_MUTATIONS, TensorSpec, build

# Rows whose results are drawn at random (compared by shape, dtype and flags only).
_RANDOM_WORDS = ("dropout", "rand", "bernoulli", "multinomial", "normal", "poisson", "sample",
                 "uniform", "exponential", "cauchy", "geometric", "empty")


def _specs(row: Any) -> list[TensorSpec]:
    return [TensorSpec(np.asarray(a, np.float32), rg)
            for a, rg in zip(row.arrays(np.float32), row.rg)]


def make_case(row: Any, position: int, mutation: str) -> Case:
    specs: list[Any] = list(_specs(row))
    arg_kind = ""
    if position >= 0:
        arg_kind = "tensor"
        specs[position] = TENSOR_MUTATIONS[mutation](specs[position])
    frozen = tuple(specs)

    def run(mod: Any, ctx: dict) -> Any:
        return row.fn(mod, *build(frozen, mod))

    target = f"row:{row.name}"
    if position < 0:
        cid, pos, label = target, "", "base"
    else:
        cid, pos, label = f"{target}/arg{position}:{mutation}", f"arg{position}", mutation
    random = any(w in row.name for w in _RANDOM_WORDS)
    return Case(cid, "row", target, pos, arg_kind, label, run, compare_values=not random,
                key=("row", row.name, position, mutation))


def all_cases(rows: list) -> list[Case]:
    out = []
    for row in rows:
        out.append(make_case(row, -1, ""))
        for i, spec in enumerate(_specs(row)):
            for name, mutate in TENSOR_MUTATIONS.items():
                if mutate(spec) is NA:
                    continue
                out.append(make_case(row, i, name))
    return out
