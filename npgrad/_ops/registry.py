"""The op registry: an op as one entry of data, and the one ``apply`` that runs every entry.

Note [An op is an entry]
An entry says everything about one op, in one block, the way PyTorch's
``derivatives.yaml`` does: its torch signature (the arguments its parser
accepts, and so its TypeErrors), the exact ``grad_fn`` name, the NumPy
forward, what the node saves, and its gradient rule written in npgrad's own
ops (so the rule is itself differentiable, and higher-order gradients come for
free).  The entry *builds* the op's node class from that data: one class per
grad_fn name, defined nowhere else.  Public functions and Tensor methods stay
explicit one-liners over the entry (``def exp(input): return EXP(input)``),
which grep, IDEs and type checkers see.

``Pointwise`` is the first kind of entry: a one-input elementwise op.  Its
Jacobian is diagonal, so one rule serves both modes: ``derivative(grad,
*saved)`` is the vector-Jacobian product in backward and, applied to a
tangent, the Jacobian-vector product in forward mode (Note [Tangents
computed at once]).

Note [Tangents computed at once]
An entry knows all of its op's parameters before the output exists, so the
output's tangent is computed in ``apply`` itself, from the input's tangent and
the values the rule reads, given to the rule directly: no node is built for a
tangent alone, nothing is packed by ``saved_tensors_hooks`` for it (as in
torch, which computes tangents eagerly), and the deferred machinery of
Note [When a tangent is computed] (npgrad._forward) is not involved.  The rule
runs as PendingJvp runs one: with no dual level (a rule's own ops carry no
tangents) and under the op's grad mode.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import copy

import numpy as np

from .. import _bfloat16, _dtype
from .._forward import FW, has_tangent, set_tangent, tangent_of
from .._mode import _tls, INFERENCE, RECORDING
from .._tensor import Tensor, edge_of, wrap, wrap_result
from ..autograd.forward_rules import elementwise_jvp
from .checks import not_implemented_for
from .signature import Overloads, signature
from ._core import Node, SavedTensor, UnaryNode, binary_arrays, binary_compute, saved

ndarray = np.ndarray
_new = object.__new__
_F = TypeVar("_F", bound=Callable[..., Any])

# Every entry, by grad_fn name (one op's overloads are entries of their own): what the
# coverage and signature tests walk.
REGISTRY: dict[str, Any] = {}

_SAVES = {"": (False, False), "self": (True, False), "result": (False, True)}
_HALF = np.dtype(np.float16)

# Note [Half precision computes in float32]
# torch's CPU kernels compute float16 and bfloat16 in float32 ("opmath") and round the
# result once.  NumPy's own float16 loops do the same for a single ufunc, but a forward made
# of several (sigmoid, sinc, logit) would round after each step, so an entry computes both
# half types on the float32 upcast; float64 and float32 run as they are.


class PointwiseEntryNode(UnaryNode):
    """Base of the node classes that ``Pointwise`` entries build: backward is the entry's rule."""

    __slots__ = ()
    entry: Pointwise  # the class's entry, set when the entry builds the class
    jvp = elementwise_jvp  # used where a node's tangent is asked for (in-place writes)

    def backward(self, grad: Tensor) -> tuple:
        entry = self.entry
        params = [getattr(self, p) for p in entry.keeps] if entry.keeps else ()
        if entry.saves == "self":
            return entry.derivative(grad, saved(self, "self_"), *params),
        if entry.saves == "result":
            return entry.derivative(grad, saved(self, "result"), *params),
        return entry.derivative(grad, *params),


