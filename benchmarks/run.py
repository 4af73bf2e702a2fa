"""npgrad side by side with PyTorch and NumPy: one command, one table, one JSON file.

    python benchmarks/run.py                 # the full run (a few minutes)
    python benchmarks/run.py --quick         # small sizes and repeat counts, < 60 s (CI)
    python benchmarks/run.py --only chain    # only the benchmarks whose name contains "chain"
    python benchmarks/run.py --no-torch      # as if torch were not installed

Every benchmark runs the *same* code on npgrad and on torch (``lib`` is either
module: ``import npgrad as torch`` is the point of npgrad), and a NumPy version
of the same work as the floor.  Each row reports npgrad, torch and NumPy, the
ratios npgrad/torch and npgrad/NumPy, and the issue's target for that row.

Note [How the numbers are taken]
- Times are medians: a loop is timed ``repeat`` times (timeit-style, with the
  cyclic GC off while timing, as ``timeit`` does) after its loop count has been
  grown until one timing lasts at least ``min_time``.
- torch runs with its default thread count (as users get it); the header
  prints it.
- The long chains run in a fresh process per library and run (see ``bench_chain``):
  the cyclic GC's full collections would otherwise scan torch's objects too.
- Peak memory of npgrad and NumPy comes from ``tracemalloc`` (NumPy reports its
  buffers to it).  tracemalloc cannot see torch's allocator, so torch's peak is
  the growth of the peak RSS across the measured work in a fresh subprocess
  per mode (see ``_peak_rss_kib``); npgrad is measured that way too and shown in
  the notes, so the two methods can be compared.
- The header warns when the machine's load average exceeds its CPU count:
  then torch's worker threads compete for cores and its times can jump 1000x.
- The per-op "other ops" use a 10x10 float32 input: the point is the per-op
  overhead, not NumPy's kernels.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# Run from a checkout without installing: make `import npgrad` find the repository's package.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

import npgrad  # noqa: E402

MODES = ("recording", "no_grad", "inference_mode")
MiB = 1024 * 1024


# -- settings -----------------------------------------------------------------------

@dataclass
class Settings:
    """Repeat counts and sizes: the full run, or the quick one CI uses."""

    quick: bool
    import_runs: int
    repeat: int
    min_time: float          # seconds one timing of a per-op loop must last at least
    chain_lengths: tuple     # (short, long): linearity is per-op time long / short
    chain_repeat: int
    step_repeat: int

    @classmethod
    def make(cls, quick: bool) -> "Settings":
        if quick:
            return cls(quick=True, import_runs=2, repeat=3, min_time=0.005,
                       chain_lengths=(10_000, 100_000), chain_repeat=1, step_repeat=3)
        return cls(quick=False, import_runs=5, repeat=7, min_time=0.05,
                   chain_lengths=(100_000, 1_000_000), chain_repeat=3, step_repeat=15)


# -- results ------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the table.

    ``targets`` lists ``(kind, limit)``: kind ``"torch"`` or ``"numpy"`` bounds the
    ratio npgrad/that column, ``"max"`` bounds npgrad's own value, ``"equals"``
    asks for npgrad's value exactly.
    """

    name: str
    unit: str
    npgrad: Any = None
    torch: Any = None
    numpy: Any = None
    targets: list = field(default_factory=list)
    note: str = ""
    skipped: str = ""        # why the row has no npgrad value (not an error)
    error: str = ""          # an exception a benchmark raised

    def ratio(self, other: str) -> float | None:
        base = getattr(self, other)
        if not isinstance(self.npgrad, (int, float)) or not isinstance(base, (int, float)):
            return None
        if isinstance(self.npgrad, bool) or base == 0:
            return None
        return self.npgrad / base

    def target_text(self) -> str:
        parts = []
        for kind, limit in self.targets:
            if kind in ("torch", "numpy"):
                parts.append(f"<= {limit:g}x {kind}")
            elif kind == "max":
                parts.append(f"<= {limit:g}")
            else:
                parts.append(f"= {format_value(limit, self.unit)}")
        return " and ".join(parts)

    def met(self) -> bool | None:
        """True/False when every target could be checked, None when one could not (no torch)."""
        if not self.targets or self.npgrad is None:
            return None
        verdicts = []
        for kind, limit in self.targets:
            if kind in ("torch", "numpy"):
                r = self.ratio(kind)
                verdicts.append(None if r is None else r <= limit)
            elif kind == "max":
                verdicts.append(self.npgrad <= limit)
            else:
                verdicts.append(self.npgrad == limit)
        if False in verdicts:
            return False
        return None if None in verdicts else True

    def as_json(self) -> dict:
        return {"name": self.name, "unit": self.unit, "npgrad": self.npgrad,
                "torch": self.torch, "numpy": self.numpy,
                "npgrad/torch": self.ratio("torch"), "npgrad/numpy": self.ratio("numpy"),
                "target": self.target_text(), "met": self.met(), "note": self.note,
                "skipped": self.skipped, "error": self.error}


