"""The module layers point one way: no import cycle among npgrad's modules (issue 11).

Note [Tensor base and Tensor] in npgrad._tensor_base says how the circle between the
Tensor class and the op layer is cut; these tests keep it cut.  Imports under
``if TYPE_CHECKING:`` are for type checkers only and never run, so they are not edges.
"""
from __future__ import annotations

import ast
import pathlib

import npgrad

PACKAGE = pathlib.Path(npgrad.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_statements(body: list) -> list:
    """The module-level statements that run at import (TYPE_CHECKING-only blocks skipped)."""
    out = []
    for node in body:
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if test == "TYPE_CHECKING":
                out += _runtime_statements(node.orelse)
                continue
            if test == "not TYPE_CHECKING":
                out += _runtime_statements(node.body)
                continue
            out += _runtime_statements(node.body) + _runtime_statements(node.orelse)
        elif isinstance(node, ast.Try):
            out += _runtime_statements(node.body)
            for h in node.handlers:
                out += _runtime_statements(h.body)
            out += _runtime_statements(node.orelse) + _runtime_statements(node.finalbody)
        else:
            out.append(node)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the npgrad modules it imports at module level."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for mod, path in paths.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _runtime_statements(ast.parse(path.read_text()).body):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    target = ".".join(parts + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in paths:
                        graph[mod].add(sub)
                    elif target in paths:
                        graph[mod].add(target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in paths:
                        graph[mod].add(alias.name)
        graph[mod].discard(mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_npgrad_modules() -> None:
    assert cycles(import_graph()) == []


def test_the_lower_layers_do_not_import_the_tensor_class() -> None:
    graph = import_graph()
    lower = [m for m in graph if m.startswith("npgrad._ops.") or m in (
        "npgrad._tensor_base", "npgrad.autograd.graph", "npgrad._creation", "npgrad._random",
        "npgrad._sampling", "npgrad._forward", "npgrad._mode", "npgrad._dtype")]
    assert len(lower) > 20
    offenders = {m: sorted(graph[m] & {"npgrad._tensor", "npgrad._sparse_tensor"}) for m in lower}
    assert {m: v for m, v in offenders.items() if v} == {}


def test_every_tensor_the_lower_layers_build_is_a_full_tensor() -> None:
    from npgrad._tensor_base import TENSOR, TensorBase

    assert TENSOR is npgrad.Tensor and issubclass(npgrad.Tensor, TensorBase)
    x = npgrad.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    made = [x * 2, x + x, npgrad.exp(x), x.sum(), x.t(), x[0], x @ x, npgrad.relu(x),
            npgrad.zeros(2), npgrad.randn(2), x.detach(), x.clone(), x.softmax(0)]
    with npgrad.no_grad():
        made += [x * 2, x.mean(1)]
    with npgrad.inference_mode():
        made += [x + 1]
    x.sum().backward()
    made.append(x.grad)
    assert [type(t) for t in made] == [npgrad.Tensor] * len(made)
    s = x.detach().to_sparse()
    assert type(s).__name__ == "SparseTensor" and isinstance(s, npgrad.Tensor)
    assert type(s.coalesce()) is type(s)
