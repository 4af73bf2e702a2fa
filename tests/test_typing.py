"""Typed for users: a torch-style script type-checks with mypy, operators reveal ``Tensor``, and
``npgrad.__all__`` is the module's public names (those torch has, plus npgrad's own).

The mypy tests skip when mypy is not installed (it is in the ``test`` extra)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest

import npgrad

REPO = pathlib.Path(__file__).resolve().parents[1]

USER_SCRIPT = '''
from __future__ import annotations

import npgrad as torch
import npgrad.nn as nn
import npgrad.nn.functional as F
from npgrad import Tensor
from npgrad.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
x = torch.randn(64, 4)
y = (x.sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = MLP(4, 8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()

with torch.no_grad():
    acc: float = (model(x).argmax(dim=1) == y).float().mean().item()


@torch.no_grad()
def evaluate(m: nn.Module, data: Tensor) -> Tensor:
    return m(data)


out = evaluate(model, x)
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b: Tensor = a * 2 + a
c: Tensor = 2 * a - a / 3 + 1.5 ** a - (-a) + abs(a) + a % 2 + a // 2
d: Tensor = a @ a
e: Tensor = a[0] + a[1:].sum() + a.mean()
f: Tensor = (a > 1) & (a < 3) | ~(a == 2) ^ (a != 1)
g, = torch.autograd.grad(b.sum(), a, create_graph=True)
h: Tensor = g.detach().clone()
w = torch.zeros(3, 3)
w[0, 1] = 2.0
w += 1
w *= a.detach()
w -= 0.5
w /= 2
v: Tensor = w.view(9).reshape(3, 3).t().mean(dim=0)
z: Tensor = torch.matmul(w, a) + torch.exp(a).sum()
n: int = len(w)
rows = [row for row in w]
first: Tensor = rows[0]
ok: bool = bool(a.requires_grad) and a.is_leaf
grad = a.grad
if grad is not None:
    gsum: float = float(grad.sum())
k: int = a.shape[0] + a.size(0) + a.dim() + int(a[0])
arr = a.detach().numpy()
q: Tensor = a.to(torch.float64).float().double()
r: Tensor = torch.cat([a, a]) + torch.stack([a, a]).sum(0).repeat(2)
s: Tensor = torch.where(a > 0, a, torch.zeros_like(a))
with torch.enable_grad():
    t: Tensor = torch.ones(2, requires_grad=True).sigmoid()
with torch.inference_mode():
    u: Tensor = model(x)
lin: Tensor = nn.Linear(4, 2)(x)
torch.save(model.state_dict(), "unused.pt") if acc > 2 else None
'''

REVEAL = '''
import npgrad as torch

x = torch.ones(3, requires_grad=True)
reveal_type(x * 2 + x)
reveal_type(2 * x - x / 2)
reveal_type(x @ x)
reveal_type(x > 0)
reveal_type(x[0])
reveal_type(torch.zeros(2))
'''


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("mypy")
    tmp = tmp_path_factory.mktemp("typing")
    (tmp / "user_script.py").write_text(textwrap.dedent(USER_SCRIPT))
    (tmp / "reveal.py").write_text(textwrap.dedent(REVEAL))
    (tmp / "mypy.ini").write_text("[mypy]\n")  # the user's config, not the project's
    env = dict(os.environ, MYPYPATH=str(REPO))
    # --strict, except that a Module's __call__ returns Any (as in torch's stubs); npgrad's own
    # errors are the package check's business (pyproject's [tool.mypy]), not the user's
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict",
         "--no-warn-return-any", "--follow-imports=silent", "--cache-dir", str(tmp / "cache"),
         "user_script.py", "reveal.py"],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    return proc.stdout + proc.stderr


def test_a_user_script_type_checks(mypy_report: str) -> None:
    errors = [line for line in mypy_report.splitlines() if ": error:" in line]
    assert errors == []


def test_operators_reveal_tensor(mypy_report: str) -> None:
    revealed = [line.split("Revealed type is ")[1] for line in mypy_report.splitlines()
                if "reveal.py" in line and "Revealed type is" in line]
    assert revealed == ['"npgrad._tensor.Tensor"'] * 6


# -- __all__ ------------------------------------------------------------------------------------

NPGRAD_ONLY = {"install_as_torch", "uninstall_as_torch"}  # npgrad's own public API


def test_all_names_exist_and_star_import_works() -> None:
    assert [n for n in npgrad.__all__ if not hasattr(npgrad, n)] == []
    assert len(set(npgrad.__all__)) == len(npgrad.__all__)
    namespace: dict = {}
    exec("from npgrad import *", namespace)
    assert set(npgrad.__all__) <= set(namespace)


def test_all_names_are_torch_names() -> None:
    torch = pytest.importorskip("torch")
    assert sorted(n for n in npgrad.__all__ if n not in NPGRAD_ONLY and not hasattr(torch, n)) \
        == []


def test_every_public_torch_name_of_the_module_is_in_all() -> None:
    """A name added to npgrad/__init__.py that torch also has must join __all__."""
    torch = pytest.importorskip("torch")
    public = [n for n, v in vars(npgrad).items() if not n.startswith("_")
              and not isinstance(v, types.ModuleType) and hasattr(torch, n)
              and n not in ("annotations", "TYPE_CHECKING")]
    assert sorted(set(public) - set(npgrad.__all__)) == []