def format_value(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "count":
        return str(value)
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "s":  # stored in seconds, shown in the most readable unit
        if value < 1e-3:
            return f"{value * 1e6:.2f} us"
        if value < 1:
            return f"{value * 1e3:.2f} ms"
        return f"{value:.2f} s"
    if unit == "us":
        return f"{value:.2f} us"
    if unit == "MiB":
        return f"{value:.2f} MiB"
    return f"{value:g} {unit}"


# -- timing helpers -----------------------------------------------------------------

def time_per_call(fns: dict, settings: Settings) -> dict:
    """Median seconds per call of each function in ``fns`` (name -> (fn, context factory)).

    timeit-style: the cyclic GC is off while timing and each function's loop count
    is grown until one timing lasts ``min_time``.  The functions take turns within
    each repeat, so a change in machine load hits them all alike.
    """
    numbers = {}
    for name, (fn, context) in fns.items():
        number = 1
        while True:
            elapsed = _time_loop(fn, context, number)
            if elapsed >= settings.min_time:
                break
            number *= 2 if elapsed == 0 else max(2, min(10, int(settings.min_time / elapsed) + 1))
        numbers[name] = number
    timings: dict = {name: [] for name in fns}
    for _ in range(settings.repeat):
        for name, (fn, context) in fns.items():
            timings[name].append(_time_loop(fn, context, numbers[name]) / numbers[name])
    return {name: statistics.median(values) for name, values in timings.items()}


def _time_loop(fn: Callable[[], Any], context: Callable[[], Any], number: int) -> float:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with context():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            return time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()


def median_seconds(fns: dict, repeat: int) -> dict:
    """Median wall time of single calls of each function in ``fns`` (name -> fn), taking turns.

    For work that takes milliseconds or more (training steps).
    """
    timings: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            timings[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in timings.items()}


def grad_mode(lib: Any, mode: str) -> Any:
    """The context manager for ``mode`` in ``lib`` (npgrad or torch)."""
    if mode == "recording":
        return lib.enable_grad()
    if mode == "no_grad":
        return lib.no_grad()
    return lib.inference_mode()


def load_torch(no_torch: bool) -> Any:
    if no_torch:
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch


# -- import time --------------------------------------------------------------------

def bench_import(settings: Settings, torch: Any) -> list:
    """Wall time of ``python -c "import X"`` in fresh subprocesses (interpreter start included).

    NumPy and torch load the .pyc files written when they were installed, and so
    does an installed npgrad.  Run from its checkout on a machine that sets
    PYTHONDONTWRITEBYTECODE, npgrad would instead recompile every module on each
    import; so npgrad is timed with its bytecode cached under a private
    PYTHONPYCACHEPREFIX (after one untimed run fills it), and also without a
    cache, for the note.
    """
    def import_time(module: str, env: dict) -> float:
        timings = []
        for _ in range(settings.import_runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", f"import {module}"], check=True,
                           cwd=REPO_ROOT, env=env)
            timings.append(time.perf_counter() - start)
        return statistics.median(timings)

    env = _subprocess_env()
    cached_env = dict(env, PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(),
                                                            "npgrad-bench-pycache"))
    cached_env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import npgrad"], check=True, cwd=REPO_ROOT,
                   env=cached_env)   # fills the cache; not timed
    bare = import_time("sys", env)
    uncached = import_time("npgrad", dict(env, PYTHONDONTWRITEBYTECODE="1"))
    row = Row("import", "s", npgrad=import_time("npgrad", cached_env),
              numpy=import_time("numpy", env), targets=[("torch", 0.1), ("numpy", 1.5)],
              note=f"includes interpreter start-up ({bare * 1e3:.1f} ms for `import sys`); "
                   f"npgrad without a bytecode cache: {uncached * 1e3:.1f} ms")
    if torch is not None:
        row.torch = import_time("torch", env)
    return [row]


