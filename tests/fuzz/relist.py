"""Rewrite the data of tests/fuzz/known_targets.py from a survey: ``python -m fuzz.relist
SURVEY.json > fuzz/known_targets.py`` (from tests/, after ``python -m fuzz.survey --json
SURVEY.json``).  Every mismatch the broad rules do not explain is listed under its category and
bucket; existing entries keep their titles and reasons.

Review the diff before keeping it: a target that newly appears under a wrong result, a
refusal or a crash is a bug to fix (or a case to report), not only a line to add.
"""
from __future__ import annotations

import collections
import json
import sys
import textwrap

from fuzz import known_differences as kd
from fuzz import known_targets
from fuzz.case import Case

_TITLES = {"base": "the valid base call itself", "non_tensor": "a non-Tensor argument",
           "dtype": "an int/bool/half/other-float tensor",
           "shape": "a mismatched, empty or 0-dim shape", "nan_inf": "NaN/inf inputs",
           "noncontig": "non-contiguous inputs", "requires_grad": "inputs requiring grad",
           "scalar": "a bad scalar argument", "huge": "huge sizes",
           "ctor": "bad layer constructor arguments", "call": "a wrong call shape",
           "optim": "optimizer arguments", "state_dict": "load_state_dict"}
# The first bucket that selects a case is its bucket.
_ORDER = ["base", "huge", "ctor", "call", "optim", "state_dict", "non_tensor", "dtype", "shape",
          "nan_inf", "noncontig", "requires_grad", "scalar"]


def _case(record: dict) -> Case:
    return Case(record["id"], record["group"], record["target"], record["position"],
                record["arg_kind"], record["mutation"], lambda mod, ctx: None,
                risky=record.get("risky", False))


def _bucket(case: Case) -> str:
    for name in _ORDER:
        if kd.Rule("", "", frozenset(), **kd.BUCKETS[name]).where(case):
            return name
    raise ValueError(f"no bucket selects {case.id}")


def _wrapped_reason(reason: str) -> list[str]:
    chunks, current = [], ""
    for word in reason.split(" "):
        if current and len(current) + len(word) + 1 > 80:
            chunks.append(current + " ")
            current = word
        else:
            current = f"{current} {word}" if current else word
    chunks.append(current)
    return [f"     {c!r}" for c in chunks]


def listing(records: list[dict]) -> str:
    broad = [r for r in kd.RULES if r.targets is None]
    old = {(c, b): (t, r) for c, b, t, r, _ in known_targets.LISTED}
    groups: dict = collections.defaultdict(list)
    for record in records:
        if not record["category"]:
            continue
        case = _case(record)
        if any(record["category"] in r.raises and r.where(case) for r in broad):
            continue
        category = "error_text" if record["category"] in kd.ERROR_TEXT else record["category"]
        groups[(category, _bucket(case))].append(record)
    head = known_targets.__doc__ or ""
    out = [f'"""{head}"""', "from __future__ import annotations", "",
           "LISTED: list[tuple[str, str, str, str, str]] = ["]
    for (category, bucket), rs in sorted(groups.items()):
        title, reason = old.get((category, bucket), (_TITLES[bucket], "TODO: say why"))
        example = rs[0]
        out.append(f"    # e.g. {example['id']}"[:99])
        out.append(f"    #   {' '.join(example['detail'].split())}"[:99].rstrip())
        out.append(f"    ({category!r}, {bucket!r}, {title!r},")
        lines = _wrapped_reason(reason)
        out += lines[:-1] + [lines[-1] + ","]
        targets = " ".join(sorted({r["target"] for r in rs}))
        out.append(textwrap.fill(targets, 88, initial_indent='     """',
                                 subsequent_indent="     ") + '"""),')
    out.append("]")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        sys.stdout.write(listing(json.load(f)))
