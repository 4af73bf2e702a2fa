"""``python -m npgrad.demo``: the seeds' story, run and measured.

1. The grad modes at work on one tensor (what the seed tutorials show).
2. Train an MLP and a small CNN on the 8x8 handwritten digits (UCI "Optical
   Recognition of Handwritten Digits", 1,797 images, shipped in npgrad/data).
3. Evaluate the test set three ways -- recording on, under ``no_grad`` and
   under ``inference_mode`` -- and print the time and peak memory of each.
4. Save the weights (safetensors), reload them into a fresh model and check
   that the predictions are identical.
5. Write a PNG with the training curves and the memory bars.
"""
from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import numpy as np

import npgrad as torch
from npgrad import nn

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "digits.npz"


class _OneLineParser(argparse.ArgumentParser):
    """Bad flags print one line, not a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"npgrad.demo: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = _OneLineParser(prog="python -m npgrad.demo",
                            description="Train on the 8x8 digits and measure grad / no_grad / "
                                        "inference_mode.")
    parser.add_argument("--epochs", type=int, default=30, help="MLP epochs (CNN: a third)")
    parser.add_argument("--out", default="./npgrad-demo/", help="folder for weights and plot")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error("--epochs must be at least 1")
    return args


def prepare_out_dir(path: str) -> Path:
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".npgrad-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        print(f"npgrad.demo: error: cannot write to --out {path!r}: {exc.strerror or exc}",
              file=sys.stderr)
        raise SystemExit(2) from None
    return out


# -- 1. the grad modes ---------------------------------------------------------------------

def show_grad_modes() -> None:
    print("== 1. When gradients are recorded ==")
    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
    print(f"  with no_grad():        y = {y}   requires_grad={y.requires_grad}")
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
    print(f"  enable_grad in no_grad: y = {y}")
    with torch.set_grad_enabled(False):
        y = x * 2
    print(f"  set_grad_enabled(False): y = {y}")
    with torch.inference_mode():
        y = x * 2
    print(f"  inference_mode():       y = {y}   is_inference={y.is_inference()}")
    w = torch.tensor([1., 2.], requires_grad=True)
    (w * w).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    print(f"  SGD step under no_grad: w = {w}   is_leaf={w.is_leaf}")
    try:
        w -= 0.1 * w.grad
    except RuntimeError as exc:
        print(f"  ... and outside no_grad: RuntimeError: {exc}")
    print()


# -- 2. data and models -----------------------------------------------------------------------

def load_digits(seed: int) -> tuple:
    with np.load(DATA_FILE) as data:
        images = data["images"].astype(np.float32) / 16.0
        labels = data["labels"].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = 360
    test, train = order[:n_test], order[n_test:]
    return (torch.from_numpy(images[train]), torch.from_numpy(labels[train]),
            torch.from_numpy(images[test]), torch.from_numpy(labels[test]))


def make_mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64),
                         nn.ReLU(), nn.Linear(64, 10))


def make_cnn() -> nn.Module:
    return nn.Sequential(nn.Unflatten(1, (1, 8)), nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))


def accuracy(model: nn.Module, images: Any, labels: Any) -> float:
    with torch.no_grad():
        return float((model(images).argmax(1) == labels).float().mean())


def train(name: str, model: nn.Module, data: tuple, epochs: int, lr: float,
          seed: int) -> dict:
    from npgrad.utils.data import DataLoader, TensorDataset

    train_x, train_y, test_x, test_y = data
    generator = torch.Generator().manual_seed(seed)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True,
                        generator=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    history: dict = {"loss": [], "test_acc": []}
    bar = _progress(range(epochs), desc=f"train {name}")
    start = time.perf_counter()
    for _ in bar:
        model.train()
        total, count = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
            count += len(yb)
        model.eval()
        history["loss"].append(total / count)
        history["test_acc"].append(accuracy(model, test_x, test_y))
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                            test_acc=f"{history['test_acc'][-1]:.3f}")
    history["seconds"] = time.perf_counter() - start
    print(f"  {name}: test accuracy {history['test_acc'][-1]:.1%} after {epochs} epochs "
          f"in {history['seconds']:.1f} s")
    return history


def _progress(iterable: Any, desc: str) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, leave=False, file=sys.stderr)  # stdout stays a clean log


# -- 3. recording vs no_grad vs inference_mode --------------------------------------------------

def measure(fn: Callable[[], Any], repeats: int = 5) -> tuple:
    """Median seconds of ``fn``; peak bytes while it runs; bytes still held by its result.

    What a recorded forward keeps alive (the graph and its saved activations)
    shows in the bytes held after it returns; no_grad and inference_mode keep
    only the output.
    """
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    tracemalloc.start()
    out = fn()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del out
    return float(np.median(times)), peak, held


def compare_modes(model: nn.Module, images: Any) -> dict:
    print("== 3. Evaluating the test set three ways ==")
    model.eval()
    batch = torch.cat([images] * 8)  # 2,880 images: big enough to see the memory

    def recording() -> Any:
        return model(batch)

    def no_grad() -> Any:
        with torch.no_grad():
            return model(batch)

    def inference() -> Any:
        with torch.inference_mode():
            return model(batch)

    results = {}
    for name, fn in (("recording on", recording), ("no_grad", no_grad),
                     ("inference_mode", inference)):
        results[name] = measure(fn)
    base_held = results["no_grad"][2]
    print(f"  {'mode':<16}{'time (ms)':>11}{'peak (KiB)':>12}{'held after (KiB)':>18}"
          f"{'held vs no_grad':>17}")
    for name, (seconds, peak, held) in results.items():
        print(f"  {name:<16}{seconds * 1e3:>11.2f}{peak / 1024:>12.0f}{held / 1024:>18.0f}"
              f"{held / base_held:>16.2f}x")
    out = recording()
    print(f"  recording on keeps the graph: output.grad_fn = {type(out.grad_fn).__name__}; "
          f"under no_grad it is None\n")
    return results


# -- 4. weights round trip ----------------------------------------------------------------------------

def save_and_reload(model: nn.Module, out: Path, images: Any) -> bool:
    print("== 4. Saving and reloading the weights ==")
    path = out / "mlp.safetensors"
    try:
        torch.save(model.state_dict(), str(path))
        state = torch.load(str(path))
    except ImportError as exc:
        print(f"  skipped: {exc}")
        return False
    fresh = make_mlp()
    fresh.load_state_dict(state)
    fresh.eval()
    with torch.no_grad():
        same = torch.equal(model(images).argmax(1), fresh(images).argmax(1)) and \
            torch.equal(model(images), fresh(images))
    print(f"  wrote {path} ({path.stat().st_size:,} bytes); reloaded predictions identical: "
          f"{same}\n")
    return same


# -- 5. the plot --------------------------------------------------------------------------------------------

def plot(histories: dict, modes: dict, out: Path) -> Path | None:
    """Training curves, then what differs between the three modes: the memory the result keeps
    alive (the recorded graph and its saved activations) and the time of one evaluation.

    Note [What the demo's picture shows]: the *peak* memory of one forward is the same in all
    three modes here (the largest layer's activations exist at one moment either way), so bars
    of peaks would tell a reader that ``no_grad`` saves nothing. What ``no_grad`` and
    ``inference_mode`` save is what outlives the forward: a recorded output holds its graph.
    The picture therefore shows the held bytes, with each mode's ratio to ``no_grad`` written on
    its bar, and the time; the peaks stay in the printed table.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  plot skipped: matplotlib is not installed (pip install 'npgrad[demo]')")
        return None
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.6))
    for name, h in histories.items():
        axes[0].plot(range(1, len(h["loss"]) + 1), h["loss"], marker=".", label=name)
        axes[1].plot(range(1, len(h["test_acc"]) + 1), h["test_acc"], marker=".", label=name)
    axes[0].set(title="training loss", xlabel="epoch")
    axes[1].set(title="test accuracy", xlabel="epoch", ylim=(0.5, 1.0))
    axes[0].legend(loc="upper right")
    axes[1].legend(loc="lower right")

    names = list(modes)
    positions = np.arange(len(names))
    colours = ["#d62728", "#1f77b4", "#2ca02c"]
    base_held = modes["no_grad"][2]
    held = [modes[n][2] / 1024 for n in names]
    bars = axes[2].bar(positions, held, 0.6, color=colours)
    for bar, name in zip(bars, names):
        axes[2].annotate(f"{modes[name][2] / base_held:.1f}x no_grad",
                         (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                         ha="center", va="bottom", xytext=(0, 3), textcoords="offset points")
    axes[2].set_xticks(positions, names)
    axes[2].set_ylim(0, max(held) * 1.18)
    axes[2].set(title="memory the result keeps alive (KiB)")

    times = [modes[n][0] * 1e3 for n in names]
    bars = axes[3].bar(positions, times, 0.6, color=colours)
    for bar, seconds in zip(bars, times):
        axes[3].annotate(f"{seconds:.1f} ms", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                         ha="center", va="bottom", xytext=(0, 3), textcoords="offset points")
    axes[3].set_xticks(positions, names)
    axes[3].set_ylim(0, max(times) * 1.18)
    axes[3].set(title="time of one test-set evaluation (ms)")
    fig.suptitle("npgrad on the 8x8 digits: a recorded forward keeps its graph alive; "
                 "no_grad and inference_mode keep only the output")
    fig.tight_layout()
    path = out / "npgrad-demo.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = prepare_out_dir(args.out)
    torch.manual_seed(args.seed)
    show_grad_modes()

    print("== 2. Training on the 8x8 digits ==")
    data = load_digits(args.seed)
    mlp = make_mlp()
    histories = {"MLP": train("MLP", mlp, data, args.epochs, 3e-3, args.seed)}
    cnn = make_cnn()
    histories["CNN"] = train("CNN", cnn, data, max(1, args.epochs // 3), 1e-2, args.seed)
    print()

    modes = compare_modes(mlp, data[2])
    save_and_reload(mlp, out, data[2])
    if not args.no_plot:
        path = plot(histories, modes, out)
        if path is not None:
            print(f"== 5. Plot written to {path} ==")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
