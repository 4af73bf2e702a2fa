"""npgrad side by side with PyTorch, NumPy, MyGrad and HIPS autograd: one command, one table.

    python benchmarks/run.py                 # the full run (1 thread, then 2; ~10 minutes)
    python benchmarks/run.py --quick         # small sizes and repeat counts, 1 thread (CI)
    python benchmarks/run.py --only chain    # one group: import, ops, chain, steps, memory, cycles
    python benchmarks/run.py --only mlp      # otherwise the rows whose name contains "mlp"
    python benchmarks/run.py --threads 1     # only the 1-thread table
    python benchmarks/run.py --no-torch      # as if torch were not installed
    python benchmarks/run.py --libs npgrad,numpy

Every benchmark runs the *same* code on npgrad and on torch (``lib`` is either
module: ``import npgrad as torch`` is the point of npgrad), a NumPy version of the
same work as the floor, and MyGrad / HIPS autograd versions where those libraries
are installed and can express it.  Each row reports every library, npgrad's ratio
to each, and issue 16's target for the row.

Note [How the numbers are taken]
- Each library runs alone in its own fresh worker process (``--worker LIB``), so no
  library's idle thread pool or garbage slows another's: run in one process, NumPy's
  MLP step measured 3.7x its time alone and torch's 64x64 matmul 11 ms.
- Threads are fixed before a worker starts: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
  and MKL_NUM_THREADS are set in its environment, and the worker calls
  ``torch.set_num_threads`` / ``npgrad.set_num_threads``.  The 1-thread table holds
  every row and the issue's targets; the 2-thread table repeats the rows threads
  can change (matmul, GELU, training steps).
- The 1-thread table times with the CPU time of the measuring thread
  (``time.thread_time_ns``): time the scheduler gives other processes on a shared
  machine is not counted.  With 2 threads a pool's worker threads do part of the
  work, so the 2-thread table times wall-clock (``time.perf_counter_ns``).
- Repeats are interleaved: each repeat asks every library's worker for one
  sample in turn (the order rotates), so a change in machine load hits all
  libraries alike; a row shows the median of the samples.
- Per-op rows are timeit-style: the cyclic GC is off while a loop runs, and the
  loop count is grown until one sample lasts ``min_time``.  Chains and training
  steps run with the GC on, as users run them.
- OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which this project's machines set for
  their tests, are removed together from the workers' environment (not from the
  tests'), so OpenBLAS picks its kernel for the processor; the header prints the
  kernel threadpoolctl reports in each worker.  ``--keep-openblas-env`` keeps them.
- Peak memory: npgrad's and NumPy's from ``tracemalloc`` (NumPy reports its buffers
  to it); tracemalloc cannot see torch's allocator, so torch's is the growth of the
  peak RSS in a fresh process per mode (npgrad's is measured that way too, in the
  notes, so the two methods can be compared).
- Import time is the CPU time (user + system) of ``python -c "import X"`` in fresh
  processes, interpreter start included.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

LIBS = ("npgrad", "torch", "numpy", "mygrad", "autograd")
COMPETITORS = ("mygrad", "autograd")    # "every row ahead of mygrad and HIPS autograd"
MODES = ("recording", "no_grad", "inference_mode")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
MiB = 1024 * 1024


# -- settings -----------------------------------------------------------------------

@dataclass
class Settings:
    """Repeat counts and sizes: the full run, or the quick one CI uses."""

    quick: bool
    import_runs: int
    repeat: int
    min_time: float          # seconds one sample of a per-op loop must last at least
    chain_lengths: tuple     # (short, long): linearity is per-op time long / short
    chain_repeat: int
    step_repeat: int

    @classmethod
    def make(cls, quick: bool) -> Settings:
        if quick:
            return cls(quick=True, import_runs=2, repeat=3, min_time=0.005,
                       chain_lengths=(10_000, 100_000), chain_repeat=1, step_repeat=3)
        return cls(quick=False, import_runs=5, repeat=9, min_time=0.05,
                   chain_lengths=(100_000, 1_000_000), chain_repeat=3, step_repeat=15)


# -- results ------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the table.

    ``targets`` lists ``(kind, limit)``: a library's name bounds the ratio
    npgrad/that library, ``"max"`` bounds npgrad's own value, ``"equals"`` asks for
    npgrad's value exactly.
    """

    name: str
    unit: str
    values: dict = field(default_factory=dict)     # library -> value (None: not measured)
    targets: list = field(default_factory=list)
    note: str = ""
    skipped: str = ""        # why the row has no npgrad value (not an error)
    error: str = ""          # an exception a benchmark raised

    @property
    def npgrad(self) -> Any:
        return self.values.get("npgrad")

    def ratio(self, other: str) -> float | None:
        base = self.values.get(other)
        if not isinstance(self.npgrad, (int, float)) or not isinstance(base, (int, float)):
            return None
        if isinstance(self.npgrad, bool) or base == 0:
            return None
        return self.npgrad / base

    def all_targets(self) -> list:
        """The row's own targets, and "ahead of" each competitor that has a time here."""
        extra = [(lib, 1.0) for lib in COMPETITORS
                 if self.unit in ("s", "us") and self.values.get(lib) is not None
                 and all(kind != lib for kind, _ in self.targets)]
        return self.targets + extra

    def target_text(self) -> str:
        parts = []
        for kind, limit in self.all_targets():
            if kind in LIBS:
                parts.append(f"<= {limit:g}x {kind}")
            elif kind == "max":
                parts.append(f"<= {limit:g}")
            else:
                parts.append(f"= {format_value(limit, self.unit)}")
        return " and ".join(parts)

    def met(self) -> bool | None:
        """True/False when every target could be checked, None when one could not."""
        targets = self.all_targets()
        if not targets or self.npgrad is None:
            return None
        verdicts = []
        for kind, limit in targets:
            if kind in LIBS:
                r = self.ratio(kind)
                verdicts.append(None if r is None else r <= limit)
            elif kind == "max":
                verdicts.append(self.npgrad <= limit)
            else:
                verdicts.append(self.npgrad == limit)
        if False in verdicts:
            return False
        return None if None in verdicts else True

    def misses(self) -> list:
        """The targets this row misses, as text with the measured ratio."""
        out = []
        for kind, limit in self.all_targets():
            if kind in LIBS:
                r = self.ratio(kind)
                if r is not None and r > limit:
                    out.append(f"{r:.2f}x {kind} (target <= {limit:g}x)")
        return out

    def as_json(self) -> dict:
        out = {"name": self.name, "unit": self.unit}
        for lib in LIBS:
            out[lib] = self.values.get(lib)
        for lib in LIBS[1:]:
            out[f"npgrad/{lib}"] = self.ratio(lib)
        out.update({"target": self.target_text(), "met": self.met(), "note": self.note,
                    "skipped": self.skipped, "error": self.error})
        return out


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


