"""The survey of mismatches for the team: ``python -m fuzz.survey [--profile long] [--out
PATH]`` (run from tests/) runs every case of the profile and writes counts per category, the
ops with most mismatches and concrete examples with torch's expected outcome (Markdown)."""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from typing import Any

from fuzz import runner
from fuzz.known_differences import explained_by


def collect(npgrad: Any, torch: Any, which: str, progress: bool = False) -> list[dict]:
    records = []
    cases = runner.cases(npgrad, torch, which)
    start = time.time()
    for n, case in enumerate(cases):
        mismatch, mine, theirs = runner.run_case(case, npgrad, torch)
        if progress and n % 2000 == 0:
            print(f"{n}/{len(cases)} {time.time() - start:.0f}s", file=sys.stderr)
        rules = explained_by(case)
        category = mismatch.category if mismatch is not None else ""
        records.append({
            "id": case.id, "group": case.group, "target": case.target,
            "position": case.position, "arg_kind": case.arg_kind, "mutation": case.mutation,
            "risky": case.risky,
            "category": category,
            "detail": str(mismatch) if mismatch else "",
            "npgrad": mine.describe(), "torch": theirs.describe(),
            "rules": [r.title for r in rules],
            "explained": bool(category) and any(category in r.raises for r in rules),
        })
    return records


def render(records: list[dict], which: str, seconds: float) -> str:
    bad = [r for r in records if r["category"]]
    lines = [f"# npgrad differential fuzz survey ({which} profile)", "",
             f"{len(records)} cases (torch 2.13 as the oracle), {len(bad)} mismatches, "
             f"{sum(1 for r in bad if not r['explained'])} not explained by "
             f"tests/fuzz/known_differences.py; {seconds:.0f} s.", "",
             "## Mismatches per category", "", "| category | cases | targets |", "|---|---|---|"]
    by_cat = collections.defaultdict(list)
    for r in bad:
        by_cat[r["category"]].append(r)
    for cat, rs in sorted(by_cat.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {cat} | {len(rs)} | {len({r['target'] for r in rs})} |")
    lines += ["", "## Mismatches per group", "", "| group | cases | mismatches |", "|---|---|---|"]
    groups = collections.Counter(r["group"] for r in records)
    bad_groups = collections.Counter(r["group"] for r in bad)
    for g, n in groups.most_common():
        lines.append(f"| {g} | {n} | {bad_groups[g]} |")
    lines += ["", "## Top 30 targets by mismatch count", "",
              "| target | mismatches | categories |", "|---|---|---|"]
    by_target = collections.defaultdict(list)
    for r in bad:
        by_target[r["target"]].append(r)
    for target, rs in sorted(by_target.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:30]:
        cats = collections.Counter(r["category"] for r in rs)
        lines.append(f"| `{target}` | {len(rs)} | "
                     + ", ".join(f"{c} {n}" for c, n in cats.most_common()) + " |")
    lines += ["", "## Mismatches per mutation (what the bad argument was)", "",
              "| mutation | mismatches |", "|---|---|"]
    for m, n in collections.Counter(r["mutation"] for r in bad).most_common(40):
        lines.append(f"| {m} | {n} |")
    lines += ["", "## Known-difference rules and the mismatches they explain", "",
              "| rule | mismatches explained |", "|---|---|"]
    rule_counts = collections.Counter(t for r in bad if r["explained"] for t in r["rules"])
    for t, n in rule_counts.most_common():
        lines.append(f"| {t} | {n} |")
    lines += ["", "## Examples (torch's outcome is what npgrad must do)", "",
              "A case id reads `target[base call]/replaced argument:variant` (the base call is "
              "an index into `CANDIDATES` in tests/fuzz/api_cases.py; rows are op-table rows).",
              ""]
    for r in _examples(bad, by_cat):
        lines += [f"- **{r['category']}** `{r['id']}`",
                  f"  - npgrad: `{_one_line(r['npgrad'])}`",
                  f"  - torch:  `{_one_line(r['torch'])}`"]
    return "\n".join(lines) + "\n"


def _examples(bad: list[dict], by_cat: dict, total: int = 24) -> list[dict]:
    """A spread: per category (most frequent first) up to 4 cases with distinct variants and
    targets, wrong results first."""
    order = sorted(by_cat, key=lambda c: (c != "wrong_result", -len(by_cat[c])))
    chosen: list[dict] = []
    for cat in order:
        mutations: set = set()
        names: set = set()
        for r in by_cat[cat]:
            name = r["target"].split(".")[-1].split(":")[-1]
            if r["mutation"] in mutations or name in names:
                continue
            chosen.append(r)
            mutations.add(r["mutation"])
            names.add(name)
            if len(mutations) == 4:
                break
    return chosen[:total]


def _one_line(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "\\n").replace("`", "'")
    return text if len(text) <= limit else text[:limit] + "..."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="long", choices=("ci", "long"))
    parser.add_argument("--out", default="/tmp/fuzz_survey.md")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    import npgrad
    import torch
    start = time.time()
    records = collect(npgrad, torch, args.profile, progress=True)
    text = render(records, args.profile, time.time() - start)
    with open(args.out, "w") as f:
        f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f)
    print(text[:3000])


if __name__ == "__main__":
    main()
