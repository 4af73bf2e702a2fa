"""Differential fuzzing against torch 2.13: bad and edge inputs must give torch's outcome.

Every op-table row, every public function and Tensor method npgrad shares with torch, a list
of nn layers, the optimizers and ``Module.load_state_dict`` are called with their valid
arguments and then with one argument at a time replaced by a bad or edge variant (wrong
types, None, NaN/inf, empty, 0-dim, non-contiguous, out-of-range dims, negative and huge sizes,
mismatched shapes and dtypes, int/bool/half tensors); see tests/fuzz/.  Each case passes when
both libraries succeed with equal values (NaN-aware; float32 tolerance), dtype, shape and
``requires_grad``, or both raise: npgrad's exception of torch's type (or a subclass) with the
same text (torch's C++ "Exception raised from ..." tail dropped).  A NumPy error or an internal
Python error escaping npgrad, or a call one library accepts and the other rejects, fails.

Known differences are data in tests/fuzz/known_differences.py: rules over the case (which
target, which argument kind, which variant), each a non-strict xfail that names the mismatch
categories it explains (``raises=``), so a case failing in a new way still fails and a fixed
case XPASSes; removing a fixed rule is one line.  Huge-size cases run in child processes (one
per library: torch, too, can spin on a huge size) with a 3 GiB address-space limit and a
per-case timeout (tests/fuzz/isolation.py); a case torch itself gives no outcome for skips.

Profiles (environment variable ``NPGRAD_FUZZ``):
  * ``ci`` (default): every base call and nn/optim/load_state_dict case, a fixed hash-chosen
    share of the argument variants (Note [The CI profile] in tests/fuzz/runner.py) and the
    huge-size cases of the size-taking functions: about 14,400 cases; this whole file took
    56 s (55 s of CPU time, one core) on the idle development machine, and 3 to 3.5 min of
    wall time (75 to 85 s of CPU time) with its 2 cores shared by eight jobs;
  * ``long``: every case (about 46,000; 46 s for the survey on the idle machine, about 4 min
    when loaded):
    ``NPGRAD_FUZZ=long python -m pytest tests/test_fuzz_differential.py -q -p no:warnings``.
The run ends with a summary line of outcome counts and, per known-difference rule, how many of
its cases still differ and how many already agree (XPASS).
The survey for the team (counts per category, the targets with most mismatches, examples with
torch's expected outcome): ``cd tests && python -m fuzz.survey --profile long --out FILE``.
Set ``NPGRAD_FUZZ_REPORT=PATH`` to have this module write every mismatch it saw as JSON.
"""
from __future__ import annotations

import collections
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import npgrad  # noqa: E402

from fuzz import isolation, known_differences, outcome, runner  # noqa: E402
from fuzz.outcome import Outcome  # noqa: E402

CASES = runner.cases(npgrad, torch)
_SEEN: collections.Counter = collections.Counter()
_BY_RULE: dict = collections.defaultdict(collections.Counter)  # title -> xfail / agree counts
_MISMATCHES: list = []


class _SummaryPlugin:
    """Prints the outcome counts at the end of the run (and writes the optional report)."""

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not _SEEN:
            return
        terminalreporter.write_line(
            "fuzz summary: " + ", ".join(f"{k} {v}" for k, v in sorted(_SEEN.items())))
        for title, counts in sorted(_BY_RULE.items()):
            terminalreporter.write_line(f"  known difference {title!r}: {counts['xfail']} "
                                        f"still differ, {counts['agree']} agree (XPASS)")
        path = os.environ.get("NPGRAD_FUZZ_REPORT")
        if path:
            with open(path, "w") as f:
                rules = {k: dict(v) for k, v in _BY_RULE.items()}
                json.dump({"summary": dict(_SEEN), "rules": rules, "mismatches": _MISMATCHES},
                          f, indent=1)


@pytest.fixture(scope="module")
def fuzz_summary(request: pytest.FixtureRequest):
    """Counts outcomes per category (``same`` or the mismatch category)."""
    manager = request.config.pluginmanager
    if not manager.has_plugin("npgrad-fuzz-summary"):
        manager.register(_SummaryPlugin(), "npgrad-fuzz-summary")
    yield _SEEN
    isolation.shutdown()


def _param(case):
    return pytest.param(case, id=case.id, marks=known_differences.marks_for(case))


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_same_outcome_as_torch(case, fuzz_summary) -> None:
    mismatch, mine, theirs = runner.run_case(case, npgrad, torch)
    if theirs.crash:
        fuzz_summary["torch_gave_no_outcome"] += 1
        pytest.skip(f"torch itself gave no outcome: {theirs.describe()}")
    fuzz_summary[mismatch.category if mismatch else "same"] += 1
    for rule in known_differences.explained_by(case):
        explained = mismatch is not None and mismatch.category in rule.raises
        _BY_RULE[rule.title]["xfail" if explained else "agree"] += 1
    if mismatch is not None:
        _MISMATCHES.append({"id": case.id, "category": mismatch.category,
                            "detail": str(mismatch)})
        raise mismatch


# -- the machinery itself -----------------------------------------------------------------------

def _raise(exc: BaseException):
    def call():
        raise exc
    return call


