"""Issue 15's performance target: per-sample gradients of a small MLP over a batch of 64 with
``vmap(grad(...))`` against one batched backward of the same model (target: at most 2x).

Run: ``python benchmarks/vmap_per_sample_grad.py [--torch]`` (``--torch`` times torch.func too).
Prints the medians of interleaved repeats and the ratio.
"""
from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np


def setup(lib, batch: int = 64):
    from importlib import import_module

    F = import_module(f"{lib.__name__}.func")
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(32, 64), lib.nn.ReLU(), lib.nn.Linear(64, 10))
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((batch, 32)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, batch))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        out = F.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))

    def vmapped():
        per_sample(params, x, y)

    def batched():
        model.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()

    return vmapped, batched


def measure(fns, repeats: int = 15, number: int = 5) -> list:
    times: list = [[] for _ in fns]
    for _ in range(repeats):  # interleaved, so load changes hit both alike
        for i, fn in enumerate(fns):
            times[i].append(timeit.timeit(fn, number=number) / number)
    return [statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--torch", action="store_true", help="time torch.func as well")
    args = parser.parse_args()
    import npgrad

    libs = [npgrad]
    if args.torch:
        import torch

        torch.set_num_threads(1)
        libs.append(torch)
    for lib in libs:
        vmapped, batched = setup(lib)
        vmapped(), batched()  # warm up
        t_vmap, t_batched = measure([vmapped, batched])
        print(f"{lib.__name__:7s} vmap(grad) per-sample: {t_vmap * 1e3:8.3f} ms   one batched "
              f"backward: {t_batched * 1e3:8.3f} ms   ratio {t_vmap / t_batched:6.1f}x "
              "(target <= 2x)")


if __name__ == "__main__":
    main()