class Pointwise:
    """A one-input elementwise op as data (Note [An op is an entry]).

    - ``signature``: torch's Python signature, e.g. ``"exp(Tensor input)"``;
    - ``grad_fn``: the name of the node class the entry builds;
    - ``forward``: the NumPy function, ``forward(data, *params)``;
    - ``saves``: ``"self"`` (the input), ``"result"`` or ``""``;
    - ``derivative``: ``(grad, saved_value, *kept_params) -> grad_input`` in npgrad
      ops (no saved value when ``saves`` is ``""``);
    - ``params``: the names of the op's non-tensor arguments, in order;
    - ``keeps``: those the derivative reads, which the node keeps as attributes of
      the same names (torch's ``grad_fn._saved_eps``); all of them by default;
    - ``tangent``: the forward-mode rule, same form (the derivative by default);
    - ``floating``: integer and bool inputs compute in the default float dtype
      (torch's exp, sin ...), else they keep their dtype;
    - ``warns``: NumPy may warn (overflow, invalid, divide by zero) where torch is
      silent, so the forward runs under ``np.errstate``; False for ops that never
      warn, which skip its cost (about a microsecond);
    - ``own_bfloat16``: the forward computes bfloat16 itself (it must round a
      parameter as torch does), instead of on the float32 upcast;
    - ``refuses``: the dtype kinds (NumPy's letters: ``"b"`` bool, ``"iu"``
      integers) torch has no ``kernel`` for: they raise its NotImplementedError;
    - ``also``: torch's other overloads of the name (another entry runs them),
      which its parser lists when no overload takes the arguments.
    """

    __slots__ = ("name", "signature", "node", "forward", "saves", "derivative", "tangent",
                 "params", "keeps", "floating", "quiet", "own_bfloat16", "kernel", "refuses",
                 "also")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable, saves: str,
                 derivative: Callable, tangent: Callable | None = None,
                 params: tuple = (), keeps: tuple | None = None, floating: bool = True,
                 warns: bool = True, own_bfloat16: bool = False, kernel: str = "",
                 refuses: str = "", also: tuple = ()) -> None:
        if saves not in _SAVES:
            raise ValueError(f"saves must be one of {sorted(_SAVES)}, not {saves!r}")
        self.name = signature.split("(", 1)[0]
        self.signature = signature
        self.forward = forward
        self.saves = saves
        self.derivative = derivative
        # the forward-mode rule: for a diagonal Jacobian the derivative itself, applied to the
        # input's tangent, unless the entry gives a cheaper or more exact one
        self.tangent = derivative if tangent is None else tangent
        self.params = tuple(params)
        self.keeps = self.params if keeps is None else tuple(keeps)
        self.floating = floating
        self.quiet = warns
        self.own_bfloat16 = own_bfloat16
        self.kernel = kernel
        self.refuses = refuses
        self.also = tuple(also)
        saves_self, saves_result = _SAVES[saves]
        self.node = type(grad_fn, (PointwiseEntryNode,), {
            "__slots__": self.keeps, "entry": self, "saves_self": saves_self,
            "saves_result": saves_result, "__module__": __name__, "__qualname__": grad_fn,
            "__doc__": f"The grad_fn of ``{self.name}``, built from its entry."})
        REGISTRY[grad_fn] = self

    def __repr__(self) -> str:
        return f"<op {self.signature} -> {self.node.__name__}>"

    def compute(self, data: np.ndarray, params: tuple = ()) -> np.ndarray:
        """The forward on an array (Note [Half precision computes in float32])."""
        kind = data.dtype.kind
        forward = self.forward
        if kind in self.refuses:
            not_implemented_for(self.kernel, data.dtype, self.refuses)
        if kind == "V" and not self.own_bfloat16:  # bfloat16: in float32, rounded once
            with np.errstate(all="ignore"):
                return np.asarray(_bfloat16.in_float32(lambda d: forward(d, *params), data))
        if data.dtype == _HALF and not self.own_bfloat16:
            with np.errstate(all="ignore"):
                out = forward(data.astype(np.float32), *params)
            return np.asarray(out).astype(_HALF, copy=False)
        if self.floating and kind != "f":
            data = data.astype(_dtype.get_default_dtype().np_dtype)
        if self.quiet:
            with np.errstate(all="ignore"):
                out = forward(data, *params)
        else:
            out = forward(data, *params)
        return out if type(out) is ndarray else np.asarray(out)

    def __call__(self, input: Tensor, *params: Any) -> Tensor:
        """Run the op (Note [The per-op path] in npgrad._ops._core); ``params`` are the
        values of the entry's ``params``, in order."""
        if type(input) is not Tensor and not isinstance(input, Tensor):
            self.reject((input, *params), {})
        out = self.compute(input._data, params)
        mode = _tls.mode
        if mode == RECORDING and input._requires_grad:
            node: Any = _new(self.node)
            node._init_node((edge_of(input),), ((out.shape, out.dtype),))
            if self.keeps:
                for name, value in zip(self.params, params):
                    if name in self.keeps:
                        setattr(node, name, value)
            res = wrap_result(out, node)
            if FW.active and has_tangent(input):
                # before saving: a saved output keeps the tangent it has when saved
                # (forward over reverse reads it through the node)
                self._give_tangent(input, res, mode, params)
            if self.saves == "self":
                node.self_ = SavedTensor(input)
            elif self.saves == "result":
                node.result = SavedTensor(res, True)
            return res
        res = wrap(out, mode)
        if FW.active and not mode & INFERENCE and has_tangent(input):
            self._give_tangent(input, res, mode, params)
        return res

    def _give_tangent(self, input: Tensor, res: Tensor, mode: int, params: tuple) -> None:
        """Note [Tangents computed at once]."""
        if res._data.dtype.kind not in "fV":
            return
        tangent = tangent_of(input)
        if tangent._data.dtype != input._data.dtype:
            tangent = tangent.to(input.dtype)
        value = input if self.saves == "self" else res
        if self.keeps != self.params:  # the rules read the kept parameters only
            params = tuple(v for n, v in zip(self.params, params) if n in self.keeps)
        FW.active = False
        previous, _tls.mode = _tls.mode, mode
        try:
            out = (self.tangent(tangent, *params) if not self.saves
                   else self.tangent(tangent, value, *params))
        finally:
            FW.active, _tls.mode = True, previous
        if out._data.dtype != res._data.dtype:
            out = out.to(res.dtype)
        set_tangent(res, out)

    def reject(self, args: tuple, kwargs: dict) -> None:
        """Raise torch's TypeError for arguments the signature refuses (off the hot path:
        called only once an argument is not what the op takes)."""
        Overloads.parse([*self.also, self.signature]).check(args, kwargs)
        raise TypeError(f"{self.name}(): unsupported arguments {args!r}")  # the signature binds

    def public(self, fn: _F) -> _F:
        """Decorate the op's public spelling: torch's parser checks its calls (arity and
        keywords included), with the entry's signatures (Note [Signatures as data])."""
        checked: _F = signature(*self.also, self.signature)(fn)  # type: ignore[assignment]
        return checked

    def alias(self, name: str) -> Any:
        """The entry under another of torch's names for the op (``arcsin`` for ``asin``):
        the same op and node, with the alias's name in torch's error texts."""
        spelled = copy.copy(self)
        spelled.name = name
        spelled.signature = name + self.signature[len(self.name):]
        spelled.also = tuple(name + s[len(self.name):] for s in self.also)
        return spelled


