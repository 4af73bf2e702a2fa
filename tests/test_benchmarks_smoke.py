"""Smoke tests of benchmarks/run.py, and the two properties it measures that are correctness:
a very deep graph backprops, and a training step's graph is freed without the cyclic GC."""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import weakref

import pytest

import npgrad

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(REPO_ROOT, "benchmarks", "run.py")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

# Rows every quick run reports (the CNN row may say "skipped" until npgrad.nn has Conv2d).
EXPECTED_QUICK_ROWS = {
    "import",
    "a*b+a 1 elem [recording]", "a*b+a 1 elem [no_grad]", "a*b+a 1 elem [inference_mode]",
    "a*b+a 100x100 [recording]", "a*b+a 100x100 [no_grad]", "a*b+a 100x100 [inference_mode]",
    "matmul 64x64 [recording]", "matmul 64x64 [no_grad]",
    "sum 10x10 [recording]", "sum 10x10 [no_grad]",
    "index x[3:10] 10x10 [recording]", "index x[3:10] 10x10 [no_grad]",
    "reshape 10x10->100 [recording]", "reshape 10x10->100 [no_grad]",
    "cat of two 10x10 [recording]", "cat of two 10x10 [no_grad]",
    "relu 10x10 [recording]", "relu 10x10 [no_grad]",
    "softmax(dim=-1) 10x10 [recording]", "softmax(dim=-1) 10x10 [no_grad]",
    "chain y*c 10k fwd+bwd", "chain y*c 100k fwd+bwd", "chain linearity (per-op 100,000 / 10,000)",
    "train step MLP 784-256-10 b64", "train step GPT 2L-2H-64 b8x32 AdamW",
    "train step CNN conv3x3(8)-pool-linear b32", "jvp MLP 784-256-10 b64 (forward AD)",
    "gelu exact 1M float32 [no_grad]",
    "peak mem 10x1024 MLP fwd b256 [recording]", "peak mem 10x1024 MLP fwd b256 [no_grad]",
    "peak mem 10x1024 MLP fwd b256 [inference_mode]", "peak mem 10x1024 MLP train step b256",
    "cycles: graph nodes freed by refcount", "cycles: npgrad objects found by gc.collect()",
}


def run_benchmarks(tmp_path, *args: str) -> dict:
    out = tmp_path / "results.json"
    # --keep-openblas-env: tests leave the machine's OPENBLAS_* settings alone
    proc = subprocess.run([sys.executable, RUN, "--json", str(out), "--keep-openblas-env", *args],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text())


def test_quick_run_reports_every_benchmark(tmp_path):
    report = run_benchmarks(tmp_path, "--quick")
    rows = {row["name"]: row for row in report["results"]}
    assert EXPECTED_QUICK_ROWS <= set(rows), EXPECTED_QUICK_ROWS - set(rows)
    assert not [row for row in rows.values() if row["error"]]
    assert report["meta"]["quick"] is True
    assert report["meta"]["threads"] == [1]
    assert rows["a*b+a 1 elem [recording]"]["npgrad"] > 0
    assert rows["a*b+a 1 elem [recording]"]["numpy"] > 0
    assert rows["gelu exact 1M float32 [no_grad]"]["npgrad"] > 0
    if HAVE_TORCH:
        assert rows["a*b+a 1 elem [recording]"]["torch"] > 0
        assert report["meta"]["torch_threads"] == 1      # the worker fixed torch's pool
        gpt = rows["train step GPT 2L-2H-64 b8x32 AdamW"]
        assert gpt["npgrad"] > 0 and gpt["torch"] > 0
        assert gpt["npgrad/torch"] == pytest.approx(gpt["npgrad"] / gpt["torch"])