def run_child(*args: str) -> list:
    """Run this script with a hidden ``--peak-rss`` / ``--chain`` flag; return the floats it prints."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], check=True,
                         capture_output=True, text=True, cwd=REPO_ROOT, env=_subprocess_env())
    return [float(v) for v in out.stdout.split()]


def _subprocess_env() -> dict:
    """The environment of the benchmark's subprocesses: npgrad importable from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


# -- per-op overhead ----------------------------------------------------------------

def _softmax_numpy(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@dataclass
class OpCase:
    """An expression timed on npgrad and torch (``run(lib, a, b)``) and on NumPy (``numpy(a, b)``)."""

    name: str
    shape: tuple
    run: Callable
    numpy: Callable
    modes: tuple = ("recording", "no_grad")
    targets: dict = field(default_factory=dict)   # mode -> targets of that row


OP_CASES = [
    OpCase("a*b+a 1 elem", (1,), lambda lib, a, b: a * b + a, lambda a, b: a * b + a,
           modes=MODES,
           targets={"recording": [("torch", 0.6)], "no_grad": [("torch", 0.5)],
                    "inference_mode": [("torch", 0.5)]}),
    OpCase("a*b+a 100x100", (100, 100), lambda lib, a, b: a * b + a, lambda a, b: a * b + a,
           modes=MODES, targets={"no_grad": [("numpy", 1.2)]}),
    OpCase("matmul 64x64", (64, 64), lambda lib, a, b: a @ b, lambda a, b: a @ b),
    OpCase("sum 10x10", (10, 10), lambda lib, a, b: a.sum(), lambda a, b: a.sum()),
    OpCase("index x[3:10] 10x10", (10, 10), lambda lib, a, b: a[3:10], lambda a, b: a[3:10]),
    OpCase("reshape 10x10->100", (10, 10), lambda lib, a, b: a.reshape(100),
           lambda a, b: a.reshape(100)),
    OpCase("cat of two 10x10", (10, 10), lambda lib, a, b: lib.cat([a, b]),
           lambda a, b: np.concatenate([a, b])),
    OpCase("relu 10x10", (10, 10), lambda lib, a, b: lib.relu(a), lambda a, b: np.maximum(a, 0)),
    OpCase("softmax(dim=-1) 10x10", (10, 10), lambda lib, a, b: lib.softmax(a, dim=-1),
           lambda a, b: _softmax_numpy(a)),
]


def bench_op(case: OpCase, settings: Settings, torch: Any) -> list:
    """Microseconds per expression; ``a`` requires grad, ``b`` does not."""
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(case.shape).astype(np.float32)
    b_np = rng.standard_normal(case.shape).astype(np.float32)
    libs = [npgrad] if torch is None else [npgrad, torch]
    inputs = {lib.__name__: (lib.tensor(a_np, requires_grad=True), lib.tensor(b_np))
              for lib in libs}

    def timed(lib: Any, mode: str) -> tuple:
        a, b = inputs[lib.__name__]
        return (lambda: case.run(lib, a, b)), (lambda: grad_mode(lib, mode))

    rows = []
    for mode in case.modes:
        fns = {lib.__name__: timed(lib, mode) for lib in libs}
        fns["numpy"] = (lambda: case.numpy(a_np, b_np)), contextlib.nullcontext
        us = {name: seconds * 1e6 for name, seconds in time_per_call(fns, settings).items()}
        rows.append(Row(f"{case.name} [{mode}]", "us", npgrad=us["npgrad"], torch=us.get("torch"),
                        numpy=us["numpy"], targets=case.targets.get(mode, [])))
    return rows


# -- a long chain: forward and backward -------------------------------------------

CHAIN_FACTOR = 1.00001   # x.grad = 1.00001**n stays finite in float32 up to n = 1,000,000


def chain_forward_backward(lib: Any, n: int) -> tuple:
    """Seconds for ``y = y * c`` n times then ``y.backward()``; returns (forward, backward)."""
    x = lib.ones(1, requires_grad=True)
    start = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * CHAIN_FACTOR
    middle = time.perf_counter()
    y.backward()
    end = time.perf_counter()
    expected = np.float32(CHAIN_FACTOR) ** np.float64(n)
    got = float(x.grad[0])
    if not math.isclose(got, expected, rel_tol=1e-2):
        raise AssertionError(f"{lib.__name__} chain of {n}: x.grad = {got}, expected {expected}")
    del y   # freeing the graph is not timed
    return middle - start, end - middle


def bench_chain(settings: Settings, torch: Any) -> list:
    """Each run in a fresh process holding one library.

    A graph of n npgrad nodes is n x ~6 objects the cyclic GC scans on each full
    collection, and a full collection also scans every other object in the
    process: torch's ~150,000 would double npgrad's forward time here, which no
    npgrad user pays.  So each library runs alone (``--chain LIB N``).
    """
    names = ["npgrad"] if torch is None else ["npgrad", "torch"]
    rows = []
    per_op: dict = {}
    for n in settings.chain_lengths:
        # The long chain runs once: at 1M ops one run already takes tens of seconds.
        repeat = settings.chain_repeat if n == settings.chain_lengths[0] else 1
        runs: dict = {name: [] for name in names}
        for _ in range(repeat):
            for name in names:
                runs[name].append(tuple(run_child("--chain", name, str(n))))
        totals, notes = {}, []
        for name, pairs in runs.items():
            forward, backward = sorted(pairs, key=sum)[len(pairs) // 2]   # the median run
            totals[name] = forward + backward
            notes.append(f"{name} {forward / n * 1e6:.2f} us/op forward + "
                         f"{backward / n * 1e6:.2f} us/op backward")
        label = f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"
        per_op[n] = totals["npgrad"] / n
        rows.append(Row(f"chain y*c {label} fwd+bwd", "s", npgrad=totals["npgrad"],
                        torch=totals.get("torch"),
                        targets=[("torch", 0.7)] if n == 100_000 else [],
                        note="; ".join(notes)))
        rows.append(Row(f"chain y*c {label} per op", "us", npgrad=per_op[n] * 1e6,
                        torch=totals["torch"] / n * 1e6 if "torch" in totals else None))
    short, long = settings.chain_lengths
    rows.append(Row(f"chain linearity (per-op {long:,} / {short:,})", "x",
                    npgrad=per_op[long] / per_op[short], targets=[("max", 1.25)]))
    return rows


# -- training steps -----------------------------------------------------------------

def missing_nn(names: tuple) -> list:
    """The names in ``npgrad.nn`` / ``npgrad.optim`` that are not there yet."""
    missing = []
    for name in names:
        module_name, _, attr = name.rpartition(".")
        try:
            module = __import__(f"npgrad.{module_name}", fromlist=[attr])
        except ImportError:
            missing.append(name)
            continue
        if not hasattr(module, attr):
            missing.append(name)
    return missing


MLP_NN_NAMES = ("nn.Linear", "nn.ReLU", "nn.Sequential", "optim.SGD")
CNN_NN_NAMES = ("nn.Conv2d", "nn.ReLU", "nn.MaxPool2d", "nn.Flatten", "nn.Linear",
                "nn.Sequential", "optim.SGD")
LR = 0.01


def make_raw_mlp(lib: Any, sizes: tuple, seed: int = 0) -> list:
    """[(W, b), ...] leaves with the same starting values in npgrad and torch.

    The weights are made in float32 in place and shared with NumPy (``from_numpy``):
    no temporary copies, so setting up leaves no high-water mark in the process's
    peak RSS above what the weights themselves use (see ``measure_peak_rss``).
    """
    params = []
    for w, b in make_numpy_mlp(sizes, seed):
        params.append((lib.from_numpy(w).requires_grad_(), lib.from_numpy(b).requires_grad_()))
    return params


def raw_mlp_forward(lib: Any, params: list, x: Any) -> Any:
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = lib.relu(h)
    return h


def raw_mlp_step(lib: Any, params: list, x: Any, y: Any) -> None:
    """Forward, cross-entropy, backward, SGD step and zero_grad, in raw tensor ops."""
    loss = lib.nn.functional.cross_entropy(raw_mlp_forward(lib, params, x), y)
    loss.backward()
    with lib.no_grad():
        for w, b in params:
            w -= LR * w.grad
            b -= LR * b.grad
            w.grad = None
            b.grad = None


def nn_step(lib: Any, model: Any, optimizer: Any, x: Any, y: Any) -> None:
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def make_numpy_mlp(sizes: tuple, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out), dtype=np.float32)
        w /= math.sqrt(fan_in)
        params.append((w, np.zeros(fan_out, np.float32)))
    return params


def numpy_mlp_step(params: list, x: np.ndarray, y: np.ndarray) -> None:
    """The floor: the same training step with hand-written NumPy gradients."""
    inputs, h = [], x
    for i, (w, b) in enumerate(params):
        inputs.append(h)
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0)
    probs = _softmax_numpy(h)
    probs[np.arange(len(y)), y] -= 1
    grad = probs / len(y)
    for i in reversed(range(len(params))):
        w, b = params[i]
        grad_w, grad_b = inputs[i].T @ grad, grad.sum(axis=0)
        if i > 0:
            grad = (grad @ w.T) * (inputs[i] > 0)
        w -= LR * grad_w
        b -= LR * grad_b


