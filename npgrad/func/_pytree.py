"""Nested Python containers as trees: flatten to leaves, rebuild, and torch's TreeSpec text.

Tuples, lists, dicts and namedtuples are nodes; everything else (tensors, numbers, None) is a
leaf.  ``str(spec)`` is torch's ``TreeSpec`` text, because the transforms quote it in their
error messages (``in_dims has structure TreeSpec(tuple, None, [*,\\n  *]) ...``).
"""
from __future__ import annotations

from typing import Any, Callable


class TreeSpec:
    """The shape of a tree: the node type, its context (dict keys) and the children's specs."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind: Any, context: Any, children: list) -> None:
        self.kind = kind          # None for a leaf
        self.context = context
        self.children = children

    def is_leaf(self) -> bool:
        return self.kind is None

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeSpec) and self.kind is other.kind
                and self.context == other.context and self.children == other.children)

    def __hash__(self) -> int:
        return id(self)

    def _text(self, indent: int) -> str:
        if self.kind is None:
            return "*"
        if _is_namedtuple_type(self.kind):
            name, context = "namedtuple", repr(self.kind)
        else:
            name = self.kind.__name__
            context = "None" if self.context is None else repr(self.context)
        sep = ",\n" + " " * (indent + 2)
        inner = sep.join(c._text(indent + 2) for c in self.children)
        return f"TreeSpec({name}, {context}, [{inner}])"

    def __str__(self) -> str:
        return self._text(0)

    __repr__ = __str__


LEAF = TreeSpec(None, None, [])


def _is_namedtuple_type(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def _is_structseq_type(kind: Any) -> bool:
    """torch's ``return_types`` (npgrad's copies of them): structseqs, nodes as in torch."""
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind,
                                                                          "n_sequence_fields")


def _children(tree: Any) -> tuple[Any, Any, list] | None:
    """(kind, context, children) of a node, or None for a leaf."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind, None, list(tree)
    if isinstance(tree, tuple) and (hasattr(kind, "_fields") or _is_structseq_type(kind)):
        return kind, None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree.keys())
        return kind, keys, [tree[k] for k in keys]
    return None


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    leaves: list = []
    spec = _flatten_into(tree, leaves)
    return leaves, spec


def _flatten_into(tree: Any, leaves: list) -> TreeSpec:
    parts = _children(tree)
    if parts is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = parts
    return TreeSpec(kind, context, [_flatten_into(c, leaves) for c in children])


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    it = iter(leaves)
    return _build(it, spec)


def _build(it: Any, spec: TreeSpec) -> Any:
    if spec.kind is None:
        return next(it)
    children = [_build(it, c) for c in spec.children]
    kind = spec.kind
    if kind is tuple or kind is list:
        return kind(children)
    if _is_namedtuple_type(kind):
        return kind(*children)
    if _is_structseq_type(kind):
        return kind(children)
    return kind(zip(spec.context, children))


def tree_map(fn: Callable, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list | None:
    """``prefix``'s leaves repeated over the subtrees of ``spec`` they stand for.

    ``in_dims=0`` stands for every leaf of the inputs, ``(0, None)`` for every leaf of the
    first and the second argument.  None when ``prefix`` is not a prefix of ``spec``.
    """
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: TreeSpec, out: list) -> bool:
    parts = _children(prefix)
    if parts is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    kind, context, children = parts
    if spec.kind is None or kind is not spec.kind or len(children) != len(spec.children):
        return False
    if context is not None and context != spec.context:
        if set(context) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]
    return all(_broadcast(c, s, out) for c, s in zip(children, spec.children))


def spec_pprint(spec: TreeSpec) -> str:
    """torch's short spelling of a structure: ``(*, [*, {'k': *}])``."""
    if spec.kind is None:
        return "*"
    inner = [spec_pprint(c) for c in spec.children]
    if spec.kind is list:
        return "[" + ", ".join(inner) + "]"
    if isinstance(spec.kind, type) and issubclass(spec.kind, dict):
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(spec.context, inner)) + "}"
    if len(inner) == 1:
        return f"({inner[0]},)"
    return "(" + ", ".join(inner) + ")"