def test_comparator_categories() -> None:
    """Each way of differing lands in its category; agreeing outcomes give no mismatch."""
    same = outcome.capture(_raise(TypeError("log(): argument 'input' (position 1) must be "
                                            "Tensor, not float")))
    assert outcome.compare(same, same) is None
    internal = outcome.capture(lambda: (1.5)._data)  # type: ignore[attr-defined]
    assert isinstance(outcome.compare(internal, same), outcome.InternalError)
    raw = outcome.capture(lambda: np.ones((2, 3)) + np.ones((3, 3)))
    assert raw.message.startswith("operands could not be broadcast together")
    assert isinstance(outcome.compare(raw, same), outcome.RawNumpyError)
    negative = outcome.capture(lambda: np.empty((2, -1)))
    assert isinstance(outcome.compare(negative, same), outcome.RawNumpyError)
    other_text = outcome.capture(_raise(TypeError("log(): wrong")))
    assert isinstance(outcome.compare(other_text, same), outcome.WrongMessage)
    other_type = outcome.capture(_raise(ValueError(same.message)))
    assert isinstance(outcome.compare(other_type, same), outcome.WrongExceptionType)
    ok = outcome.capture(lambda: torch.ones(2))
    assert isinstance(outcome.compare(ok, same), outcome.AcceptedWhereTorchRejects)
    assert isinstance(outcome.compare(other_text, ok), outcome.RejectedWhereTorchAccepts)


def test_comparator_subclass_and_cpp_tail() -> None:
    class MyError(RuntimeError):
        pass
    mine = outcome.capture(_raise(MyError("bad size")))
    theirs = outcome.capture(_raise(RuntimeError(
        "bad size\nException raised from foo at bar.cpp:1 (most recent call first):\nframe #0")))
    assert outcome.compare(mine, theirs) is None
    assert isinstance(outcome.compare(theirs, mine), outcome.WrongExceptionType)
    other = outcome.capture(_raise(RuntimeError("bad sizes")))
    assert isinstance(outcome.compare(other, theirs), outcome.WrongMessage)


def test_comparator_results() -> None:
    """Values (NaN-aware, float32 tolerance), dtype, shape and requires_grad are compared."""
    def tensors(mod, values, dtype, rg=False):
        return outcome.capture(lambda: mod.tensor(values, dtype=dtype, requires_grad=rg))
    a = tensors(npgrad, [1.0, float("nan")], npgrad.float32)
    b = tensors(torch, [1.0 + 1e-7, float("nan")], torch.float32)
    assert outcome.compare(a, b) is None
    c = tensors(torch, [1.001, float("nan")], torch.float32)
    assert "values" in str(outcome.compare(a, c))
    d = tensors(torch, [1.0, float("nan")], torch.float64)
    assert "dtype" in str(outcome.compare(a, d))
    e = tensors(torch, [1.0, float("nan")], torch.float32, rg=True)
    assert "requires_grad" in str(outcome.compare(a, e))
    f = outcome.capture(lambda: torch.ones(3))
    assert "shape" in str(outcome.compare(a, f))
    assert outcome.compare(a, c, compare_values=False) is None


def test_mixed_precision_cases_compare_at_the_loosest_input_tolerance() -> None:
    """Note [Mixed-precision tolerance]: a float64 result of float32 and float64 inputs may
    carry float32 rounding (torch computes part of it in float32), but not more; the dtype is
    still compared exactly."""
    def f64(values: list) -> outcome.Outcome:
        return outcome.capture(lambda: torch.tensor(values, dtype=torch.float64))
    a, b = f64([1.0, 2.0]), f64([1.0 + 3e-7, 2.0])
    assert isinstance(outcome.compare(a, b), outcome.WrongResult)
    assert outcome.compare(a, b, loosest="float32") is None
    far = f64([1.0 + 1e-3, 2.0])
    assert isinstance(outcome.compare(a, far, loosest="float32"), outcome.WrongResult)
    assert outcome.compare(a, far, loosest="float16") is None
    f32 = outcome.capture(lambda: torch.tensor([1.0, 2.0]))
    assert "dtype" in str(outcome.compare(a, f32, loosest="float16"))


def test_timeout_is_an_outcome() -> None:
    import time
    hung = outcome.capture(lambda: time.sleep(5), timeout_s=1)
    assert hung.crash == "timeout"
    ok = outcome.capture(lambda: 1)
    assert isinstance(outcome.compare(hung, ok), outcome.Crash)


def test_isolated_worker_survives_a_crash() -> None:
    """A case that kills its process is a Crash outcome, and the next case still runs."""
    dead = isolation.run_isolated(("crash", "segfault"))
    assert dead.crash == "SIGSEGV"
    case = next(c for c in CASES if c.risky)
    alive = isolation.run_isolated(case.key)
    assert alive.crash == "" and (alive.ok or alive.exc_mro)


def test_the_issue_cases_are_fuzzed() -> None:
    """The calls issue 12 names as found by fuzzing are among the cases (and their outcome
    is checked by the parametrized test)."""
    ids = {c.id for c in runner.cases(npgrad, torch, "long")}
    wanted = [("torch.log[", "/arg0:float"), ("torch.isclose[", "/arg1:shape_mismatch"),
              ("torch.empty[", "/arg0:negative_size"), ("Tensor.repeat[", ":huge"),
              ("nn.LeakyReLU/", "ctor:arg0:str"),
              ("load_state_dict/", "unexpected_nested:strict=True")]
    missing = [w for w in wanted
               if not any(i.startswith(w[0]) and i.endswith(w[1]) for i in ids)]
    assert missing == []


def test_registry_rules_are_used_and_well_formed() -> None:
    """Every rule selects at least one case of the long profile and names real categories."""
    cases = runner.cases(npgrad, torch, "long")
    for rule in known_differences.RULES:
        assert rule.raises <= set(outcome.CATEGORIES), rule.title
        assert rule.reason, rule.title
        assert any(rule.where(c) for c in cases), f"rule selects no case: {rule.title}"