def mlp_batch(lib: Any, batch: int, features: int, classes: int) -> tuple:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    y = rng.integers(0, classes, batch)
    if lib is np:
        return x, y
    return lib.tensor(x), lib.tensor(y)


def bench_mlp_step(settings: Settings, torch: Any) -> list:
    sizes = (784, 256, 10)
    missing = missing_nn(MLP_NN_NAMES)

    def make_step(lib: Any) -> Callable[[], None]:
        x, y = mlp_batch(lib, 64, sizes[0], sizes[-1])
        if missing:
            params = make_raw_mlp(lib, sizes)
            return lambda: raw_mlp_step(lib, params, x, y)
        model = lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 10))
        optimizer = lib.optim.SGD(model.parameters(), lr=LR)
        return lambda: nn_step(lib, model, optimizer, x, y)

    x_np, y_np = mlp_batch(np, 64, sizes[0], sizes[-1])
    params_np = make_numpy_mlp(sizes)
    steps = {"npgrad": make_step(npgrad),
             "numpy": lambda: numpy_mlp_step(params_np, x_np, y_np)}
    if torch is not None:
        steps["torch"] = make_step(torch)
    for step in steps.values():
        step()  # warm-up
    seconds = median_seconds(steps, settings.step_repeat)
    how = "raw tensor ops (npgrad.nn/optim not available: " + ", ".join(missing) + ")" \
        if missing else "nn.Sequential + optim.SGD"
    return [Row("train step MLP 784-256-10 b64", "s", npgrad=seconds["npgrad"],
                torch=seconds.get("torch"), numpy=seconds["numpy"], targets=[("torch", 0.9)],
                note=how)]