def test_run_without_torch(tmp_path):
    report = run_benchmarks(tmp_path, "--quick", "--no-torch", "--libs", "npgrad,numpy",
                            "--only", "a*b+a 1 elem")
    names = [row["name"] for row in report["results"]]
    assert names == ["a*b+a 1 elem [recording]", "a*b+a 1 elem [no_grad]",
                     "a*b+a 1 elem [inference_mode]"]
    for row in report["results"]:
        assert row["torch"] is None and row["npgrad/torch"] is None
        assert row["met"] is None          # a torch target cannot be checked without torch
    assert report["meta"]["torch"] is None


def test_million_op_chain_backprops():
    x = npgrad.ones(1, requires_grad=True)
    y = x
    for _ in range(10**6):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]
    del y  # freeing a 1,000,000-node graph must not hit the recursion limit either


def _graph_nodes(root):
    seen, stack = {id(root): root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return list(seen.values())


def test_training_step_graph_is_freed_without_the_cyclic_gc():
    w1 = npgrad.randn(784, 256, requires_grad=True)
    b1 = npgrad.zeros(256, requires_grad=True)
    w2 = npgrad.randn(256, 10, requires_grad=True)
    b2 = npgrad.zeros(10, requires_grad=True)
    x, target = npgrad.randn(64, 784), npgrad.randint(0, 10, (64,))
    gc.collect()
    gc.disable()
    try:
        loss = npgrad.nn.functional.cross_entropy(npgrad.relu(x @ w1 + b1) @ w2 + b2, target)
        refs = [weakref.ref(node) for node in _graph_nodes(loss.grad_fn)] + [weakref.ref(loss)]
        loss.backward()
        with npgrad.no_grad():
            for p in (w1, b1, w2, b2):
                p -= 0.01 * p.grad
                p.grad = None
        del loss
        alive = [ref() for ref in refs if ref() is not None]
        assert alive == []
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        leaked = [type(o).__name__ for o in gc.garbage
                  if type(o).__module__.split(".")[0] == "npgrad"]
        assert leaked == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("unit,value,text", [("s", 2.5e-6, "2.50 us"), ("s", 0.0123, "12.30 ms"),
                                             ("MiB", 3.0, "3.00 MiB"), ("bool", True, "yes")])
def test_value_formatting(unit, value, text):
    run = _load_run_module()
    assert run.format_value(value, unit) == text


def _load_run_module():
    spec = importlib.util.spec_from_file_location("npgrad_benchmarks_run", RUN)
    run = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = run   # dataclasses look their module up while the class is made
    spec.loader.exec_module(run)
    return run


def test_only_selects_groups_and_rows():
    run = _load_run_module()
    settings = run.Settings.make(False)
    # every group the table has is one --only can name, in table order
    assert tuple(dict.fromkeys(g for g, _, _ in run.benchmarks(settings))) == run.GROUPS
    per_op = [f"{case[0]} [{mode}]" for case in run.OP_CASES for mode in case[2]]
    assert run.selected_rows("op", settings) == per_op        # a group: the per-op rows only
    assert run.selected_rows("OPS", settings) == per_op
    assert run.selected_rows("a*b+a 1 elem [no_grad]", settings) == ["a*b+a 1 elem [no_grad]"]
    assert run.selected_rows("gelu", settings) == ["gelu exact 1M float32 [no_grad]"]
    assert run.selected_rows("chain", settings) == [
        "chain y*c 100k fwd+bwd", "chain y*c 100k per op", "chain y*c 1M fwd+bwd",
        "chain y*c 1M per op", "chain linearity (per-op 1,000,000 / 100,000)"]
    assert "train step MLP 784-256-10 b64" in run.selected_rows("mlp", settings)
    assert run.selected_rows("no such row", settings) == []
    assert run.selected_rows(None, settings) == [n for _, names, _ in run.benchmarks(settings)
                                                 for n in names]


def test_only_that_selects_nothing_is_an_error():
    proc = subprocess.run([sys.executable, RUN, "--quick", "--only", "no such row"],
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 2
    assert "--only 'no such row' matches no row name and no group" in proc.stderr