def format_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    return f"{ratio:.3f}" if ratio < 1 else f"{ratio:.2f}"  # 0.101 must not print as 0.10


def format_table(rows: list, libs: tuple) -> str:
    ratio_libs = [lib for lib in libs if lib != "npgrad"]
    columns = ("benchmark", *libs, *(f"npgrad/{lib}" for lib in ratio_libs), "target", "met?")
    table, notes = [], []
    for row in rows:
        if row.note:
            notes.append(f"  {row.name}: {row.note}")
        if row.error or row.skipped:
            table.append((row.name, row.error or row.skipped))   # spans the value columns
            continue
        met = row.met()
        table.append((row.name, *(format_value(row.values.get(lib), row.unit) for lib in libs),
                      *(format_ratio(row.ratio(lib)) for lib in ratio_libs),
                      row.target_text(),
                      "" if not row.all_targets()
                      else {True: "yes", False: "NO", None: "n/a"}[met]))
    widths = [max([len(columns[i])] + [len(r[i]) for r in table if len(r) == len(columns)])
              for i in range(len(columns))]
    left = {0, len(columns) - 2, len(columns) - 1}   # names and targets read left to right

    def line(cells: tuple) -> str:
        if len(cells) == 2:
            return f"{cells[0].ljust(widths[0])} | {cells[1]}"
        return " | ".join(cell.ljust(w) if i in left else cell.rjust(w)
                          for i, (cell, w) in enumerate(zip(cells, widths)))

    out = [line(columns), "-+-".join("-" * w for w in widths)]
    out += [line(r) for r in table]
    if notes:
        out += ["", "notes:"] + notes
    return "\n".join(out)


# ======================================================================================
# The worker side: one library per process
# ======================================================================================

class Unsupported(Exception):
    """The library has no way to express this benchmark (its cell stays empty)."""


def load_library(name: str) -> Any:
    if name == "npgrad":
        if REPO_ROOT not in sys.path:
            sys.path.insert(0, REPO_ROOT)
        import npgrad
        return npgrad
    if name == "autograd":
        import autograd
        import autograd.numpy
        return autograd
    return __import__(name)


def grad_mode(lib: Any, mode: str) -> Any:
    """The context manager for ``mode`` in ``lib`` (npgrad, torch or mygrad)."""
    if lib.__name__ == "mygrad":
        if mode == "recording":
            return contextlib.nullcontext()
        if mode == "no_grad":
            return lib.no_autodiff
        raise Unsupported(mode)
    if mode == "recording":
        return lib.enable_grad()
    if mode == "no_grad":
        return lib.no_grad()
    return lib.inference_mode()