def numpy_mlp_jvp(params: list, x: np.ndarray, t: np.ndarray) -> tuple:
    """Forward pass and its Jacobian-vector product by hand: the floor for forward-mode AD."""
    (w1, b1), (w2, b2) = params
    h = x @ w1 + b1
    h_t = t @ w1
    mask = h > 0
    h, h_t = h * mask, h_t * mask
    return h @ w2 + b2, h_t @ w2


def bench_jvp_mlp(settings: Settings, torch: Any) -> list:
    """Forward-mode AD: the output's tangent for one input tangent, through an nn MLP."""
    sizes = (784, 256, 10)

    def make_jvp(lib: Any) -> Callable[[], Any]:
        fwad = lib.autograd.forward_ad
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 10))
        x, _ = mlp_batch(lib, 64, sizes[0], sizes[-1])
        t = lib.tensor(np.random.default_rng(2).standard_normal((64, 784)).astype(np.float32))

        def jvp() -> Any:
            with fwad.dual_level():
                return fwad.unpack_dual(model(fwad.make_dual(x, t))).tangent
        return jvp

    x_np, _ = mlp_batch(np, 64, sizes[0], sizes[-1])
    t_np = np.random.default_rng(2).standard_normal((64, 784)).astype(np.float32)
    params_np = make_numpy_mlp(sizes)
    steps = {"npgrad": make_jvp(npgrad), "numpy": lambda: numpy_mlp_jvp(params_np, x_np, t_np)}
    if torch is not None:
        steps["torch"] = make_jvp(torch)
    for step in steps.values():
        step()  # warm-up
    seconds = median_seconds(steps, settings.step_repeat)
    return [Row("jvp MLP 784-256-10 b64 (forward AD)", "s", npgrad=seconds["npgrad"],
                torch=seconds.get("torch"), numpy=seconds["numpy"],
                note="forward_ad.dual_level + make_dual through nn.Sequential")]


