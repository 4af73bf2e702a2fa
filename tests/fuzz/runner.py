"""Running one case under torch and npgrad (torch first: nn cases hand torch's module state
to npgrad's) with both global random generators restored afterwards, and the case lists of
the two profiles."""
from __future__ import annotations

import os
import zlib
from typing import Any

from fuzz import api_cases, isolation, nn_cases, row_cases
from fuzz.case import Case
from fuzz.outcome import Mismatch, Outcome, capture, compare

PROFILE_ENV = "NPGRAD_FUZZ"


def profile() -> str:
    value = os.environ.get(PROFILE_ENV, "ci").strip().lower() or "ci"
    if value not in ("ci", "long"):
        raise ValueError(f"{PROFILE_ENV} must be 'ci' or 'long', not {value!r}")
    return value


def run_case(case: Case, npgrad: Any, torch: Any) -> tuple[Mismatch | None, Outcome, Outcome]:
    np_state = npgrad.default_generator.get_state()
    torch_state = torch.get_rng_state()
    ctx: dict = {}
    try:
        if case.risky:
            theirs = isolation.run_isolated(case.key, "torch")
            mine = isolation.run_isolated(case.key, "npgrad")
        else:
            theirs = capture(lambda: case.run(torch, ctx))
            mine = capture(lambda: case.run(npgrad, ctx))
    finally:
        npgrad.default_generator.set_state(np_state)
        torch.set_rng_state(torch_state)
    return compare(mine, theirs, case.compare_values, MIXED_PRECISION.get(case.mutation, "")), \
        mine, theirs


# The variants that make a case mix float dtypes, and the least precise dtype they bring in
# (Note [Mixed-precision tolerance] in fuzz/outcome.py): other_float swaps float32 and float64.
MIXED_PRECISION = {"other_float": "float32", "float16": "float16"}


# Note [The CI profile]
# Every base call, every nn/optimizer/load_state_dict case and a fixed, hash-chosen share of
# the single-argument variants of the op-table rows and the API, plus the risky (isolated)
# cases of the size-taking functions the issue names.  The share is set so the profile stays
# within its time budget (measured: see the test module's docstring); the long profile runs
# every case, every risky one included.
CI_SHARE = {"row": 0.2, "function": 0.3, "method": 0.3}
CI_RISKY_TARGETS = {"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.arange",
                    "torch.randperm", "torch.tensor_split", "Tensor.repeat", "torch.tile",
                    "Tensor.new_zeros", "torch.eye", "F.pad", "Tensor.expand", "Tensor.view"}


def _chosen(case: Case, share: float) -> bool:
    return zlib.crc32(case.id.encode()) % 10_000 < share * 10_000


def cases(npgrad: Any, torch: Any, which: str | None = None) -> list[Case]:
    from op_table import ROWS
    which = which or profile()
    everything = row_cases.all_cases(ROWS) + api_cases.all_cases(npgrad, torch) \
        + nn_cases.all_cases()
    if which == "long":
        return everything
    out = []
    for case in everything:
        if case.risky:
            if case.target in CI_RISKY_TARGETS and case.mutation in ("huge_sizes", "huge",
                                                                     "huge_product"):
                out.append(case)
            continue
        if case.mutation == "base" or case.group not in CI_SHARE \
                or _chosen(case, CI_SHARE[case.group]):
            out.append(case)
    return out