def _softmax_numpy(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# name, shape, modes, targets by mode, threaded (also in the 2-thread table)
OP_CASES = [
    ("a*b+a 1 elem", (1,), MODES,
     {"recording": [("torch", 1.0)], "no_grad": [("torch", 0.65)],
      "inference_mode": [("torch", 0.75)]}, False),
    ("a*b+a 100x100", (100, 100), MODES, {"no_grad": [("numpy", 1.15)]}, False),
    ("matmul 64x64", (64, 64), ("recording", "no_grad"), {}, True),
    ("sum 10x10", (10, 10), ("recording", "no_grad"), {}, False),
    ("index x[3:10] 10x10", (10, 10), ("recording", "no_grad"), {}, False),
    ("reshape 10x10->100", (10, 10), ("recording", "no_grad"), {}, False),
    ("cat of two 10x10", (10, 10), ("recording", "no_grad"), {}, False),
    ("relu 10x10", (10, 10), ("recording", "no_grad"), {}, False),
    ("softmax(dim=-1) 10x10", (10, 10), ("recording", "no_grad"), {}, False),
]


def op_expressions(lib: Any) -> dict:
    """Case name -> f(a, b) in ``lib``'s API."""
    name = lib.__name__
    if name == "numpy":
        return {"a*b+a 1 elem": lambda a, b: a * b + a, "a*b+a 100x100": lambda a, b: a * b + a,
                "matmul 64x64": lambda a, b: a @ b, "sum 10x10": lambda a, b: a.sum(),
                "index x[3:10] 10x10": lambda a, b: a[3:10],
                "reshape 10x10->100": lambda a, b: a.reshape(100),
                "cat of two 10x10": lambda a, b: np.concatenate([a, b]),
                "relu 10x10": lambda a, b: np.maximum(a, 0),
                "softmax(dim=-1) 10x10": lambda a, b: _softmax_numpy(a)}
    common = {"a*b+a 1 elem": lambda a, b: a * b + a, "a*b+a 100x100": lambda a, b: a * b + a,
              "matmul 64x64": lambda a, b: a @ b, "sum 10x10": lambda a, b: a.sum(),
              "index x[3:10] 10x10": lambda a, b: a[3:10],
              "reshape 10x10->100": lambda a, b: a.reshape(100)}
    if name == "mygrad":
        common.update({"cat of two 10x10": lambda a, b: lib.concatenate([a, b]),
                       "relu 10x10": lambda a, b: lib.nnet.relu(a),
                       "softmax(dim=-1) 10x10": lambda a, b: lib.nnet.softmax(a, axis=-1)})
        return common
    if name == "autograd":
        return {}       # HIPS autograd records only inside grad(f): no per-op rows
    common.update({"cat of two 10x10": lambda a, b: lib.cat([a, b]),
                   "relu 10x10": lambda a, b: lib.relu(a),
                   "softmax(dim=-1) 10x10": lambda a, b: lib.softmax(a, dim=-1)})
    return common


class Clock:
    """The worker's clock: CPU time of this thread (1 thread) or wall time (a pool)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.now = time.thread_time_ns if kind == "thread" else time.perf_counter_ns

    def seconds(self, fn: Callable[[], Any], number: int = 1, gc_off: bool = False) -> float:
        was_enabled = gc.isenabled()
        if gc_off:
            gc.disable()
        try:
            start = self.now()
            for _ in range(number):
                fn()
            return (self.now() - start) * 1e-9
        finally:
            if was_enabled:
                gc.enable()


def make_op_bench(lib: Any, clock: Clock, settings: Settings, case: str, mode: str) -> Callable:
    shape = next(c[1] for c in OP_CASES if c[0] == case)
    expression = op_expressions(lib).get(case)
    if expression is None:
        raise Unsupported(case)
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(shape).astype(np.float32)
    b_np = rng.standard_normal(shape).astype(np.float32)
    if lib.__name__ == "numpy":
        a, b, context = a_np, b_np, contextlib.nullcontext
    elif lib.__name__ == "mygrad":
        a, b = lib.tensor(a_np), lib.tensor(b_np, constant=True)
        manager = grad_mode(lib, mode)     # mygrad's no_autodiff object is re-entrant

        def context() -> Any:
            return manager
    else:
        a, b = lib.tensor(a_np, requires_grad=True), lib.tensor(b_np)

        def context() -> Any:
            return grad_mode(lib, mode)

    def loop(number: int) -> float:
        with context():
            return clock.seconds(lambda: expression(a, b), number, gc_off=True)

    number = 1
    while True:
        elapsed = loop(number)
        if elapsed >= settings.min_time:
            break
        number *= 2 if elapsed == 0 else max(2, min(10, int(settings.min_time / elapsed) + 1))
    return lambda: {"value": loop(number) / number * 1e6}


CHAIN_FACTOR = 1.00001   # x.grad = 1.00001**n stays finite in float32 up to n = 1,000,000


def make_chain_bench(lib: Any, clock: Clock, settings: Settings, n: int) -> Callable:
    name = lib.__name__
    expected = np.float32(CHAIN_FACTOR) ** np.float64(n)

    def check(got: float) -> None:
        if not math.isclose(got, expected, rel_tol=1e-2):
            raise AssertionError(f"{name} chain of {n}: x.grad = {got}, expected {expected}")

    if name in ("npgrad", "torch", "mygrad"):
        def run() -> dict:
            gc.collect()
            x = lib.ones(1, requires_grad=True) if name != "mygrad" else lib.ones(1)
            holder: dict = {}

            def forward() -> None:
                y = x
                for _ in range(n):
                    y = y * CHAIN_FACTOR
                holder["y"] = y
            fwd = clock.seconds(forward)
            bwd = clock.seconds(lambda: holder["y"].backward())
            check(float(x.grad[0]))
            del holder["y"]     # freeing the graph is not timed
            return {"value": fwd + bwd, "forward": fwd, "backward": bwd}
        return run
    if name == "autograd":
        def f(x: Any) -> Any:
            y = x
            for _ in range(n):
                y = y * CHAIN_FACTOR
            return y[0]
        grad_f = lib.grad(f)

        def run_autograd() -> dict:
            gc.collect()
            holder: dict = {}
            total = clock.seconds(lambda: holder.setdefault("g", grad_f(np.ones(1, np.float32))))
            check(float(holder["g"][0]))
            return {"value": total}
        return run_autograd
    raise Unsupported("chain")


LR = 0.01


def make_numpy_mlp(sizes: tuple, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out), dtype=np.float32)
        w /= math.sqrt(fan_in)
        params.append((w, np.zeros(fan_out, np.float32)))
    return params


def mlp_batch(batch: int, features: int, classes: int) -> tuple:
    rng = np.random.default_rng(1)
    return (rng.standard_normal((batch, features)).astype(np.float32),
            rng.integers(0, classes, batch))


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


def make_raw_mlp(lib: Any, sizes: tuple, seed: int = 0) -> list:
    """[(W, b), ...] leaves with the same starting values in npgrad and torch (shared with
    NumPy through ``from_numpy``: no temporary copies to raise the peak RSS)."""
    return [(lib.from_numpy(w).requires_grad_(), lib.from_numpy(b).requires_grad_())
            for w, b in make_numpy_mlp(sizes, seed)]


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


def make_mlp_step(lib: Any) -> Callable[[], Any]:
    """One SGD step of a 784-256-10 MLP on a batch of 64, in ``lib``'s own idiom."""
    x_np, y_np = mlp_batch(64, 784, 10)
    params_np = make_numpy_mlp((784, 256, 10))
    name = lib.__name__
    if name == "numpy":
        return lambda: numpy_mlp_step(params_np, x_np, y_np)
    if name in ("npgrad", "torch"):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        with lib.no_grad():
            for layer, (w, b) in zip((model[0], model[2]), params_np):
                layer.weight.copy_(lib.from_numpy(np.ascontiguousarray(w.T)))
                layer.bias.copy_(lib.from_numpy(b))
        optimizer = lib.optim.SGD(model.parameters(), lr=LR)
        x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)

        def step() -> None:
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        return step
    if name == "mygrad":
        mg = lib
        params = [(mg.tensor(w), mg.tensor(b)) for w, b in params_np]

        def mygrad_step() -> None:
            h = x_np
            for i, (w, b) in enumerate(params):
                h = mg.matmul(h, w) + b
                if i < len(params) - 1:
                    h = mg.nnet.relu(h)
            loss = mg.nnet.softmax_crossentropy(h, y_np)
            loss.backward()
            for w, b in params:
                w.data -= LR * w.grad
                b.data -= LR * b.grad
                w.null_grad()
                b.null_grad()
        return mygrad_step
    if name == "autograd":
        anp = lib.numpy
        params = [list(p) for p in params_np]

        def loss_fn(params: list) -> Any:
            h = x_np
            for i, (w, b) in enumerate(params):
                h = anp.dot(h, w) + b
                if i < len(params) - 1:
                    h = anp.maximum(h, 0.0)
            h = h - anp.max(h, axis=1, keepdims=True)
            logp = h - anp.log(anp.sum(anp.exp(h), axis=1, keepdims=True))
            return -anp.mean(logp[np.arange(len(y_np)), y_np])
        grad_fn = lib.grad(loss_fn)

        def autograd_step() -> None:
            grads = grad_fn(params)
            for p, g in zip(params, grads):
                p[0] = p[0] - LR * g[0]
                p[1] = p[1] - LR * g[1]
        return autograd_step
    raise Unsupported("mlp")