def bench_cnn_step(settings: Settings, torch: Any) -> list:
    name = "train step CNN conv3x3(8)-pool-linear b32"
    missing = missing_nn(CNN_NN_NAMES)
    if missing:
        return [Row(name, "s", skipped=f"skipped: npgrad.{missing[0]} not available",
                    note="missing: " + ", ".join(f"npgrad.{m}" for m in missing))]

    def make_step(lib: Any) -> Callable[[], None]:
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(8 * 13 * 13, 10))
        optimizer = lib.optim.SGD(model.parameters(), lr=LR)
        rng = np.random.default_rng(2)
        x = lib.tensor(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))
        y = lib.tensor(rng.integers(0, 10, 32))
        return lambda: nn_step(lib, model, optimizer, x, y)

    steps = {"npgrad": make_step(npgrad)}
    if torch is not None:
        steps["torch"] = make_step(torch)
    for step in steps.values():
        step()  # warm-up
    seconds = median_seconds(steps, settings.step_repeat)
    return [Row(name, "s", npgrad=seconds["npgrad"], torch=seconds.get("torch"),
                note="no NumPy floor (no hand-written conv)")]


# -- peak memory --------------------------------------------------------------------

DEEP_SIZES = (1024,) * 11   # 10 layers, 1024 wide
DEEP_BATCH = 256


def traced_peak_mib(work: Callable[[], Any]) -> float:
    """Peak bytes allocated (above the start) while ``work`` runs and its result is alive."""
    gc.collect()
    tracemalloc.start()
    try:
        result = work()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return peak / MiB


def peak_rss_mib(lib_name: str, what: str) -> float:
    """torch's (or npgrad's) peak-RSS growth for ``what``, measured in a fresh subprocess."""
    return run_child("--peak-rss", lib_name, what)[0]


def measure_peak_rss(lib_name: str, what: str) -> float:
    """Run in the subprocess: set up, warm up on a batch of 1, then the measured work."""
    lib = npgrad if lib_name == "npgrad" else __import__(lib_name)
    params = make_raw_mlp(lib, DEEP_SIZES)
    x1, y1 = mlp_batch(lib, 1, DEEP_SIZES[0], DEEP_SIZES[-1])
    x, y = mlp_batch(lib, DEEP_BATCH, DEEP_SIZES[0], DEEP_SIZES[-1])
    work = _memory_work(lib, params, x, y, what)
    _memory_work(lib, params, x1, y1, what)()   # load code paths, not the measured buffers
    gc.collect()
    _reset_peak_rss()
    before = _peak_rss_kib()
    result = work()
    after = _peak_rss_kib()
    del result
    return (after - before) / 1024


def _peak_rss_kib() -> int:
    """This process's peak RSS in KiB: VmHWM where Linux has it, else ru_maxrss.

    ru_maxrss alone is not enough in a subprocess: Linux carries the parent's
    peak RSS over into the child's at fork/exec, so a child smaller than the
    benchmark process that started it would always report a growth of 0.
    VmHWM belongs to the child's own address space.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _reset_peak_rss() -> None:
    """Lower the peak-RSS mark to the current RSS, so set-up and warm-up do not hide the work.

    ru_maxrss is a high-water mark: memory touched and freed before the measured
    work (the warm-up's gradients, import-time temporaries) would otherwise
    absorb the work's own peak.  Linux resets the mark when "5" is written to
    /proc/self/clear_refs; elsewhere the measurement is a lower bound.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _memory_work(lib: Any, params: list, x: Any, y: Any, what: str) -> Callable[[], Any]:
    if what == "train":
        return lambda: raw_mlp_step(lib, params, x, y)

    def forward() -> Any:
        with grad_mode(lib, what):
            return raw_mlp_forward(lib, params, x)
    return forward


def bench_memory_inference(settings: Settings, torch: Any) -> list:
    x_np, _ = mlp_batch(np, DEEP_BATCH, DEEP_SIZES[0], DEEP_SIZES[-1])
    params_np = make_numpy_mlp(DEEP_SIZES)
    numpy_peak = traced_peak_mib(lambda: _numpy_deep_forward(params_np, x_np))
    params = make_raw_mlp(npgrad, DEEP_SIZES)
    x = npgrad.tensor(x_np)
    targets = {"recording": [("torch", 1.0)], "no_grad": [("numpy", 1.05)]}
    rows = []
    for mode in MODES:
        work = _memory_work(npgrad, params, x, None, mode)
        row = Row(f"peak mem 10x1024 MLP fwd b256 [{mode}]", "MiB", npgrad=traced_peak_mib(work),
                  numpy=numpy_peak, targets=targets.get(mode, []),
                  note=f"npgrad peak-RSS growth {peak_rss_mib('npgrad', mode):.1f} MiB")
        if torch is not None:
            row.torch = peak_rss_mib("torch", mode)
        rows.append(row)
    return rows


def _numpy_deep_forward(params: list, x: np.ndarray) -> np.ndarray:
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0)
    return h


