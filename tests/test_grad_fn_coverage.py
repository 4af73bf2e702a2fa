"""Every grad_fn class npgrad defines is reached by some row of the op table, and each grad_fn
name is one class.

Each row of tests/op_table.py (with the rows of tests/op_rows_*.py) runs once in float64 with
its differentiable inputs requiring grad; the graph of its outputs, and the graph of its input
gradients built with ``create_graph=True`` (where the backward-of-backward nodes live), are
walked through ``next_functions``.  Every node class whose name is a torch grad_fn name
(``...Backward<N>``) must turn up in some walk: a class no row reaches is either an op without
a row (add the row, and it gets gradcheck, gradgradcheck and the torch comparisons) or dead
code.  ``UNREACHABLE`` lists the few classes no torch-compatible float64 row can reach, each
with the reason; the test also fails when one of them becomes reachable, so the list stays true.
"""
from __future__ import annotations

import collections
import importlib
import inspect
import pkgutil
import re
from typing import Any

import numpy as np
import pytest

import npgrad
from npgrad._ops.registry import REGISTRY
from npgrad.autograd.graph import Node

from op_table import ROWS, OpRow

GRAD_FN_NAME = re.compile(r"[A-Z]\w*Backward\d+")

# Node classes no float64 row of the table can reach, and why.  (Every row gets the
# reverse-mode and the forward-mode checks; OpRow has no way to say "torch has neither".)
_SAMPLED = ("a sampler whose every valid parameter leaves its values random, and the op-table "
            "checks do not reseed the generator between the two libraries' calls; "
            "tests/test_registry_samplers.py compares its draws under one seed, its grad_fn, "
            "saved values and zero gradient with torch's, and tests/test_device_sampling.py "
            "its shape, dtype and errors")
_NO_DERIVATIVE = ("torch records the node but defines no derivative in either mode (backward "
                  "and forward AD raise), and every row's checks differentiate; ")
_SPARSE = ("a sparse COO op: sparse tensors carry no forward-mode tangent, and every row gets "
           "the forward-AD checks; tests/test_sparse.py compares it with torch and gradchecks it")
UNREACHABLE: dict[str, str] = {
    "ExponentialBackward0": _SAMPLED,
    "GeometricBackward0": _SAMPLED + " (p must lie in (0, 1))",
    "LogNormalBackward0": _SAMPLED + " (std must be > 0)",
    "CauchyBackward0": _SAMPLED + " (sigma must be > 0)",
    "RandomBackward2": _SAMPLED + " (random_() draws from the dtype's whole integer range)",
    "AcoshBackward1": _NO_DERIVATIVE + "tests/test_ops_special.py checks the errors",
    "AsinhBackward1": _NO_DERIVATIVE + "tests/test_ops_special.py checks the errors",
    "AtanhBackward1": _NO_DERIVATIVE + "tests/test_ops_special.py checks the errors",
    "Unique2Backward0": _NO_DERIVATIVE + "tests/test_ops_sorting.py checks the grad_fn",
    "UniqueDimBackward0": _NO_DERIVATIVE + "tests/test_ops_sorting.py checks unique(dim=)",
    **{name: _SPARSE for name in (
        "CoalesceBackward0", "SparseAddmmBackward0", "SparseCooTensorWithDimsAndTensorsBackward0",
        "SparseSumBackward0", "ToDenseBackward0", "ToSparseBackward0", "ToSparseBackward1",
        "ValuesBackward0")},
    "AsStridedBackward1": ("as_strided_ addresses a storage, and every row gets the vmap checks: "
                           "npgrad's vmap runs by slices, whose storages are the whole batch's, "
                           "so as_strided refuses to run under vmap; "
                           "tests/test_autograd_contract_rest.py compares it with torch, "
                           "forward AD included, and gradchecks it"),
    "CholeskyBackward0": ("torch.cholesky (deprecated for torch.linalg.cholesky, which has rows) "
                          "has no forward-mode rule in torch, and every row gets the forward-AD "
                          "checks; tests/test_linalg.py::test_deprecated_torch_cholesky covers it"),
}


def _npgrad_modules() -> list:
    """Every module of the package (the demo, which needs optional extras, aside)."""
    mods = [npgrad]
    for info in pkgutil.walk_packages(npgrad.__path__, "npgrad."):
        if info.name.startswith(("npgrad.demo", "npgrad.__main__")):
            continue
        mods.append(importlib.import_module(info.name))
    return mods