def make_cnn_step(lib: Any) -> Callable[[], Any]:
    if lib.__name__ not in ("npgrad", "torch"):
        raise Unsupported("cnn")
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 13 * 13, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=LR)
    rng = np.random.default_rng(2)
    x = lib.from_numpy(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, 32))

    def step() -> None:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return step


def make_gpt_step(lib: Any) -> Callable[[], Any]:
    if lib.__name__ not in ("npgrad", "torch"):
        raise Unsupported("gpt")
    if BENCH_DIR not in sys.path:
        sys.path.insert(0, BENCH_DIR)
    from models import gpt
    return gpt.build(lib)[-1]


def make_jvp_step(lib: Any) -> Callable[[], Any]:
    x_np, _ = mlp_batch(64, 784, 10)
    t_np = np.random.default_rng(2).standard_normal((64, 784)).astype(np.float32)
    params_np = make_numpy_mlp((784, 256, 10))
    if lib.__name__ == "numpy":
        (w1, b1), (w2, b2) = params_np

        def numpy_jvp() -> tuple:
            h = x_np @ w1 + b1
            mask = h > 0
            return (h * mask) @ w2 + b2, ((t_np @ w1) * mask) @ w2
        return numpy_jvp
    if lib.__name__ not in ("npgrad", "torch"):
        raise Unsupported("jvp")
    fwad = lib.autograd.forward_ad
    model = lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 10))
    x, t = lib.from_numpy(x_np), lib.from_numpy(t_np)

    def jvp() -> Any:
        with fwad.dual_level():
            return fwad.unpack_dual(model(fwad.make_dual(x, t))).tangent
    return jvp


GELU_SIZE = 1_000_000


def make_gelu(lib: Any) -> Callable[[], Any]:
    if lib.__name__ not in ("npgrad", "torch"):
        raise Unsupported("gelu")      # NumPy has no erf; MyGrad and autograd no exact GELU
    x = lib.from_numpy(np.random.default_rng(3).standard_normal(GELU_SIZE).astype(np.float32))
    gelu = lib.nn.functional.gelu

    def run() -> Any:
        with lib.no_grad():
            return gelu(x)
    return run


STEP_FACTORIES = {"mlp": make_mlp_step, "cnn": make_cnn_step, "gpt": make_gpt_step,
                  "jvp": make_jvp_step, "gelu": make_gelu}


def make_step_bench(lib: Any, clock: Clock, settings: Settings, which: str) -> Callable:
    step = STEP_FACTORIES[which](lib)
    step()   # warm-up: first-call allocations (optimizer state, .grad buffers)
    step()
    return lambda: {"value": clock.seconds(step)}


# -- peak memory (npgrad and NumPy in their workers, torch by RSS in one-shot processes) --

DEEP_SIZES = (1024,) * 11   # 10 layers, 1024 wide
DEEP_BATCH = 256


def _numpy_deep_forward(params: list, x: np.ndarray) -> np.ndarray:
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0)
    return h


def _memory_work(lib: Any, what: str, batch: int) -> Callable[[], Any]:
    x_np, y_np = mlp_batch(batch, DEEP_SIZES[0], DEEP_SIZES[-1])
    if lib.__name__ == "numpy":
        params_np = make_numpy_mlp(DEEP_SIZES)
        if what == "train":
            return lambda: numpy_mlp_step(params_np, x_np, y_np)
        return lambda: _numpy_deep_forward(params_np, x_np)
    if lib.__name__ not in ("npgrad", "torch"):
        raise Unsupported("memory")
    params = make_raw_mlp(lib, DEEP_SIZES)
    x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
    if what == "train":
        return lambda: raw_mlp_step(lib, params, x, y)

    def forward() -> Any:
        with grad_mode(lib, what):
            return raw_mlp_forward(lib, params, x)
    return forward


def make_traced_memory_bench(lib: Any, clock: Clock, settings: Settings, what: str) -> Callable:
    if lib.__name__ not in ("npgrad", "numpy"):
        raise Unsupported("tracemalloc")
    if lib.__name__ == "numpy" and what not in ("no_grad", "train"):
        raise Unsupported(what)        # the NumPy floor has one forward for all modes
    work = _memory_work(lib, what, DEEP_BATCH)
    if what == "train":
        work()   # the first step allocates .grad buffers: warm up

    def run() -> dict:
        gc.collect()
        tracemalloc.start()
        try:
            result = work()
            peak = tracemalloc.get_traced_memory()[1]
            del result
        finally:
            tracemalloc.stop()
        return {"value": peak / MiB}
    return run


