"""``python -m npgrad run script.py`` and ``install_as_torch``: unmodified torch scripts run as
``python script.py`` runs them (argv, ``__main__``, exit codes, tracebacks), ``import torch`` and
its submodules are npgrad, and a seeded tutorial script prints what real torch prints."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import npgrad

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONWARNINGS", None)
    return env


def run(args: list, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(), timeout=300)


def npgrad_run(script: str, cwd: str, *args: str) -> subprocess.CompletedProcess:
    return run(["-m", "npgrad", "run", script, *args], cwd)


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return name


def test_script_sees_what_python_gives(tmp_path):
    write(tmp_path, "show.py", """\
        import os, sys
        print(__name__, sys.argv, os.path.basename(__file__), __spec__)
        print(sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
        print(type(__loader__).__name__, __package__)
        """)
    mine = npgrad_run("show.py", str(tmp_path), "a", "--flag=1")
    plain = run(["show.py", "a", "--flag=1"], str(tmp_path))
    assert mine.returncode == plain.returncode == 0
    assert mine.stdout == plain.stdout
    assert mine.stdout.splitlines()[0] == "__main__ ['show.py', 'a', '--flag=1'] show.py None"


def test_exit_codes_and_tracebacks_match_python(tmp_path):
    write(tmp_path, "fail.py", """\
        import sys

        def inner():
            raise ValueError("boom")

        if sys.argv[1] == "raise":
            inner()
        elif sys.argv[1] == "exit":
            sys.exit(3)
        elif sys.argv[1] == "exit-text":
            sys.exit("bad input")
        print("fine")
        """)
    for arg in ("raise", "exit", "exit-text", "ok"):
        mine = npgrad_run("fail.py", str(tmp_path), arg)
        plain = run(["fail.py", arg], str(tmp_path))
        assert (mine.returncode, mine.stdout, mine.stderr) == \
            (plain.returncode, plain.stdout, plain.stderr), arg
    assert run(["-m", "npgrad", "run", "fail.py", "raise"], str(tmp_path)).stderr.startswith(
        "Traceback (most recent call last):\n  File \"" + str(tmp_path / "fail.py"))


def test_missing_script_and_usage(tmp_path):
    mine = npgrad_run("nope.py", str(tmp_path))
    plain = run(["nope.py"], str(tmp_path))
    assert mine.returncode == plain.returncode == 2
    assert mine.stderr == plain.stderr
    usage = run(["-m", "npgrad"], str(tmp_path))
    assert usage.returncode == 2 and "usage: python -m npgrad run script.py" in usage.stderr


def test_import_torch_is_npgrad(tmp_path):
    write(tmp_path, "mylib.py", """\
        import torch

        def double(x):
            return torch.as_tensor(x) * 2
        """)
    write(tmp_path, "imports.py", """\
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torch.utils.data import DataLoader, TensorDataset
        from torch.autograd import grad
        import torch.linalg, torch.onnx, torch.distributed, torch.nn.parallel
        from torch.cuda.amp import GradScaler, autocast
        import npgrad, mylib
        print(torch is npgrad, nn is npgrad.nn, F is npgrad.nn.functional,
              sys.modules["torch.utils.data"] is npgrad.utils.data,
              torch.optim.SGD is npgrad.optim.SGD, DataLoader is npgrad.utils.data.DataLoader)
        print(type(mylib.double([1.0])) is npgrad.Tensor, mylib.double([1.0]))
        print(torch.float32, torch.zeros(2, dtype=torch.float64), torch.zeros(2).dtype)
        print(torch.tensor([1.0]).max(0))
        import pickle
        class Point:
            pass
        print(type(pickle.loads(pickle.dumps(Point()))).__module__)
        try:
            import torch.not_a_module
        except ModuleNotFoundError as e:
            print(e)
        """)
    mine = npgrad_run("imports.py", str(tmp_path))
    assert mine.returncode == 0, mine.stderr
    lines = mine.stdout.splitlines()
    assert lines[0] == "True True True True True True"
    assert lines[1] == "True tensor([2.])"
    assert lines[2] == "torch.float32 tensor([0., 0.], dtype=torch.float64) torch.float32"
    assert lines[3] == "torch.return_types.max("
    assert lines[-2] == "__main__"
    assert lines[-1] == "No module named 'torch.not_a_module'"


def test_install_as_torch_in_a_fresh_process():
    code = textwrap.dedent("""\
        import sys, npgrad
        npgrad.install_as_torch()
        npgrad.install_as_torch()  # idempotent
        import torch, torch.nn
        print(torch is npgrad, torch.nn is npgrad.nn, repr(torch.float64))
        npgrad.uninstall_as_torch()
        print('torch' in sys.modules, repr(npgrad.float64))
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), check=True, timeout=120).stdout.splitlines()
    assert out == ["True True torch.float64", "False npgrad.float64"]


def test_install_as_torch_refuses_when_torch_is_real():
    torch = pytest.importorskip("torch")
    assert sys.modules["torch"] is torch
    with pytest.raises(RuntimeError, match="the real torch is already imported"):
        npgrad.install_as_torch()
    assert repr(npgrad.float32) == "npgrad.float32"


TUTORIAL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(64, 4)
w_true = torch.tensor([[1.5], [-2.0], [0.5], [1.0]])
y = X @ w_true + 0.1 * torch.randn(64, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


model = Net()
print(model)
print(torch.cuda.is_available(), torch.device("cuda" if torch.cuda.is_available() else "cpu"))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.4f}")
model.eval()
with torch.no_grad():
    print(model(X[:3]))
print(model.fc1.weight.dtype, model.fc1.weight.shape, model.fc2.bias.requires_grad)
"""


def test_tutorial_script_prints_what_torch_prints(tmp_path):
    pytest.importorskip("torch")
    write(tmp_path, "tutorial.py", TUTORIAL)
    theirs = run(["tutorial.py"], str(tmp_path))
    mine = npgrad_run("tutorial.py", str(tmp_path))
    assert theirs.returncode == 0, theirs.stderr
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout == theirs.stdout