def _node_classes() -> list:
    """(name, class) of every Node subclass defined in npgrad, bases included."""
    seen: dict[int, tuple] = {}
    for mod in _npgrad_modules():
        for obj in vars(mod).values():
            # (classes the registry builds, twins included, name its module as theirs)
            if (inspect.isclass(obj) and issubclass(obj, Node) and obj is not Node
                    and obj.__module__ in (mod.__name__, "npgrad._ops.registry")):
                seen[id(obj)] = (obj.__name__, obj)
    for entry in REGISTRY.values():  # node classes the op registry's entries build
        seen[id(entry.node)] = (entry.node.__name__, entry.node)
    return sorted(seen.values(), key=lambda item: (item[0], item[1].__module__))


def grad_fn_classes() -> dict:
    """grad_fn name -> class, for the classes named as torch names a grad_fn."""
    return {name: cls for name, cls in _node_classes() if GRAD_FN_NAME.fullmatch(name)}


def _walk(roots: list, found: set) -> None:
    stack = [r for r in roots if r is not None]
    seen: set = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.add(type(node).__name__)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)


def _as_tuple(out: Any) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def reached_by(row: OpRow) -> set:
    """The node class names in the graphs of one run of ``row`` and of its input gradients."""
    found: set = set()
    tensors = [npgrad.tensor(a, requires_grad=r) for a, r in zip(row.arrays(np.float64), row.rg)]
    outs = [o for o in _as_tuple(row.fn(npgrad, *tensors)) if isinstance(o, npgrad.Tensor)]
    _walk([o.grad_fn for o in outs], found)
    diff = [o for o in outs if o.requires_grad and o.grad_fn is not None]
    leaves = [t for t in tensors if t.requires_grad]
    if not diff or not leaves:
        return found
    try:
        # upstream gradients that require grad, as in gradgradcheck: every backward step is
        # then recorded, also those that read nothing but the gradient
        upstream = [npgrad.ones_like(o).requires_grad_() for o in diff]
        grads = npgrad.autograd.grad(diff, leaves, upstream, create_graph=True, allow_unused=True)
    except RuntimeError:
        if row.torch_backward and not row.no_gradcheck:
            raise
        return found  # a row whose op has no derivative (its backward raises, as torch's)
    _walk([g.grad_fn for g in grads if g is not None], found)
    return found


@pytest.fixture(scope="module")
def reached() -> dict:
    """grad_fn name -> the rows reaching it."""
    by_name: dict = collections.defaultdict(list)
    for row in ROWS:
        for name in reached_by(row):
            by_name[name].append(row.name)
    return by_name


def test_one_class_per_grad_fn_name() -> None:
    """A grad_fn name (``CloneBackward0``, ``NotImplemented``, ...) is one class, not one per
    module that records it."""
    modules = collections.defaultdict(list)
    for name, cls in _node_classes():
        if not name.startswith("_"):
            modules[name].append(cls.__module__)
    assert {name: mods for name, mods in modules.items() if len(mods) > 1} == {}


def test_every_grad_fn_class_is_reached_by_a_row(reached: dict) -> None:
    classes = grad_fn_classes()
    missing = sorted(f"{name} ({classes[name].__module__})" for name in classes
                     if name not in reached and name not in UNREACHABLE)
    assert missing == []


def test_the_unreachable_list_is_true(reached: dict) -> None:
    classes = grad_fn_classes()
    assert sorted(n for n in UNREACHABLE if n not in classes) == []  # names that no longer exist
    assert {n: reached[n] for n in UNREACHABLE if n in reached} == {}  # reachable after all


def test_the_walk_sees_chains_and_double_backward_nodes() -> None:
    """The walk itself: torch's matmul chain below the outermost node, and the
    backward-of-backward nodes that only the gradient's graph holds."""
    row = OpRow("probe", lambda m, a, b: (a @ b)[0], ((5, 2, 3), (3, 4)), "probe")
    found = reached_by(row)
    assert {"SelectBackward0", "UnsafeViewBackward0", "MmBackward0", "ViewBackward0",
            "AccumulateGrad"} <= found
    # d(a[0])/da is a SelectBackwardBackward0 in the gradient's graph
    assert "SelectBackwardBackward0" in found