def bench_memory_train(settings: Settings, torch: Any) -> list:
    x_np, y_np = mlp_batch(np, DEEP_BATCH, DEEP_SIZES[0], DEEP_SIZES[-1])
    params_np = make_numpy_mlp(DEEP_SIZES)
    params = make_raw_mlp(npgrad, DEEP_SIZES)
    x, y = npgrad.tensor(x_np), npgrad.tensor(y_np)
    raw_mlp_step(npgrad, params, x, y)   # the first step allocates .grad buffers: warm up
    row = Row("peak mem 10x1024 MLP train step b256", "MiB",
              npgrad=traced_peak_mib(lambda: raw_mlp_step(npgrad, params, x, y)),
              numpy=traced_peak_mib(lambda: numpy_mlp_step(params_np, x_np, y_np)),
              note=f"npgrad peak-RSS growth {peak_rss_mib('npgrad', 'train'):.1f} MiB")
    if torch is not None:
        row.torch = peak_rss_mib("torch", "train")
    return [row]


# -- reference cycles ---------------------------------------------------------------

def graph_nodes(root: Any) -> list:
    """Every node reachable from ``root`` (an explicit stack: graphs can be deep)."""
    seen, stack = {id(root): root}, [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return list(seen.values())


def bench_cycles(settings: Settings, torch: Any) -> list:
    """After a training step and ``del``, with the cyclic GC off, the graph must be gone."""
    params = make_raw_mlp(npgrad, (784, 256, 10))
    x, y = mlp_batch(npgrad, 64, 784, 10)
    gc.collect()
    gc.disable()
    try:
        logits = raw_mlp_forward(npgrad, params, x)
        loss = npgrad.nn.functional.cross_entropy(logits, y)
        nodes = graph_nodes(loss.grad_fn)
        refs = [weakref.ref(node) for node in nodes] + [weakref.ref(logits), weakref.ref(loss)]
        count = len(nodes)
        del nodes
        loss.backward()
        with npgrad.no_grad():
            for w, b in params:
                w -= LR * w.grad
                b -= LR * b.grad
                w.grad = None
                b.grad = None
        del logits, loss
        alive = sum(ref() is not None for ref in refs)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found = [obj for obj in gc.garbage
                 if type(obj).__module__.split(".")[0] == "npgrad"]
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
        gc.enable()
    return [
        Row("cycles: graph nodes freed by refcount", "bool", npgrad=alive == 0,
            targets=[("equals", True)],
            note=f"{alive} of {count} nodes + 2 tensors still alive after del"),
        Row("cycles: npgrad objects found by gc.collect()", "count", npgrad=len(found),
            targets=[("max", 0)],
            note=", ".join(sorted({type(o).__name__ for o in found}))),
    ]


# -- the run ------------------------------------------------------------------------

def benchmarks() -> list:
    """(name, function) pairs, in table order; ``--only`` filters on the name, which begins
    the names of the rows the function reports."""
    entries: list = [("import", bench_import)]
    for case in OP_CASES:
        entries.append((case.name,
                        lambda settings, torch, case=case: bench_op(case, settings, torch)))
    entries += [
        ("chain y*c", bench_chain),
        ("train step MLP", bench_mlp_step),
        ("train step CNN", bench_cnn_step),
        ("jvp MLP", bench_jvp_mlp),
        ("peak mem 10x1024 MLP fwd", bench_memory_inference),
        ("peak mem 10x1024 MLP train step", bench_memory_train),
        ("cycles", bench_cycles),
    ]
    return entries


def run_all(settings: Settings, torch: Any, only: str | None) -> list:
    rows = []
    for name, bench in benchmarks():
        if only and only.lower() not in name.lower():
            continue
        print(f"  running {name} ...", file=sys.stderr, flush=True)
        try:
            rows.extend(bench(settings, torch))
        except Exception as exc:  # one broken benchmark must not hide the others
            rows.append(Row(name, "", error=f"{type(exc).__name__}: {exc}"))
    return rows


def header(settings: Settings, torch: Any) -> list:
    lines = [f"python {platform.python_version()} | numpy {np.__version__} | "
             f"npgrad {npgrad.__version__} | {os.cpu_count()} CPUs | "
             + ("quick run" if settings.quick else "full run")]
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        lines.append(f"WARNING: load average {load:.1f} on {os.cpu_count()} CPUs: other work "
                     "competes for the cores, the numbers are noisy")
    if torch is None:
        lines.append("torch: not available (torch columns empty)")
    else:
        lines.append(f"torch {torch.__version__} | torch threads: {torch.get_num_threads()}")
    return lines


def format_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    return f"{ratio:.3f}" if ratio < 1 else f"{ratio:.2f}"  # 0.101 must not print as 0.10


def format_table(rows: list) -> str:
    columns = ("benchmark", "npgrad", "torch", "numpy", "npgrad/torch", "npgrad/numpy",
               "target", "met?")
    table = []
    notes = []
    for row in rows:
        if row.note:
            notes.append(f"  {row.name}: {row.note}")
        if row.error or row.skipped:
            # The message spans the value columns and does not set their widths.
            table.append((row.name, row.error or row.skipped))
            continue
        ratios = [row.ratio(kind) for kind in ("torch", "numpy")]
        met = row.met()
        table.append((row.name,
                      format_value(row.npgrad, row.unit),
                      format_value(row.torch, row.unit),
                      format_value(row.numpy, row.unit),
                      *(format_ratio(r) for r in ratios),
                      row.target_text(),
                      "" if not row.targets else {True: "yes", False: "NO", None: "n/a"}[met]))
    widths = [max([len(columns[i])] + [len(r[i]) for r in table if len(r) == len(columns)])
              for i in range(len(columns))]

    def line(cells: tuple) -> str:
        if len(cells) == 2:  # a skipped or failed row
            return f"{cells[0].ljust(widths[0])} | {cells[1]}"
        # Names and targets read left to right; numbers line up on the right.
        return " | ".join(cell.ljust(w) if i in (0, 6, 7) else cell.rjust(w)
                          for i, (cell, w) in enumerate(zip(cells, widths)))

    out = [line(columns), "-+-".join("-" * w for w in widths)]
    out += [line(r) for r in table]
    if notes:
        out += ["", "notes:"] + notes
    return "\n".join(out)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and repeat counts (the whole run < 60 s)")
    parser.add_argument("--only", metavar="NAME", help="run only benchmarks whose name contains NAME")
    parser.add_argument("--json", metavar="PATH",
                        default=os.path.join(REPO_ROOT, "benchmarks", "results.json"),
                        help="where to write the results (default: benchmarks/results.json)")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even if installed")
    # The subprocess sides of peak_rss_mib and bench_chain:
    parser.add_argument("--peak-rss", nargs=2, metavar=("LIB", "WHAT"), help=argparse.SUPPRESS)
    parser.add_argument("--chain", nargs=2, metavar=("LIB", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.peak_rss:
        print(measure_peak_rss(*args.peak_rss))
        return 0
    if args.chain:
        lib = npgrad if args.chain[0] == "npgrad" else __import__(args.chain[0])
        print(*chain_forward_backward(lib, int(args.chain[1])))
        return 0

    settings = Settings.make(args.quick)
    torch = load_torch(args.no_torch)
    start = time.perf_counter()
    rows = run_all(settings, torch, args.only)
    elapsed = time.perf_counter() - start

    print("\n".join(header(settings, torch)))
    print()
    print(format_table(rows))
    print(f"\n{len(rows)} rows in {elapsed:.1f} s")

    report = {
        "meta": {"python": platform.python_version(), "numpy": np.__version__,
                 "npgrad": npgrad.__version__,
                 "torch": None if torch is None else torch.__version__,
                 "torch_threads": None if torch is None else torch.get_num_threads(),
                 "cpus": os.cpu_count(), "load_average": os.getloadavg()[0],
                 "quick": settings.quick, "only": args.only,
                 "seconds": elapsed, "date": time.strftime("%Y-%m-%d %H:%M:%S")},
        "results": [row.as_json() for row in rows],
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)
    print(f"results written to {args.json}")
    errors = [row for row in rows if row.error]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