def measure_peak_rss(lib_name: str, what: str) -> float:
    """In a one-shot process: set up, warm up on a batch of 1, then the measured work."""
    lib = load_library(lib_name)
    work = _memory_work(lib, what, DEEP_BATCH)
    _memory_work(lib, what, 1)()   # load code paths, not the measured buffers
    gc.collect()
    _reset_peak_rss()
    before = _peak_rss_kib()
    result = work()
    after = _peak_rss_kib()
    del result
    return (after - before) / 1024


def _peak_rss_kib() -> int:
    """This process's peak RSS in KiB: VmHWM where Linux has it (a child's own, unlike
    ru_maxrss, which Linux carries over from the parent at fork/exec), else ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak_rss() -> None:
    """Lower the peak-RSS mark to the current RSS ("5" to /proc/self/clear_refs on Linux),
    so set-up and warm-up do not hide the work's own peak; elsewhere a lower bound."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


# -- reference cycles (npgrad only) ---------------------------------------------------

def graph_nodes(root: Any) -> list:
    """Every node reachable from ``root`` (an explicit stack: graphs can be deep)."""
    seen, stack = {id(root): root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return list(seen.values())


def make_cycles_bench(lib: Any, clock: Clock, settings: Settings) -> Callable:
    """After a training step and ``del``, with the cyclic GC off, the graph must be gone."""
    if lib.__name__ != "npgrad":
        raise Unsupported("cycles")

    def run() -> dict:
        params = make_raw_mlp(lib, (784, 256, 10))
        x_np, y_np = mlp_batch(64, 784, 10)
        x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
        gc.collect()
        gc.disable()
        try:
            logits = raw_mlp_forward(lib, params, x)
            loss = lib.nn.functional.cross_entropy(logits, y)
            nodes = graph_nodes(loss.grad_fn)
            refs = [weakref.ref(node) for node in nodes] + [weakref.ref(logits),
                                                            weakref.ref(loss)]
            count = len(nodes)
            del nodes
            loss.backward()
            with lib.no_grad():
                for w, b in params:
                    w -= LR * w.grad
                    b -= LR * b.grad
                    w.grad = None
                    b.grad = None
            del logits, loss
            alive = sum(ref() is not None for ref in refs)
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            found = sorted({type(o).__name__ for o in gc.garbage
                            if type(o).__module__.split(".")[0] == "npgrad"})
            n_found = sum(type(o).__module__.split(".")[0] == "npgrad" for o in gc.garbage)
            gc.garbage.clear()
        finally:
            gc.set_debug(0)
            gc.enable()
        return {"value": alive, "count": count, "found": n_found, "types": found}
    return run


BENCH_KINDS = {"op": make_op_bench, "chain": make_chain_bench, "step": make_step_bench,
               "traced_memory": make_traced_memory_bench, "cycles": make_cycles_bench}


def worker_main(lib_name: str, threads: int, clock_kind: str, quick: bool) -> int:
    """Serve ``setup`` / ``sample`` / ``drop`` / ``info`` requests, one JSON line each."""
    lib = load_library(lib_name)
    if lib_name in ("torch", "npgrad"):
        lib.set_num_threads(threads)
    clock = Clock(clock_kind)
    settings = Settings.make(quick)
    benches: dict = {}
    out = sys.stdout
    sys.stdout = sys.stderr       # a library's prints must not corrupt the protocol
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "info":
                reply: dict = {"version": _version(lib, lib_name),
                               "threads": lib.get_num_threads() if hasattr(
                                   lib, "get_num_threads") else threads, "blas": _blas_info()}
            elif request["op"] == "setup":
                kind, args = request["kind"], request["args"]
                benches[request["key"]] = BENCH_KINDS[kind](lib, clock, settings, *args)
                reply = {"ok": True}
            elif request["op"] == "sample":
                reply = benches[request["key"]]()
            elif request["op"] == "drop":
                benches.pop(request["key"], None)
                gc.collect()
                reply = {"ok": True}
            else:
                reply = {"error": f"unknown request {request['op']}"}
        except Unsupported as exc:
            reply = {"unsupported": str(exc)}
        except Exception as exc:  # noqa: BLE001 - reported in the row; the worker keeps serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


def _version(lib: Any, name: str) -> str:
    version = getattr(lib, "__version__", None)
    if version is None:        # HIPS autograd has no __version__
        from importlib import metadata
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "?"
    return str(version)


def _blas_info() -> str:
    try:
        import threadpoolctl
    except ImportError:
        return "threadpoolctl not installed"
    parts = [f"{i.get('internal_api')} {i.get('architecture', '?')} x{i.get('num_threads')}"
             for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(parts) or "no BLAS seen"


# ======================================================================================
# The parent side: workers, interleaved samples, rows
# ======================================================================================

def child_env(threads: int, keep_openblas_env: bool) -> dict:
    """The environment of every benchmark process: the checkout importable, threads fixed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for var in THREAD_VARS:
        env[var] = str(threads)
    if not keep_openblas_env:
        for var in OPENBLAS_OVERRIDES:     # both together (see the Note)
            env.pop(var, None)
    return env


class Worker:
    """A library's worker process, spoken to in JSON lines."""

    def __init__(self, lib: str, threads: int, args: argparse.Namespace) -> None:
        self.lib = lib
        clock = "thread" if threads == 1 else "wall"
        command = [sys.executable, os.path.abspath(__file__), "--worker", lib,
                   "--worker-threads", str(threads), "--worker-clock", clock]
        if args.quick:
            command.append("--quick")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, cwd=REPO_ROOT,
                                        env=child_env(threads, args.keep_openblas_env))

    def call(self, **request: Any) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            return {"error": f"the {self.lib} worker exited (code {self.process.wait()})"}
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


class Session:
    """The workers of one thread count, and the interleaved measurements over them."""

    def __init__(self, libs: tuple, threads: int, args: argparse.Namespace,
                 settings: Settings) -> None:
        self.threads, self.args, self.settings = threads, args, settings
        self.workers = {lib: Worker(lib, threads, args) for lib in libs}
        self.info = {lib: w.call(op="info") for lib, w in self.workers.items()}
        self.counter = 0

    def wanted(self, group: str, row: str) -> bool:
        """Whether ``--only`` keeps this row (Note [Selecting benchmarks])."""
        return row_wanted(self.args.only, group, row)

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()

    def measure(self, kind: str, args: list, repeat: int, libs: tuple | None = None) -> dict:
        """lib -> median of each field over ``repeat`` interleaved samples (or "error"/None)."""
        self.counter += 1
        key = f"b{self.counter}"
        libs = tuple(self.workers) if libs is None else tuple(x for x in libs if x in self.workers)
        active, results = [], {}
        for lib in libs:
            reply = self.workers[lib].call(op="setup", key=key, kind=kind, args=args)
            if reply.get("ok"):
                active.append(lib)
            else:
                results[lib] = {"error": reply["error"]} if "error" in reply else None
        samples: dict = {lib: [] for lib in active}
        for r in range(repeat):
            order = active[r % len(active):] + active[:r % len(active)] if active else []
            for lib in order:
                if lib in results:
                    continue          # failed earlier in this row
                reply = self.workers[lib].call(op="sample", key=key)
                if "error" in reply:
                    results[lib] = {"error": reply["error"]}
                else:
                    samples[lib].append(reply)
        for lib in active:
            self.workers[lib].call(op="drop", key=key)
            if lib not in results:
                fields = samples[lib][0].keys()
                results[lib] = {f: _median([s[f] for s in samples[lib]]) for f in fields}
        return results


def _median(values: list) -> Any:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return statistics.median(values)
    return values[len(values) // 2]


def row_from(name: str, unit: str, results: dict, targets: list | None = None,
             note: str = "") -> Row:
    values, errors = {}, []
    for lib, result in results.items():
        if result is None:
            continue
        if "error" in result:
            errors.append(f"{lib}: {result['error']}")
            continue
        values[lib] = result["value"]
    row = Row(name, unit, values=values, targets=targets or [], note=note)
    if "npgrad" not in values and errors:
        row.error = "; ".join(errors)
    elif errors:
        row.note = "; ".join(filter(None, [row.note] + errors))
    return row


# -- the benchmarks, parent side --------------------------------------------------------

def bench_import(session: Session) -> list:
    """CPU time (user + system) of ``python -c "import X"`` in fresh processes.

    NumPy and torch load the .pyc files written when they were installed, and so
    does an installed npgrad; run from a checkout on a machine that sets
    PYTHONDONTWRITEBYTECODE, npgrad would recompile every module on each import, so
    it is timed with its bytecode cached under a private PYTHONPYCACHEPREFIX (after
    one untimed run fills it), and also without a cache, for the note.
    """
    if session.threads != 1:
        return []          # threads do not change an import: the 1-thread table has it
    settings = session.settings
    env = child_env(session.threads, session.args.keep_openblas_env)
    cached_env = dict(env, PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(),
                                                            "npgrad-bench-pycache"))
    cached_env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import npgrad"], check=True, cwd=REPO_ROOT,
                   env=cached_env)

    def cpu_time(module: str, env: dict) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, cwd=REPO_ROOT,
                       env=env, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    modules = {lib: ("autograd.numpy" if lib == "autograd" else lib) for lib in session.workers}
    runs: dict = {lib: [] for lib in modules}
    bare, uncached = [], []
    for _ in range(settings.import_runs):     # interleaved, like every other row
        for lib, module in modules.items():
            runs[lib].append(cpu_time(module, cached_env if lib == "npgrad" else env))
        bare.append(cpu_time("sys", env))
        if not settings.quick or not uncached:
            uncached.append(cpu_time("npgrad", dict(env, PYTHONDONTWRITEBYTECODE="1")))
    values = {lib: statistics.median(v) for lib, v in runs.items()}
    return [Row("import", "s", values=values, targets=[("torch", 0.1)],
                note=f"CPU time, interpreter start-up included ({statistics.median(bare) * 1e3:.1f}"
                     f" ms for `import sys`); npgrad without a bytecode cache: "
                     f"{statistics.median(uncached) * 1e3:.1f} ms")]