# -- two-input elementwise ops --------------------------------------------------------------

_FIELDS = {"self": "self_", "other": "other", "result": "result"}


class PointwiseBinaryEntryNode(Node):
    """Base of the node classes that ``PointwiseBinary`` entries build: one rule per input."""

    __slots__ = ()
    entry: PointwiseBinary
    jvp = elementwise_jvp

    def backward(self, grad: Tensor) -> tuple:
        entry = self.entry
        values = [saved(self, field) for field in entry.fields]
        edges = self.next_functions
        return tuple(rule(grad, *values) if edges[i][0] is not None else None
                     for i, rule in enumerate(entry.derivatives))


class PointwiseBinary:
    """A two-input elementwise op (broadcasting) as data (Note [An op is an entry]).

    ``saves``: which of ``"self"``, ``"other"``, ``"result"`` the node keeps, in the
    order the rules receive them; ``derivatives``: one rule per input,
    ``(grad, *saved) -> grad_input`` (the engine sums a broadcast gradient back to
    the input's shape); ``floating``: integer operands compute in the default float
    dtype; ``float_kernel``: the op refuses integer operands, naming this kernel as
    torch's error does; ``warns`` as for ``Pointwise``.  Both operands must be tensors
    (torch's signature says so).
    """

    __slots__ = ("name", "signature", "node", "forward", "fields", "derivatives", "floating",
                 "float_kernel", "quiet", "also")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable, saves: tuple,
                 derivatives: tuple, floating: bool = False, float_kernel: str | None = None,
                 warns: bool = True) -> None:
        self.name = signature.split("(", 1)[0]
        self.signature = signature
        self.forward = forward
        self.fields = tuple(_FIELDS[s] for s in saves)
        self.derivatives = derivatives
        self.floating = floating
        self.float_kernel = float_kernel
        self.quiet = warns
        self.also: tuple = ()
        self.node = type(grad_fn, (PointwiseBinaryEntryNode,), {
            "__slots__": self.fields, "_saved_fields": self.fields, "entry": self,
            "__module__": __name__, "__qualname__": grad_fn,
            "__doc__": f"The grad_fn of ``{self.name}``, built from its entry."})
        REGISTRY[grad_fn] = self

    def __repr__(self) -> str:
        return f"<op {self.signature} -> {self.node.__name__}>"

    def operands(self, a: Tensor, b: Tensor) -> tuple:
        ad, bd = binary_arrays(a, b)
        kind = ad.dtype.kind
        if self.float_kernel is not None:
            not_implemented_for(self.float_kernel, ad.dtype, "biu")
        if self.floating and kind not in "fV":
            dt = _dtype.get_default_dtype().np_dtype
            ad, bd = ad.astype(dt), bd.astype(dt)
        return ad, bd

    def compute(self, ad: np.ndarray, bd: np.ndarray) -> np.ndarray:
        """The forward on two arrays of the result dtype (Note [Half precision computes in
        float32]; bfloat16 goes to float32 in ``binary_compute``)."""
        if ad.dtype == _HALF:
            return self.compute(ad.astype(np.float32), bd.astype(np.float32)).astype(_HALF)
        if self.quiet:
            with np.errstate(all="ignore"):
                out = binary_compute(self.forward, ad, bd)
        else:
            out = binary_compute(self.forward, ad, bd)
        return out if type(out) is ndarray else np.asarray(out)

    def __call__(self, input: Tensor, other: Tensor) -> Tensor:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            self.reject((input, other), {})
        out = self.compute(*self.operands(input, other))
        mode = _tls.mode
        tangents = FW.active and not mode & INFERENCE and (has_tangent(input)
                                                           or has_tangent(other))
        if mode == RECORDING and (input._requires_grad or other._requires_grad):
            node: Any = _new(self.node)
            node._init_node((edge_of(input), edge_of(other)), ((out.shape, out.dtype),))
            res = wrap_result(out, node)
            if tangents:  # before saving, as in Pointwise.__call__
                self._give_tangent(input, other, res, mode)
            values = {"self_": input, "other": other}
            for field in self.fields:
                setattr(node, field, SavedTensor(res, True) if field == "result"
                        else SavedTensor(values[field]))
            return res
        res = wrap(out, mode)
        if tangents:
            self._give_tangent(input, other, res, mode)
        return res

    def _give_tangent(self, a: Tensor, b: Tensor, res: Tensor, mode: int) -> None:
        """Note [Tangents computed at once]: the sum of each input's diagonal part."""
        if res._data.dtype.kind not in "fV":
            return
        shape = res._data.shape
        by_field = {"self_": a, "other": b, "result": res}
        values = [by_field[f] for f in self.fields]
        FW.active = False
        previous, _tls.mode = _tls.mode, mode
        try:
            total = None
            for x, rule in zip((a, b), self.derivatives):
                if not has_tangent(x):
                    continue
                tangent = tangent_of(x)
                if tangent._data.dtype != x._data.dtype:
                    tangent = tangent.to(x.dtype)
                if tangent._data.shape != shape:
                    tangent = tangent.expand(shape)
                part = rule(tangent, *values)
                total = part if total is None else total + part
        finally:
            FW.active, _tls.mode = True, previous
        if total is None:
            return
        if total._data.dtype != res._data.dtype:
            total = total.to(res.dtype)
        set_tangent(res, total)

    reject = Pointwise.reject
    alias = Pointwise.alias
    public = Pointwise.public
