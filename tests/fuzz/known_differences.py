"""The registry of known differences from torch: rules over fuzz cases, each naming the
mismatch categories it explains and why, applied as non-strict xfails.

Note [Rules, not entries]
A rule selects cases by what was fuzzed (the group, the target, the replaced argument's kind,
the variant) and lists the mismatch categories it explains.  Since the argument-checking
layer landed (npgrad/_ops/signature.py), a wrong-typed argument or call shape is a difference
only on the targets that still lack torch's check, so those rules, like the ones for a bad
dtype, shape or edge value, silent wrong results, refusals of what torch accepts and crashes,
list the targets they were seen on (tests/fuzz/known_targets.py): the same difference on a
new target fails the suite.  Only huge sizes keep a broad rule.  When a fix lands, delete
its rule (or its targets) and the affected cases must pass; until then a fixed case shows as
XPASS.
``python -m fuzz.relist SURVEY.json`` (tests/fuzz/relist.py) rewrites the listed targets from
a survey: review its diff, since a new target under a wrong result is a new bug.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import pytest

from fuzz.outcome import CATEGORIES

INTERNAL = "internal_error"
NUMPY = "raw_numpy_error"
MESSAGE = "wrong_message"
TYPE = "wrong_exception_type"
ACCEPTED = "accepted_where_torch_rejects"
REJECTED = "rejected_where_torch_accepts"
RESULT = "wrong_result"
CRASH = "crash"
ERROR_TEXT = frozenset({INTERNAL, NUMPY, MESSAGE, TYPE, ACCEPTED})


@dataclasses.dataclass(frozen=True)
class Rule:
    title: str  # the category of difference, as the survey prints it
    reason: str  # why npgrad differs today (the xfail reason)
    raises: frozenset  # the mismatch categories this rule explains
    groups: frozenset | None = None  # case.group in ...
    arg_kinds: frozenset | None = None  # case.arg_kind in ...
    mutations: frozenset | None = None  # case.mutation in ...
    targets: frozenset | None = None  # case.target in ...
    position_prefix: str = ""  # case.position starts with ...
    risky: bool | None = None  # case.risky is ...

    def where(self, case: Any) -> bool:
        return ((self.groups is None or case.group in self.groups)
                and (self.arg_kinds is None or case.arg_kind in self.arg_kinds)
                and (self.mutations is None or case.mutation in self.mutations)
                and (self.targets is None or case.target in self.targets)
                and case.position.startswith(self.position_prefix)
                and (self.risky is None or case.risky == self.risky))


def _set(items: Iterable[str] | str) -> frozenset:
    return frozenset(items.split() if isinstance(items, str) else items)


NON_TENSOR = _set("str none float int list")
DTYPE_VARIANTS = _set("int64 bool float16 other_float")
SHAPE_VARIANTS = _set("shape_mismatch ndim_plus ndim_minus zero_dim empty")
SCALAR_KINDS = _set("int float bool str none sizes tensor_list")
HUGE = _set("huge huge_float huge_sizes huge_product")

RULES: list[Rule] = [
    Rule("huge sizes: NumPy's allocation errors instead of torch's RuntimeError",
         "size products are not checked for overflow before allocating (NumPy's 'array is "
         "too big', MemoryError, OverflowError) where torch raises its RuntimeError",
         ERROR_TEXT, mutations=HUGE),
    # torch's own text here depends on the CPU it runs on: where oneDNN takes the transposed
    # convolution it reports "Input type (torch.HalfTensor) and weight type ...", elsewhere
    # "expected scalar type Half but found Float" (npgrad's text); seen on an AVX-512 machine
    Rule("a half input to a transposed convolution: torch's text depends on the CPU",
         "torch's message comes from oneDNN on some CPUs and from its dtype check on others",
         frozenset({MESSAGE}), mutations=_set("float16"),
         targets=_set("F.conv_transpose1d F.conv_transpose2d nn.ConvTranspose1d "
                      "nn.ConvTranspose2d")),
]

# Which cases a listed-target entry's bucket covers (tests/fuzz/known_targets.py).
BUCKETS: dict[str, dict] = {
    "base": dict(mutations=_set("base")),
    "non_tensor": dict(arg_kinds=_set("tensor"), mutations=NON_TENSOR),
    "dtype": dict(arg_kinds=_set("tensor"), mutations=DTYPE_VARIANTS),
    "shape": dict(arg_kinds=_set("tensor"), mutations=SHAPE_VARIANTS),
    "nan_inf": dict(arg_kinds=_set("tensor"), mutations=_set("nan_inf")),
    "noncontig": dict(arg_kinds=_set("tensor"), mutations=_set("noncontig")),
    "requires_grad": dict(arg_kinds=_set("tensor"), mutations=_set("requires_grad")),
    "scalar": dict(arg_kinds=SCALAR_KINDS, risky=False),
    "huge": dict(mutations=HUGE),
    "ctor": dict(groups=_set("nn"), position_prefix="ctor:"),
    "call": dict(arg_kinds=_set("call")),
    "optim": dict(groups=_set("optim")),
    "state_dict": dict(groups=_set("state_dict")),
}
CATEGORY_TITLES = {RESULT: "wrong result", REJECTED: "refuses what torch accepts",
                   CRASH: "hangs or crashes", ACCEPTED: "accepts what torch rejects",
                   INTERNAL: "internal error", NUMPY: "raw NumPy error", MESSAGE: "other text",
                   TYPE: "other exception type"}

from fuzz.known_targets import LISTED  # noqa: E402  (data: which targets, per bucket)

CATEGORY_SETS = {"error_text": ERROR_TEXT}
CATEGORY_TITLES["error_text"] = "other error than torch's"

RULES += [Rule(f"{CATEGORY_TITLES[category]}: {title}", reason,
               CATEGORY_SETS.get(category, frozenset({category})), targets=_set(targets),
               **BUCKETS[bucket])
          for category, bucket, title, reason, targets in LISTED]


def explained_by(case: Any) -> list[Rule]:
    """The rules that select ``case``."""
    return [r for r in RULES if r.where(case)]


def marks_for(case: Any) -> tuple:
    """A non-strict xfail naming every category the case's rules explain (none: no mark)."""
    rules = explained_by(case)
    if not rules:
        return ()
    categories = sorted(set().union(*(r.raises for r in rules)))
    reason = "; ".join(f"{r.title}: {r.reason}" for r in rules)
    return (pytest.mark.xfail(reason=reason, strict=False,
                              raises=tuple(CATEGORIES[c] for c in categories)),)