def bench_ops(session: Session, case: tuple) -> list:
    name, _, modes, targets, threaded = case
    if session.threads != 1 and not threaded:
        return []
    rows = []
    for mode in modes:
        if not session.wanted("ops", f"{name} [{mode}]"):
            continue
        results = session.measure("op", [name, mode], session.settings.repeat)
        rows.append(row_from(f"{name} [{mode}]", "us", results, targets.get(mode, [])))
    return rows


def bench_chain(session: Session) -> list:
    if session.threads != 1:
        return []
    settings = session.settings
    rows, per_op = [], {}
    short, long = settings.chain_lengths
    for n in settings.chain_lengths:
        # The long chain runs once, on npgrad and torch: at 1M ops one run takes seconds.
        repeat = settings.chain_repeat if n == short else 1
        libs = None if n == short else ("npgrad", "torch")
        results = session.measure("chain", [n], repeat, libs)
        label = f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"
        notes = [f"{lib} {r['forward'] / n * 1e6:.2f} us/op forward + "
                 f"{r['backward'] / n * 1e6:.2f} us/op backward"
                 for lib, r in results.items() if r and "forward" in r]
        row = row_from(f"chain y*c {label} fwd+bwd", "s", results,
                       [("torch", 0.5)] if n == 100_000 else [], "; ".join(notes))
        rows.append(row)
        if row.npgrad is not None:
            per_op[n] = row.npgrad / n
        rows.append(Row(f"chain y*c {label} per op", "us",
                        values={lib: v / n * 1e6 for lib, v in row.values.items()}))
    if short in per_op and long in per_op:
        rows.append(Row(f"chain linearity (per-op {long:,} / {short:,})", "x",
                        values={"npgrad": per_op[long] / per_op[short]},
                        targets=[("max", 1.25)]))
    return rows


STEP_ROWS = [
    # which, row name, targets, note
    ("mlp", "train step MLP 784-256-10 b64", [("torch", 1.1)],
     ("npgrad/torch: nn.Sequential + optim.SGD; numpy: hand-written gradients; "
      "mygrad / autograd: the same maths in their APIs")),
    ("gpt", "train step GPT 2L-2H-64 b8x32 AdamW", [("torch", 1.5)],
     "benchmarks/models/gpt.py, one definition run by both"),
    ("cnn", "train step CNN conv3x3(8)-pool-linear b32", [], "no NumPy floor"),
    ("jvp", "jvp MLP 784-256-10 b64 (forward AD)", [],
     "forward_ad.dual_level + make_dual through nn.Sequential"),
    ("gelu", "gelu exact 1M float32 [no_grad]", [("torch", 2.0)],
     "F.gelu(x) (erf); NumPy has no erf"),
]


def bench_steps(session: Session) -> list:
    rows = []
    for which, name, targets, note in STEP_ROWS:
        if not session.wanted("steps", name):
            continue
        results = session.measure("step", [which], session.settings.step_repeat)
        rows.append(row_from(name, "s", results, targets, note))
    return rows


def bench_memory(session: Session) -> list:
    if session.threads != 1:
        return []
    rows = []
    env = child_env(session.threads, session.args.keep_openblas_env)

    def peak_rss(lib: str, what: str) -> float | None:
        if lib not in session.workers:
            return None
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak-rss", lib, what],
                             check=True, capture_output=True, text=True, cwd=REPO_ROOT, env=env)
        return float(out.stdout.split()[-1])

    def rss_note(what: str) -> str:
        if session.settings.quick:      # the cross-check of the two methods: full runs only
            return ""
        return f"npgrad peak-RSS growth {peak_rss('npgrad', what):.1f} MiB"

    numpy_forward = session.measure("traced_memory", ["no_grad"], 1, ("numpy",)).get("numpy")
    targets = {"recording": [("torch", 1.0)], "no_grad": [("numpy", 1.05)]}
    for mode in MODES:
        traced = session.measure("traced_memory", [mode], 1, ("npgrad",))
        values = {"numpy": numpy_forward["value"]} if numpy_forward and \
            "value" in numpy_forward else {}
        if traced.get("npgrad") and "value" in traced["npgrad"]:
            values["npgrad"] = traced["npgrad"]["value"]
        torch_peak = peak_rss("torch", mode)
        if torch_peak is not None:
            values["torch"] = torch_peak
        rows.append(Row(f"peak mem 10x1024 MLP fwd b256 [{mode}]", "MiB", values=values,
                        targets=targets.get(mode, []),
                        note=rss_note(mode)))
    traced = session.measure("traced_memory", ["train"], 1, ("npgrad", "numpy"))
    values = {lib: r["value"] for lib, r in traced.items() if r and "value" in r}
    torch_peak = peak_rss("torch", "train")
    if torch_peak is not None:
        values["torch"] = torch_peak
    rows.append(Row("peak mem 10x1024 MLP train step b256", "MiB", values=values,
                    note=rss_note("train")))
    return rows


def bench_cycles(session: Session) -> list:
    if session.threads != 1:
        return []
    result = session.measure("cycles", [], 1, ("npgrad",)).get("npgrad")
    if not result or "error" in result:
        return [Row("cycles", "", error=(result or {}).get("error", "npgrad worker missing"))]
    return [
        Row("cycles: graph nodes freed by refcount", "bool",
            values={"npgrad": result["value"] == 0},
            targets=[("equals", True)],
            note=f"{result['value']} of {result['count']} nodes + 2 tensors still alive after del"),
        Row("cycles: npgrad objects found by gc.collect()", "count",
            values={"npgrad": result["found"]}, targets=[("max", 0)],
            note=", ".join(result["types"])),
    ]


def chain_row_names(settings: Settings) -> list:
    labels = [f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"
              for n in settings.chain_lengths]
    short, long = settings.chain_lengths
    return ([f"chain y*c {label} {what}" for label in labels for what in ("fwd+bwd", "per op")]
            + [f"chain linearity (per-op {long:,} / {short:,})"])


# Note [Selecting benchmarks]
# ``--only NAME`` (any case) names a group when it is part of a group's name -- "ops" (every
# per-op row: ``--only op``), "chain", "steps" (training steps, jvp, GELU), "memory",
# "cycles", "import" -- and keeps that group's rows; otherwise it keeps the rows whose name,
# as the table prints it, contains NAME ("a*b+a 1 elem [no_grad]", "mlp", "gelu").  A group
# whose rows are computed together (a chain's linearity needs both lengths) runs whole when
# any of its rows is kept; the per-op and step groups run only their kept rows.

def benchmarks(settings: Settings) -> list:
    """(group, row names, function) triples in table order (Note [Selecting benchmarks])."""
    entries: list = [("import", ["import"], bench_import)]
    for case in OP_CASES:
        entries.append(("ops", [f"{case[0]} [{mode}]" for mode in case[2]],
                        lambda session, case=case: bench_ops(session, case)))
    entries += [("chain", chain_row_names(settings), bench_chain),
                ("steps", [row[1] for row in STEP_ROWS], bench_steps),
                ("memory", [f"peak mem 10x1024 MLP fwd b256 [{mode}]" for mode in MODES]
                 + ["peak mem 10x1024 MLP train step b256"], bench_memory),
                ("cycles", ["cycles: graph nodes freed by refcount",
                            "cycles: npgrad objects found by gc.collect()"], bench_cycles)]
    return entries


def run_session(session: Session) -> list:
    rows = []
    for group, names, bench in benchmarks(session.settings):
        if not any(session.wanted(group, name) for name in names):
            continue
        print(f"  [{session.threads} thread{'s' if session.threads > 1 else ''}] {group}: "
              f"{names[0]}{' ...' if len(names) > 1 else ''}", file=sys.stderr, flush=True)
        try:
            rows.extend(bench(session))
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others
            rows.append(Row(names[0], "", error=f"{type(exc).__name__}: {exc}"))
    return rows


GROUPS = ("import", "ops", "chain", "steps", "memory", "cycles")


def row_wanted(only: str | None, group: str, row: str) -> bool:
    """Whether ``--only only`` keeps row ``row`` of ``group`` (Note [Selecting benchmarks])."""
    if not only:
        return True
    only = only.lower()
    if any(only in name for name in GROUPS):
        return only in group
    return only in row.lower()


def selected_rows(only: str | None, settings: Settings) -> list:
    """The row names ``--only`` keeps, known before anything runs."""
    return [name for group, names, _ in benchmarks(settings) for name in names
            if row_wanted(only, group, name)]


def available_libs(args: argparse.Namespace) -> tuple:
    wanted = tuple(args.libs.split(",")) if args.libs else LIBS
    unknown = set(wanted) - set(LIBS)
    if unknown:
        raise SystemExit(f"unknown libraries: {', '.join(sorted(unknown))}")
    libs = []
    for lib in LIBS:
        if lib not in wanted or (lib == "torch" and args.no_torch):
            continue
        if lib in ("npgrad", "numpy") or importlib.util.find_spec(lib) is not None:
            libs.append(lib)
    return tuple(libs)


def load_text() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def header(settings: Settings, threads: int, info: dict, load_before: str, load_after: str) -> list:
    clock = "CPU time of the measuring thread" if threads == 1 else "wall-clock time"
    lines = [f"python {platform.python_version()} | {os.cpu_count()} CPUs | "
             + ("quick run" if settings.quick else "full run")
             + f" | {threads} thread{'s' if threads > 1 else ''} per library | {clock}"]
    lines.append(" | ".join(f"{lib} {i.get('version', '?')}" for lib, i in info.items()))
    lines.append("BLAS per worker: " + "; ".join(f"{lib}: {i.get('blas', '?')}"
                                                  for lib, i in info.items()))
    lines.append(f"load before: {load_before}")
    lines.append(f"load after:  {load_after}")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) * 0.75:
        lines.append(f"NOTE: load average {load:.1f} on {os.cpu_count()} CPUs: other work "
                     "shares the cores; thread CPU times hold up, wall times are noisy")
    return lines


def misses_text(rows: list) -> list:
    out = []
    for row in rows:
        if row.met() is False:
            text = ", ".join(row.misses()) or row.target_text()
            out.append(f"  {row.name}: {text}")
    return out


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and repeat counts, 1 thread (the whole run < 60 s)")
    parser.add_argument("--only", metavar="NAME",
                        help="run only one group of rows (import, ops, chain, steps, memory, "
                             "cycles) or the rows whose name contains NAME")
    parser.add_argument("--json", metavar="PATH",
                        default=os.path.join(BENCH_DIR, "results.json"),
                        help="where to write the results (default: benchmarks/results.json)")
    parser.add_argument("--threads", metavar="N[,N]",
                        help="thread counts, one table each (default 1,2; --quick: 1)")
    parser.add_argument("--libs", metavar="A,B", help=f"libraries to run (default: {','.join(LIBS)}"
                                                      ", those installed)")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even if installed")
    parser.add_argument("--keep-openblas-env", action="store_true",
                        help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the workers")
    # The subprocess sides:
    parser.add_argument("--worker", metavar="LIB", help=argparse.SUPPRESS)
    parser.add_argument("--worker-threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--worker-clock", default="thread", help=argparse.SUPPRESS)
    parser.add_argument("--peak-rss", nargs=2, metavar=("LIB", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        return worker_main(args.worker, args.worker_threads, args.worker_clock, args.quick)
    if args.peak_rss:
        print(measure_peak_rss(*args.peak_rss))
        return 0

    settings = Settings.make(args.quick)
    if args.only and not selected_rows(args.only, settings):   # a typo: say so, run nothing
        parser.error(f"--only {args.only!r} matches no row name and no group "
                     f"({', '.join(GROUPS)})")
    threads = [int(t) for t in (args.threads or ("1" if args.quick else "1,2")).split(",")]
    libs = available_libs(args)
    start = time.perf_counter()
    tables, infos, loads = {}, {}, {}
    for n in threads:
        load_before = load_text()
        session = Session(libs, n, args, settings)
        try:
            tables[n] = run_session(session)
        finally:
            session.close()
        infos[n] = session.info
        loads[n] = (load_before, load_text())
    elapsed = time.perf_counter() - start

    for n in threads:
        print("\n".join(header(settings, n, infos[n], *loads[n])))
        print()
        print(format_table(tables[n], libs))
        missed = misses_text(tables[n])
        if missed:
            print("\nmissed targets:")
            print("\n".join(missed))
        print()
    print(f"{sum(len(t) for t in tables.values())} rows in {elapsed:.1f} s")

    first = threads[0]
    report = {
        "meta": {"python": platform.python_version(), "numpy": np.__version__,
                 "npgrad": infos[first].get("npgrad", {}).get("version"),
                 "torch": infos[first].get("torch", {}).get("version"),
                 "torch_threads": infos[first].get("torch", {}).get("threads"),
                 "libraries": {lib: i.get("version") for lib, i in infos[first].items()},
                 "blas": {lib: i.get("blas") for lib, i in infos[first].items()},
                 "threads": threads, "cpus": os.cpu_count(),
                 "load": {str(n): list(loads[n]) for n in threads},
                 "load_average": os.getloadavg()[0],
                 "clock": {str(n): "thread_time" if n == 1 else "perf_counter" for n in threads},
                 "quick": settings.quick, "only": args.only,
                 "seconds": elapsed, "date": time.strftime("%Y-%m-%d %H:%M:%S")},
        "results": [row.as_json() for row in tables[first]],
        "results_by_threads": {str(n): [row.as_json() for row in tables[n]] for n in threads},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)
    print(f"results written to {args.json}")
    errors = [row for rows in tables.values() for row in rows if row.error]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
