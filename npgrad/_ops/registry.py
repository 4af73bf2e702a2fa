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
tangent alone, nothing is packed by ``saved_tensors_hooks`` for it, and
nothing waits to be computed later (as in torch, which computes tangents
eagerly: Note [Tangents computed eagerly] in npgrad._forward).  The rule runs
with no dual level (a rule's own ops carry no tangents) and under the op's
grad mode, so a tangent of a recorded op is itself recorded (reverse over
forward).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import copy
import operator

import numpy as np

from .. import _bfloat16, _dtype
from .._forward import FW, has_tangent, set_tangent, tangent_of
from .._mode import _tls, INFERENCE, RECORDING
from .. import _tensor_base
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import make_tensor, wrap, wrap_result
from ..autograd.graph import SECOND_BACKWARD_MSG, edge_of
from .._tensor_base import INFERENCE_COUNTER, TensorExtra, version_counter
from ._shape_util import broadcast_shapes
from .checks import forward_ad_missing, not_implemented_for
from . import signature as _signature
from .signature import Overloads, signature
from .._vmap_mode import NOT_BATCHED
from ._core import (Node, SavedTensor, UnaryNode, binary_arrays, binary_compute, binary_op,
                    float_arrays, save_value, saved)
from ._core import ViewInfo, mark_view

ndarray = np.ndarray
_new = object.__new__
_F = TypeVar("_F", bound=Callable[..., Any])

# Every entry, by grad_fn name (one op's overloads are entries of their own): what the
# coverage and signature tests walk.
REGISTRY: dict[str, Any] = {}

# Note [Sparse inputs of elementwise entries]: a sparse COO tensor given to a one-input
# entry is computed on its values by npgrad._ops.sparse, which binds ``sparse_unary`` on
# import.  Only the subclass branch of ``Pointwise.__call__`` asks, so dense tensors pay
# nothing for it.
sparse_unary: Callable | None = None
sparse_binary: Callable | None = None  # two-input entries: tried once NumPy refused an operand


def _sparse_operands(a: Any, b: Any) -> bool:
    return sparse_binary is not None and any(
        isinstance(x, Tensor) and not isinstance(x._data, np.ndarray) for x in (a, b))

_SAVES = {"": (False, False), "self": (True, False), "result": (False, True)}
_HALF = np.dtype(np.float16)

# Note [Half precision computes in float32]
# torch's CPU kernels compute float16 and bfloat16 in float32 ("opmath") and round the
# result once.  NumPy's own float16 loops do the same for a single ufunc, but a forward made
# of several (sigmoid, sinc, logit) would round after each step, so an entry computes both
# half types on the float32 upcast; float64 and float32 run as they are.


# Note [Complex gradients by conjugation]
# torch's derivative of a holomorphic op is the conjugate Wirtinger one: ``mul``'s gradient
# for ``self`` is ``grad * other.conj()``, ``div``'s ``grad / other.conj()``.  The rules
# write the conjugate with ``conjugate_of``, which is the value itself for real tensors and
# Python numbers: one type test, nothing computed, so real dtypes pay nothing for it.

def conjugate_of(x: Any) -> Any:
    """``x.conj()`` for a complex tensor or Python complex, else ``x`` itself
    (Note [Complex gradients by conjugation])."""
    if isinstance(x, Tensor):
        return x.conj() if x._data.dtype.kind == "c" else x
    return x.conjugate() if type(x) is complex else x


def refuse_complex(error: tuple, d: np.dtype) -> None:
    """Raise an entry's ``complex_error`` for complex dtype ``d``."""
    kind, text = error
    raise kind(text.format(dtype=_dtype.from_np(d).scalar_name))


class PointwiseEntryNode(UnaryNode):
    """Base of the node classes that ``Pointwise`` entries build: backward is the entry's rule."""

    __slots__ = ()
    entry: Pointwise  # the class's entry, set when the entry builds the class

    def backward(self, grad: Tensor) -> tuple:
        entry = self.entry
        if entry.holomorphic and grad._data.dtype.kind == "c":
            return self._conjugated(grad),
        params = [getattr(self, p) for p in entry.keeps] if entry.keeps else ()
        if entry.saves == "self":
            return entry.derivative(grad, saved(self, "self_"), *params),
        if entry.saves == "result":
            return entry.derivative(grad, saved(self, "result"), *params),
        return entry.derivative(grad, *params),

    def _conjugated(self, grad: Tensor) -> Tensor:
        """Note [Holomorphic rules serve complex inputs]."""
        entry = self.entry
        params = [getattr(self, p) for p in entry.keeps] if entry.keeps else ()
        grad = grad.conj()
        if entry.saves == "self":
            out = entry.derivative(grad, saved(self, "self_"), *params)
        elif entry.saves == "result":
            out = entry.derivative(grad, saved(self, "result"), *params)
        else:
            out = entry.derivative(grad, *params)
        return out.conj_physical()


# Note [Holomorphic rules serve complex inputs]
# torch's gradient of a complex input is the conjugate Wirtinger derivative: for a
# holomorphic f, ``grad_input = grad * conj(f'(z))``.  An entry's rule computes the
# product with f'(z), ``rule(g, z) = g * f'(z)``, so ``conj(rule(conj(grad), z))`` is
# exactly torch's gradient: exp, log, sin, sqrt, reciprocal, pow ... are right in
# complex with no rule of their own (torch's derivatives.yaml writes them as
# ``grad * f'(z).conj()``).  Forward mode needs no conjugation at all: a holomorphic
# op's Jacobian-vector product is ``f'(z) * tangent``, the rule applied as it is.  Ops
# that are not holomorphic (abs: a real output of a complex input) set
# ``holomorphic=False`` and write a rule valid for both (``grad * sgn(x)``).
# ``complex_error``: torch's error for ops with no complex kernel, ``(type, text)``.


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
    - ``own_bfloat16``: the forward computes the half types itself (it must round a
      parameter as torch does, or it works in float64 and rounds once), instead of
      on the float32 upcast;
    - ``refuses``: the dtype kinds (NumPy's letters: ``"b"`` bool, ``"iu"``
      integers) torch has no ``kernel`` for: they raise its NotImplementedError;
    - ``also``: torch's other overloads of the name (another entry runs them),
      which its parser lists when no overload takes the arguments;
    - ``holomorphic``: a complex input's gradient is the conjugated rule (Note
      [Holomorphic rules serve complex inputs]); False for a rule that is right in
      complex as written;
    - ``complex_error``: the op has no complex kernel: torch's error as ``(exception
      type, text)``, ``{dtype}`` in the text standing for the ScalarType name (``"frac_cpu"
      not implemented for 'ComplexFloat'``).
    """

    __slots__ = ("name", "signature", "node", "forward", "saves", "derivative", "tangent",
                 "params", "keeps", "floating", "quiet", "own_bfloat16", "kernel", "refuses",
                 "also", "holomorphic", "complex_error")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable, saves: str,
                 derivative: Callable, tangent: Callable | None = None,
                 params: tuple = (), keeps: tuple | None = None, floating: bool = True,
                 warns: bool = True, own_bfloat16: bool = False, kernel: str = "",
                 refuses: str = "", also: tuple = (), holomorphic: bool = True,
                 complex_error: tuple = ()) -> None:
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
        self.holomorphic = holomorphic
        self.complex_error = complex_error
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
        if kind == "c" and self.complex_error:
            refuse_complex(self.complex_error, data.dtype)
        if kind == "V" and not self.own_bfloat16:  # bfloat16: in float32, rounded once
            with np.errstate(all="ignore"):
                return np.asarray(_bfloat16.in_float32(lambda d: forward(d, *params), data))
        if data.dtype == _HALF and not self.own_bfloat16:
            with np.errstate(all="ignore"):
                out = forward(data.astype(np.float32), *params)
            return np.asarray(out).astype(_HALF, copy=False)
        if self.floating and kind not in "fVc":  # ("V": bfloat16 an own forward computes)
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
        if type(input) is not _tensor_base.TENSOR:  # exactly: a subclass may be batched
            if not isinstance(input, Tensor):
                self.reject((input, *params), {})
            if _signature._vmap_dispatch is not None:  # Note [Batched values] (npgrad.func)
                res = _signature._vmap_dispatch(self, self.name, (input, *params), {})
                if res is not NOT_BATCHED:
                    return res  # type: ignore[no-any-return]
            if sparse_unary is not None and not isinstance(input._data, np.ndarray):
                return sparse_unary(self, input, params)  # type: ignore[no-any-return]
        out = self.compute(input._data, params)
        mode = _tls.mode
        if mode == RECORDING and input._requires_grad:
            node: Any = _new(self.node)
            node._init_unary(input, out)
            if self.keeps:
                keeps = self.keeps
                for name, value in zip(self.params, params):
                    if keeps is self.params or name in keeps:
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
        if res._data.dtype.kind not in "fVc":
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

# Note [A binary node saves what its rules read]
# torch saves an operand of a two-input op only when some input whose derivative reads it
# needs a gradient: ``x * y`` with only ``x`` requiring grad keeps ``other`` and not
# ``self`` (``grad_fn._saved_self`` is None), ``x / y`` keeps ``other`` always.  An entry
# says which saved values each rule reads (``reads``), and the node class it builds gets a
# ``save(self, a, b, result)`` written from that data when the class is built, with one
# line per saved value and no loop: ``_core.binary_op`` and the operators' fast paths
# (Note [Operators with their own fast path]) call it on every recorded ``a * b``, so it
# must cost what a hand-written one does (a generated ``save`` is how ``dataclasses``
# writes ``__init__``, for the same reason).


def _save_method(entry: PointwiseBinary, saves: tuple, reads: tuple | None,
                 defaults: tuple) -> Callable:
    """The node's ``save(self, a, b, result)`` (Note [A binary node saves what its rules read])."""
    values = {"self": ("(SavedTensor(a) if isinstance(a, Tensor) else save_value(a))"
                       if entry.scalar_other else "SavedTensor(a)"),
              "other": "save_value(b)" if entry.scalar_other else "SavedTensor(b)",
              "result": "SavedTensor(result, True)"}
    lines = []
    for name, field in zip(saves, entry.fields):
        readers = [i for i in range(2) if reads is None or name in reads[i]]
        if len(readers) == 2:
            lines.append(f"    self.{field} = {values[name]}")
        else:
            # the edges' slots (Note [Edges in the node] in autograd/graph.py)
            need = " or ".join(f"self._fn{i} is not None" for i in readers) or "False"
            lines.append(f"    self.{field} = {values[name]} if {need} else None")
    # kept parameters start at their defaults: the fast path records calls made with them
    namespace: dict = {"SavedTensor": SavedTensor, "save_value": save_value, "Tensor": Tensor}
    for i, (name, default) in enumerate(zip(entry.params, defaults)):
        if name in entry.keeps:
            namespace[f"default_{i}"] = default
            lines.append(f"    self.{name} = default_{i}")
    source = "def save(self, a, b, result):\n" + ("\n".join(lines) or "    pass") + "\n"
    exec(source, namespace)  # noqa: S102 - our own text, built from the entry's data above
    save: Callable = namespace["save"]
    save.__doc__ = f"Save what {entry.name}'s rules read (built from its entry)."
    return save


class PointwiseBinaryEntryNode(Node):
    """Base of the node classes that ``PointwiseBinary`` entries build: one rule per input."""

    __slots__ = ()
    entry: PointwiseBinary

    def backward(self, grad: Tensor) -> tuple:
        entry = self.entry
        args = [saved(self, field) for field in entry.fields]
        if entry.keeps:
            args += [getattr(self, name) for name in entry.keeps]
        first, second = self._fn0, self._fn1  # Note [Edges in the node] in autograd/graph.py
        rule_a, rule_b = entry.derivatives
        return (rule_a(grad, *args) if first is not None else None,
                rule_b(grad, *args) if second is not None else None)

    def save(self, a: Any, b: Any, result: Tensor) -> None:  # replaced per class
        raise NotImplementedError


_NUMBERS = (int, float, complex, bool)


class PointwiseBinary:
    """A two-input elementwise op (broadcasting) as data (Note [An op is an entry]).

    - ``saves``: which of ``"self"``, ``"other"``, ``"result"`` the node keeps, in the
      order the rules receive them;
    - ``derivatives``: one rule per input, ``(grad, *saved, *kept_params) ->
      grad_input`` in npgrad ops (the engine sums a broadcast gradient back to the
      input's shape); for real dtypes also the tangent rule, applied to each input's
      tangent (Note [Complex gradients by conjugation] for complex ones);
    - ``reads``: per input, which saved values its rule reads; a value is saved only
      when an input reading it needs a gradient, else its attribute is None (Note [A
      binary node saves what its rules read]); by default every rule reads all;
    - ``other_name``: torch's name of the second operand, as ``_saved_<name>`` shows
      it (``exponent`` for pow, ``min`` for clamp_min);
    - ``scalar_other``: one operand may be a Python number (torch's ``Scalar other``
      overload with the same grad_fn, or a number first, which torch's parser takes
      as a tensor): it gets no edge and is kept as it is;
    - ``params``: the names of the op's non-tensor arguments after the operands, in
      order, with ``defaults`` their values when not given; the forward takes them
      after the two arrays; ``keeps``: those the rules read, kept on the node under
      the same names (torch's ``grad_fn._saved_alpha``), all of them by default;
    - ``ufunc``: a NumPy ufunc computing the op at the parameters' defaults: such a
      call outside forward AD takes the arithmetic fast path (``_core.binary_op``,
      Note [The per-op path]): NumPy's own half-precision loops, no ``errstate``;
    - ``floating``: integer operands compute in a floating dtype (torch's true
      division: ``float_arrays``, a Python int never wrapped first); ``float_kernel``:
      the op refuses integer operands, naming this kernel as torch's error does;
      ``warns`` as for ``Pointwise``;
    - ``also``: torch's other overloads of the name, listed when none takes the
      arguments.
    """

    __slots__ = ("name", "signature", "node", "forward", "fields", "derivatives", "floating",
                 "float_kernel", "quiet", "also", "scalar_other", "params", "defaults", "keeps",
                 "ufunc", "complex_error")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable, saves: tuple,
                 derivatives: tuple, reads: tuple | None = None, other_name: str = "other",
                 scalar_other: bool = False, params: tuple = (), defaults: tuple = (),
                 keeps: tuple | None = None, ufunc: Any = None, floating: bool = False,
                 float_kernel: str | None = None, warns: bool = True, also: tuple = ()) -> None:
        if len(defaults) != len(params):
            raise ValueError("give every parameter its default")
        self.name = signature.split("(", 1)[0]
        self.signature = signature
        self.forward = forward
        names = {"self": "self_", "other": other_name, "result": "result"}
        self.fields = tuple(names[s] for s in saves)
        self.derivatives = derivatives
        self.scalar_other = scalar_other
        self.params = tuple(params)
        self.defaults = tuple(defaults)
        self.keeps = self.params if keeps is None else tuple(keeps)
        self.ufunc = ufunc
        self.floating = floating
        self.float_kernel = float_kernel
        self.quiet = warns
        self.also = tuple(also)
        self.complex_error: tuple = ()  # as Pointwise's (set by npgrad._ops.complex)
        self.node = type(grad_fn, (PointwiseBinaryEntryNode,), {
            "__slots__": self.fields + self.keeps, "_saved_fields": self.fields,
            "entry": self, "save": _save_method(self, tuple(saves), reads, self.defaults),
            "__module__": __name__, "__qualname__": grad_fn,
            "__doc__": f"The grad_fn of ``{self.name}``, built from its entry."})
        REGISTRY[grad_fn] = self

    def __repr__(self) -> str:
        return f"<op {self.signature} -> {self.node.__name__}>"

    def compute(self, ad: np.ndarray, bd: Any, params: tuple = ()) -> np.ndarray:
        """The forward on the operands of the result dtype (Note [Half precision computes in
        float32]; bfloat16 goes to float32 in ``binary_compute``)."""
        if (ad.dtype if type(ad) is ndarray else bd.dtype) == _HALF:  # (one is an array)
            ad, bd = (x.astype(np.float32) if type(x) is ndarray else x for x in (ad, bd))
            return self.compute(ad, bd, params).astype(_HALF)
        forward = self.forward
        if _bfloat16.any_bf16(ad, bd):  # in float32, rounded once (``binary_compute``)
            with np.errstate(all="ignore"):
                out = binary_compute(forward if not params else
                                     (lambda a, b: forward(a, b, *params)), ad, bd)
            return out if type(out) is ndarray else np.asarray(out)
        try:
            if self.quiet:
                with np.errstate(all="ignore"):
                    out = forward(ad, bd, *params)
            else:
                out = forward(ad, bd, *params)
        except ValueError:  # operands that do not broadcast: torch's error
            broadcast_shapes(np.shape(ad), np.shape(bd))
            raise
        return out if type(out) is ndarray else np.asarray(out)

    def __call__(self, input: Any, other: Any, *params: Any) -> Tensor:
        """Run the op; ``params`` are the values of the entry's ``params``, in order (all
        of them, or none for their defaults)."""
        if not params:
            params = self.defaults
        if self.ufunc is not None and params == self.defaults and not FW.active:
            try:
                return binary_op(self.node, self.ufunc, input, other)
            except TypeError:  # NumPy's refusal of complex operands: torch's error instead
                if self.complex_error:
                    self._refuse_complex(*binary_arrays(input, other))
                raise
            except NotImplementedError:  # Note [Sparse inputs of elementwise entries]
                if _sparse_operands(input, other):
                    return sparse_binary(self, input, other, params)  # type: ignore[misc]
                raise
        input_tensor, other_tensor = isinstance(input, Tensor), isinstance(other, Tensor)
        if not (input_tensor and other_tensor) and not (
                self.scalar_other and (input_tensor or isinstance(input, _NUMBERS))
                and (other_tensor or isinstance(other, _NUMBERS))):  # (torch wraps numbers)
            self.reject((input, other), dict(zip(self.params, params)))
        exact = _tensor_base.TENSOR
        if (type(input) is not exact or type(other) is not exact) \
                and _sparse_operands(input, other):  # Note [Sparse inputs of elementwise entries]
            return sparse_binary(self, input, other, params)  # type: ignore[misc]
        ad, bd = float_arrays(input, other) if self.floating else binary_arrays(input, other)
        if not (input_tensor or other_tensor):  # two numbers: 0-dim arrays, as torch wraps them
            ad, bd = binary_arrays(ad, bd)
        if self.float_kernel is not None:
            not_implemented_for(self.float_kernel, np.result_type(ad, bd), "biu")
        if self.complex_error:
            self._refuse_complex(ad, bd)
        out = self.compute(ad, bd, params)
        mode = _tls.mode
        tangents = FW.active and not mode & INFERENCE and (
            (input_tensor and has_tangent(input)) or (other_tensor and has_tangent(other)))
        if mode == RECORDING and ((input_tensor and input._requires_grad)
                                  or (other_tensor and other._requires_grad)):
            node: Any = _new(self.node)
            node._init_binary(input, other, out)
            res = wrap_result(out, node)
            if tangents:  # before saving, as in Pointwise.__call__
                self._give_tangent(input, other, res, mode, params)
            node.save(input, other, res)
            if self.keeps:
                keeps = self.keeps
                for name, value in zip(self.params, params):
                    if keeps is self.params or name in keeps:
                        setattr(node, name, value)
            return res
        res = wrap(out, mode)
        if tangents:
            self._give_tangent(input, other, res, mode, params)
        return res

    def _refuse_complex(self, ad: Any, bd: Any) -> None:
        """torch's error (``complex_error``) when the operands are complex."""
        dt = np.result_type(ad, bd)
        if dt.kind == "c":
            refuse_complex(self.complex_error, dt)

    def _give_tangent(self, a: Any, b: Any, res: Tensor, mode: int, params: tuple) -> None:
        """Note [Tangents computed at once]: the sum of each input's diagonal part."""
        if res._data.dtype.kind not in "fVc":
            return
        shape = res._data.shape
        by_field = {"self_": a, "result": res}
        args = [by_field.get(f, b) for f in self.fields]
        if self.keeps:
            args += [v for n, v in zip(self.params, params) if n in self.keeps]
        FW.active = False
        previous, _tls.mode = _tls.mode, mode
        try:
            total = None
            for x, rule in zip((a, b), self.derivatives):
                if not isinstance(x, Tensor) or not has_tangent(x):
                    continue
                tangent = tangent_of(x)
                if tangent._data.dtype != x._data.dtype:
                    tangent = tangent.to(x.dtype)
                if tangent._data.shape != shape:
                    tangent = tangent.expand(shape)
                if res._data.dtype.kind == "c":
                    # a rule multiplies by the conjugated derivative (Note [Complex gradients
                    # by conjugation]); a tangent takes the derivative itself
                    part = conjugate_of(rule(conjugate_of(tangent), *args))
                else:
                    part = rule(tangent, *args)
                total = part if total is None else total + part
        finally:
            FW.active, _tls.mode = True, previous
        if total is None:
            return
        if total._data.dtype != res._data.dtype:
            total = total.to(res.dtype)
        set_tangent(res, total)

    def reject(self, args: tuple, kwargs: dict) -> None:
        """torch's TypeError for arguments the signatures refuse (as ``Pointwise.reject``)."""
        Overloads.parse([*self.also, self.signature]).check(args, kwargs)
        raise TypeError(f"{self.name}(): unsupported arguments {args!r}")  # the signature binds

    alias = Pointwise.alias
    public = Pointwise.public


# -- the general kind: several inputs, parameters, shapes --------------------------------------

# Note [The general entry kind]
# Most ops are not elementwise: a reduction's backward needs the input's shape and the
# dims it reduced, ``max(dim)`` saves the indices it returns, ``var_mean`` has two
# outputs, ``dist`` two inputs.  ``General`` is derivatives.yaml's entry for such an op,
# one per overload (one grad_fn name):
#   - ``inputs``: the tensor arguments, by torch's names (``self``, ``other``, ``x1``);
#   - ``params``: the non-tensor arguments the forward takes after them, in order;
#   - ``keeps``: what the node keeps besides tensors, by torch's names, so that they are
#     its ``_saved_<name>`` attributes: parameters (``dim``, ``keepdim``), or an input's
#     ``<input>_sym_sizes`` / ``<input>_sym_numel``, read from its array, or
#     ``<input>_sym_strides`` (in elements; ``()`` when that input needs no gradient, as
#     torch keeps them); ``hidden``: those of them torch keeps with no ``_saved_`` getter
#     (Note [Kept values read as torch's]);
#   - ``saves``: the tensors it saves: inputs by name, ``result`` (``result0``,
#     ``result1`` ... with several outputs, or torch's names for them given as
#     ``results``: aminmax's ``min`` and ``max``), or an extra output (``indices``);
#     as torch's generated nodes, a tensor that one rule alone reads is saved only when
#     that rule's input needs a gradient (``mm`` of a leaf by a constant keeps ``mat2``
#     and not ``self``, whose ``_saved_self`` is None); one that several rules read is
#     saved always;
#   - ``derivatives``: one rule per differentiable input, a function whose *parameter
#     names* say what it reads, as a derivatives.yaml formula names ``grad``, ``self``,
#     ``result`` and ``dim``: ``grad`` (``grads`` for an op of several outputs: one
#     gradient or None per output), saved tensors, kept values;
#   - ``tangent``: the forward-mode rule, named the same way, with ``<input>_t`` for each
#     input's tangent (zeros where an input has none) and the primal inputs and result
#     available whether saved or not; it returns one tangent per differentiable output.
# Reading the rule's parameter names once, when the entry is built, keeps each rule a
# plain lambda over exactly what it uses, with nothing positional to get out of order.
# Tangents are computed at once (Note [Tangents computed at once]): no node is built for
# a tangent alone.
#
# torch prints a saved ``int64_t`` dim through an unsigned conversion: a negative dim as
# given, ``x.sum(-1).grad_fn._saved_dim``, reads ``(18446744073709551615,)``.  A kept
# value is stored as the op was called, and ``_saved_dim`` shows it as torch does.

_UINT64 = (1 << 64) - 1


def _as_torch_reads(value: Any) -> Any:
    """A kept argument as torch's getter gives it: a negative int64 reads unsigned, a list of
    them as a tuple (used by the General and the View kinds alike)."""
    if type(value) is int:
        return value & _UINT64 if value < 0 else value
    if type(value) is tuple or type(value) is list:
        return tuple(_as_torch_reads(v) for v in value)
    return value


# Note [Kept values read as torch's]
# Every value a General node keeps is shown as ``grad_fn._saved_<name>`` the way torch's
# getter shows it (``_as_torch_reads``: a negative int64 reads unsigned, a list as a
# tuple), whatever its name: ``dim``, ``dims``, ``shifts``, ``diagonal``, ``offset`` ...
# A kept torch ``Scalar`` (``scalars``: addmm's ``alpha``, ``beta``) reads as it was given,
# a negative one included, as torch's Scalar getter shows it.
# A value torch's node keeps without a getter (``cat``'s sizes of each input, which torch
# saves as ``tensors_args_sizes_symint`` and shows under no name) is ``hidden``: kept
# for the rule, with no ``_saved_`` attribute, so ``dir(grad_fn)`` lists what torch's does.
#
# Note [Optional tensor inputs]
# A ``Tensor?`` argument of torch's signature (layer norm's ``weight`` and ``bias``) is an
# input of the entry that may be None: its edge is empty, it is saved as None (as torch's
# ``_saved_bias`` reads None), its rule is not run, and a tangent rule reads None for its
# tangent.
#
# Note [A TensorList input]
# ``cat``, ``stack`` and ``block_diag`` take torch's ``TensorList tensors``: any number of
# tensors, one edge each.  Their entry says ``tensor_list=True`` with the one input
# ``tensors``: ``record`` takes the tuple of tensors, the rule for ``tensors`` returns one
# gradient (or None) per tensor, as derivatives.yaml's ``cat_tensors_backward`` does, and
# the tangent rule reads ``tensors_t``, the list of their tangents (zeros where one has
# none).  What the rule needs of each tensor (its size along ``dim``) is a kept parameter,
# computed by the op's function.
#
# Note [The lean record path]
# Most copy and shape ops (clone, flip, repeat, ``to``, tril ...) have one input and one
# output, and are on hot paths (``contiguous``, ``reshape`` of a non-contiguous tensor,
# dtype casts).  For such an entry (``lean``) ``record`` takes the per-op steps (Note
# [The per-op path] in _core.py) in one frame when no tangent can be involved: no tuple
# of outputs, no list of results, no ``any`` over the inputs, only the entry's keep and
# save plans.  Anything else -- several inputs or outputs, a dual level -- takes the
# general path, except that any one-output op run while nothing is recorded (no_grad,
# inference mode) outside a dual level is wrapped at once.


_KEPT_KINDS = {"sizes": 1, "numel": 2, "strides": 3}  # what ``keep_plan`` reads of an input


def _elem_strides(data: np.ndarray) -> tuple:
    """An array's strides in elements, as torch's ``sym_strides()``."""
    size = data.itemsize
    return tuple(s // size for s in data.strides)


def _kept_getter(name: str, slot: str) -> property:
    """``grad_fn._saved_<name>`` of a kept value (Note [Kept values read as torch's])."""
    def get(node: Any) -> Any:
        return _as_torch_reads(getattr(node, slot))

    get.__name__ = "_saved_" + name
    return property(get)


# Note [A saved list of tensors]
# A tensor parameter an entry saves is one tensor (gather's ``index``) or torch's
# ``Tensor?[]`` (advanced indexing's ``indices``: a tensor or None per indexed dim).  The
# list is saved as ``SavedTensorList``, one SavedTensor per tensor: it unpacks (each one
# version-checked) to the tuple torch's ``_saved_indices`` shows, and is freed with the
# graph like any saved tensor, so a second backward raises torch's error.

class SavedTensorList(SavedTensor):
    """A saved ``Tensor?[]`` (Note [A saved list of tensors])."""

    __slots__ = ("_items",)

    def __init__(self, tensors: tuple) -> None:
        self._released = False
        self._unpack_hook = None
        self._is_output = False
        self._items = tuple(None if t is None else SavedTensor(t) for t in tensors)

    def release(self) -> None:
        self._released = True
        self._items = ()

    def unpack(self, node: Node) -> Any:
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        return tuple(None if item is None else item.unpack(node) for item in self._items)


def save_parameter(value: Any) -> SavedTensor | None:
    """What an entry saves of a tensor parameter (Note [A saved list of tensors]); an
    optional one not given is None."""
    if value is None:
        return None
    return SavedTensorList(value) if type(value) is tuple else SavedTensor(value)


def _rule_names(rule: Callable) -> tuple:
    # A plain function's parameter names are its code's first variable names: read
    # there, as inspect.signature costs ~17 us a rule, 6 ms of ``import npgrad``.
    code = getattr(rule, "__code__", None)
    if (code is not None and not hasattr(rule, "__wrapped__")
            and not code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS)):
        return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    import inspect  # partials, wrapped and variadic callables

    return tuple(inspect.signature(rule).parameters)


_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08  # the code flags of *args and **kwargs


class GeneralEntryNode(Node):
    """Base of the node classes that ``General`` entries build: one rule per input."""

    __slots__ = ()
    entry: General

    def backward(self, *grads: Any) -> tuple:
        entry = self.entry
        # every saved tensor is unpacked (and version-checked) first, as torch's nodes
        # do, whichever of them the rules that run read
        values = {name: saved(self, field) for name, field in entry.slots.items()
                  if name not in entry.keeps}
        for name in entry.keeps:
            values[name] = getattr(self, entry.slots[name])
        values["grads" if entry.outputs > 1 else "grad"] = grads if entry.outputs > 1 \
            else grads[0]
        edges = self.next_functions
        if entry.tensor_list or entry.joint:  # one rule, one gradient per tensor or input
            # (Note [A TensorList input], Note [One rule for several inputs])
            rule, names = entry.rules[0]
            values["grad_input_mask"] = tuple(edge is not None for edge, _ in edges)
            found = rule(*[values[n] for n in names])  # type: ignore[misc]  # (given)
            return tuple(None if edge is None else g for (edge, _), g in zip(edges, found))
        return tuple(None if rule is None or edges[i][0] is None
                     else rule(*[values[n] for n in names])
                     for i, (rule, names) in enumerate(entry.rules))


class General:
    """An op with tensor inputs, parameters and kept shapes, as data (Note [The general
    entry kind]).  An example, ``sum`` over dims (torch's ``sum.dim_IntList``, from
    npgrad/_ops/reduction.py), whose forward reads the wrapped ``axes`` and whose node
    keeps ``dim`` as it was given::

        SUM_DIM = General(
            "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, "
            "ScalarType? dtype=None, Tensor out=None)", grad_fn="SumBackward1",
            forward=lambda data, axes, dim, keepdim: np.sum(data, axis=axes,
                                                            keepdims=keepdim),
            params=("axes", "dim", "keepdim"), keeps=("dim", "keepdim", "self_sym_sizes"),
            derivatives={"self": lambda grad, dim, self_sym_sizes:
                         grad_to_input(grad, self_sym_sizes, dim)},
            tangent=lambda self_t, axes, keepdim: self_t.sum(axes, keepdim))

    ``SUM_DIM((x,), (axes, dim, keepdim))`` runs the forward on ``x``'s array and
    records; ``SUM_DIM.record((x,), out, params)`` records arrays that the public
    function computed itself (``forward`` is then None where argument checks and the
    NumPy forward are one piece, or a fast path skips the call).  ``outputs``: how many
    outputs are differentiable (each one an output of the node); ``extra``: names of
    further outputs the forward returns after them (``indices``), plain tensors that may
    be saved.  ``signature`` and ``also`` are torch's overloads, as for ``Pointwise``.
    """

    __slots__ = ("name", "signature", "node", "forward", "inputs", "params", "keeps", "saves",
                 "slots", "rules", "tangent", "tangent_names", "outputs", "results", "extra",
                 "also", "keep_plan", "save_plan", "lean", "tensor_list", "joint")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable | None,
                 derivatives: dict, tangent: Callable | None, inputs: tuple = ("self",),
                 params: tuple = (), keeps: tuple = (), saves: tuple = (), outputs: int = 1,
                 results: tuple = (), extra: tuple = (), also: tuple = (),
                 hidden: tuple = (), tensor_list: bool = False, scalars: tuple = ()) -> None:
        self.name = signature.split("(", 1)[0]
        self.signature = signature
        self.forward = forward
        self.inputs = tuple(inputs)
        self.params = tuple(params)
        self.keeps = tuple(keeps)
        self.saves = tuple(saves)
        self.outputs = outputs
        self.extra = tuple(extra)
        self.also = tuple(also)
        if not results:
            results = (("result",) if outputs == 1
                       else tuple(f"result{i}" for i in range(outputs)))
        self.results = tuple(results)
        derived = {f"{x}_sym_{what}" for x in self.inputs
                   for what in ("sizes", "numel", "strides")}
        for name in self.keeps:
            if name not in self.params and name not in derived:
                raise ValueError(f"{grad_fn}: kept {name!r} is neither a parameter nor an "
                                 "input's sym_sizes / sym_numel / sym_strides")
        for name in self.saves:
            if name not in self.inputs and name not in results and name not in self.extra \
                    and name not in self.params:
                raise ValueError(f"{grad_fn}: saved {name!r} is not an input, an output or a "
                                 "tensor parameter")
        # Note [One rule for several inputs]
        # derivatives.yaml gives some ops one formula for several inputs (``input, weight,
        # bias: convolution_backward(..., grad_input_mask)``): one backward op computing
        # every gradient, recorded as one node.  Such an entry's ``derivatives`` has one key,
        # the tuple of all its inputs; the rule returns one gradient (or None) per input and
        # may read ``grad_input_mask``, which inputs need one.
        joint = [k for k in derivatives if type(k) is tuple]
        self.joint = bool(joint)
        if joint:
            if len(derivatives) != 1 or tuple(joint[0]) != self.inputs:
                raise ValueError(f"{grad_fn}: a rule for several inputs is for all of them")
            derivatives = {self.inputs[0]: derivatives[joint[0]]}
        unknown = set(derivatives) - set(self.inputs)
        if unknown:
            raise ValueError(f"{grad_fn}: derivatives for unknown inputs {sorted(unknown)}")
        # Note [A TensorList input]
        self.tensor_list = tensor_list
        if tensor_list and (len(self.inputs) != 1 or set(self.saves) & set(self.inputs)
                            or any("_sym_" in k for k in self.keeps)):
            raise ValueError(f"{grad_fn}: a TensorList entry has one input, neither saved nor "
                             "measured by sym_sizes")
        self.slots = {name: ("self_" if name == "self" else name)
                      for name in (*self.keeps, *self.saves)}
        # what ``record`` does per kept value and per saved tensor, worked out once:
        # (slot, 0, parameter index) or (slot, 1 | 2 | 3, input index) for sizes | numel |
        # strides; (slot, 0 | 1 | 2, index among the inputs | the outputs | the
        # parameters, readers): a parameter saved is a tensor argument without an edge
        # (gather's ``index``), saved and version-checked as torch saves it; ``readers``:
        # the inputs whose rules read the tensor, one of which must need a gradient for it
        # to be saved (None: saved always)
        self.keep_plan = tuple(
            (self.slots[k], 0, self.params.index(k)) if k in self.params else
            (self.slots[k], _KEPT_KINDS[k.rsplit("_sym_", 1)[1]],
             self.inputs.index(k.rsplit("_sym_", 1)[0])) for k in self.keeps)
        outs = (*self.results, *self.extra)
        readers = {k: tuple(i for i, rule in enumerate(derivatives.get(x) for x in self.inputs)
                            if rule is not None and k in _rule_names(rule))
                   for k in self.saves}
        self.save_plan = tuple(
            ((self.slots[k], 0, self.inputs.index(k)) if k in self.inputs else
             (self.slots[k], 2, self.params.index(k)) if k in self.params else
             (self.slots[k], 1, outs.index(k)))
            # as torch's generated nodes: a tensor that only one rule reads is saved when that
            # input needs a gradient, one that several read always (addcdiv's ``tensor2``)
            + (None if len(self.inputs) == 1 or tensor_list or self.joint
               or len(readers[k]) != 1 else readers[k],) for k in self.saves)
        known = {"grads" if outputs > 1 else "grad", *self.slots}
        if self.joint:
            known.add("grad_input_mask")
        self.rules = []
        for x in self.inputs:
            rule = derivatives.get(x)
            names = () if rule is None else _rule_names(rule)
            missing = [n for n in names if n not in known]
            if missing:
                raise ValueError(f"{grad_fn}: the rule for {x!r} reads {missing}, which the "
                                 "node neither saves nor keeps")
            self.rules.append((rule, names))
        self.tangent = tangent
        self.tangent_names = () if tangent is None else _rule_names(tangent)
        tangent_known = {f"{x}_t" for x in self.inputs} | set(self.inputs) | set(results) \
            | set(self.params) | derived | set(self.extra)
        missing = [n for n in self.tangent_names if n not in tangent_known]
        if missing:
            raise ValueError(f"{grad_fn}: the tangent rule reads unknown {missing}")
        unknown = set(hidden) - set(self.keeps)
        if unknown:
            raise ValueError(f"{grad_fn}: hidden {sorted(unknown)} are not kept values")
        namespace: dict = {
            "__slots__": tuple(self.slots.values()),
            "_saved_fields": tuple(self.slots[n] for n in self.saves), "entry": self,
            "__module__": __name__, "__qualname__": grad_fn,
            "__doc__": f"The grad_fn of ``{self.name}``, built from its entry."}
        for name in self.keeps:  # Note [Kept values read as torch's]
            if name in scalars:  # a torch Scalar (addmm's ``alpha``) reads as it was given
                namespace["_saved_" + name] = property(operator.attrgetter(self.slots[name]))
            elif name not in hidden:
                namespace["_saved_" + name] = _kept_getter(name, self.slots[name])
        self.node = type(grad_fn, (GeneralEntryNode,), namespace)
        for name in hidden:  # the generic getter made from the slot's name goes
            delattr(self.node, "_saved_" + name)
        # Note [The lean record path]
        self.lean = len(self.inputs) == 1 and outputs == 1 and not self.extra \
            and not tensor_list
        REGISTRY[grad_fn] = self

    def __repr__(self) -> str:
        return f"<op {self.signature} -> {self.node.__name__}>"

    def __call__(self, inputs: tuple, params: tuple = ()) -> Any:
        """Run the forward on the inputs' arrays, then record (``record``); only for an
        entry with a ``forward`` of its own."""
        if self.lean:
            return self.record(inputs, self.forward(inputs[0]._data, *params),  # type: ignore[misc]
                               params)
        return self.record(inputs, self.forward(*[x._data for x in inputs], *params),  # type: ignore[misc]
                           params)

    def record(self, inputs: tuple, outs: Any, params: tuple = ()) -> Any:
        """Wrap the forward's arrays ``outs`` (one array, or a tuple of them: the
        differentiable outputs, then the extra ones); record the node when an input
        requires grad, and give the outputs their tangents when an input has one.
        Returns what ``outs`` is: one tensor or a tuple of tensors."""
        if type(outs) is ndarray and not FW.active:  # Note [The lean record path]
            mode = _tls.mode
            if mode != RECORDING:
                return wrap(outs, mode)
            if self.lean:
                # the per-op steps, with the entry's plans
                x = inputs[0]
                if not x._requires_grad:
                    return wrap(outs, mode)
                node: Any = _new(self.node)
                node._init_unary(x, outs)
                result = wrap_result(outs, node)
                for slot, where, i in self.keep_plan:
                    setattr(node, slot, params[i] if where == 0 else
                            x._data.shape if where == 1 else x._data.size if where == 2
                            else _elem_strides(x._data))
                for slot, where, i, _ in self.save_plan:
                    setattr(node, slot, SavedTensor(x) if where == 0 else
                            SavedTensor(result, True) if where == 1 else save_parameter(params[i]))
                return result
            if self.outputs == 1 and not self.extra and not self.tensor_list:
                # several inputs and one output (where, clamp, addcmul): the general path's
                # steps for a single array, in one frame
                for x in inputs:
                    if x is not None and x._requires_grad:
                        break
                else:
                    return wrap(outs, mode)
                node = _new(self.node)
                node._init_node(tuple([(None, 0) if x is None else edge_of(x) for x in inputs]),
                                ((outs.shape, outs.dtype),))
                result = wrap_result(outs, node)
                if self.keep_plan:
                    self._keep(node, inputs, params)
                self._save(node, inputs, (result,), params)
                return result
        single = type(outs) is not tuple
        if single:
            arrays: tuple = (outs if type(outs) is ndarray else np.asarray(outs),)
        else:
            arrays = tuple(a if type(a) is ndarray else np.asarray(a) for a in outs)
        n = self.outputs
        mode = _tls.mode
        if len(inputs) == 1:
            recorded = mode == RECORDING and inputs[0]._requires_grad
        else:  # an optional tensor argument not given is None (Note [Optional tensor inputs])
            recorded = mode == RECORDING and any(x is not None and x._requires_grad
                                                 for x in inputs)
        tangents = FW.active and not mode & INFERENCE and any(
            x is not None and has_tangent(x) for x in inputs)
        if not recorded:
            res = [wrap(a, mode) for a in arrays]
            if tangents:
                self._give_tangents(inputs, res, mode, params)
            return res[0] if single else tuple(res)
        node = _new(self.node)
        node._init_node(tuple([(None, 0) if x is None else edge_of(x) for x in inputs]),
                        tuple([(a.shape, a.dtype) for a in arrays[:n]]))
        res = [wrap_result(a, node, i) for i, a in enumerate(arrays[:n])]
        if len(arrays) > n:
            res += [wrap(a, mode) for a in arrays[n:]]
        self._keep(node, inputs, params)
        if tangents:  # before saving: a saved output keeps the tangent it has when saved
            self._give_tangents(inputs, res, mode, params)
        self._save(node, inputs, res, params)
        return res[0] if single else tuple(res)

    def _keep(self, node: Any, inputs: tuple, params: tuple) -> None:
        """Give a fresh node its kept values (``keep_plan``)."""
        edges = node.next_functions
        for slot, where, i in self.keep_plan:
            setattr(node, slot, params[i] if where == 0 else
                    inputs[i]._data.shape if where == 1 else inputs[i]._data.size if where == 2
                    else _elem_strides(inputs[i]._data) if edges[i][0] is not None else ())

    def _save(self, node: Any, inputs: tuple, res: Any, params: tuple) -> None:
        """Save a fresh node's tensors (``save_plan``): one that a single rule reads only when
        that rule's input needs a gradient, else None."""
        edges = node.next_functions
        for slot, where, i, readers in self.save_plan:
            if readers is not None and edges[readers[0]][0] is None:
                setattr(node, slot, None)  # the input whose rule reads it needs no gradient
                continue
            setattr(node, slot, (None if inputs[i] is None else SavedTensor(inputs[i]))
                    if where == 0 else SavedTensor(res[i], True) if where == 1
                    else save_parameter(params[i]))

    def _kept(self, name: str, inputs: tuple, params: tuple) -> Any:
        if name in self.params:
            return params[self.params.index(name)]
        x, what = name.rsplit("_sym_", 1)
        data = inputs[self.inputs.index(x)]._data
        return data.shape if what == "sizes" else data.size if what == "numel" \
            else _elem_strides(data)

    def _tensors(self, inputs: tuple, res: list) -> dict:
        by_name = ({self.inputs[0]: list(inputs)} if self.tensor_list
                   else dict(zip(self.inputs, inputs)))
        by_name.update(zip(self.results, res))
        by_name.update(zip(self.extra, res[self.outputs:]))
        return by_name

    def _give_tangents(self, inputs: tuple, res: list, mode: int, params: tuple) -> None:
        """Note [Tangents computed at once], for every differentiable output."""
        if self.tangent is None:
            raise forward_ad_missing(self.name)
        outs = res[:self.outputs]
        if all(r._data.dtype.kind not in "fVc" for r in outs):
            return
        values = self._tensors(inputs, res)
        tangents = []
        for x in inputs:
            if x is None:  # an optional tensor not given has no tangent
                t = None
            elif has_tangent(x):
                t = tangent_of(x)
                if t._data.dtype != x._data.dtype:
                    t = t.to(x.dtype)
            else:
                t = wrap(np.zeros_like(x._data), 0)
            tangents.append(t)
        if self.tensor_list:
            values[self.inputs[0] + "_t"] = tangents
        else:
            values.update((name + "_t", t) for name, t in zip(self.inputs, tangents))
        FW.active = False
        previous, _tls.mode = _tls.mode, mode
        try:
            args = [values[n] if n in values else self._kept(n, inputs, params)
                    for n in self.tangent_names]
            found = self.tangent(*args)
        finally:
            FW.active, _tls.mode = True, previous
        found = (found,) if self.outputs == 1 else found
        for r, t in zip(outs, found):
            if t is None or r._data.dtype.kind not in "fVc":
                continue
            if t._data.dtype != r._data.dtype:
                t = t.to(r.dtype)
            set_tangent(r, t)

    reject = Pointwise.reject
    public = Pointwise.public


# -- views: ops whose output is a view of their input ---------------------------------------

# Note [A view is an entry]
# ``View`` is the kind of the ops whose result shares its input's storage: view, reshape
# (when the strides allow), expand, squeeze, unsqueeze, transpose, t, permute, split,
# chunk, unbind.  An entry says what is particular to one op: the NumPy forward (which
# returns a NumPy view of the input's array), the values torch's node keeps, under
# torch's names (``grad_fn._saved_dim``, ``_saved_self_sym_sizes``), and the backward
# rule in npgrad ops, which reads those values.  What makes the result a view is the same
# for every such op and is done once, in ``View.__call__`` (with ``mark_view``): the
# result shares the input's version counter, names the input's root as its ``_base``
# (so ``_is_view()``), remembers whether it was made under no_grad, in inference mode or
# as one of several outputs (``ViewInfo``: torch refuses some in-place writes through
# those), and its node remembers the version it saw, so that an in-place write through
# another view rebuilds its history (Note [Stale view history] in _ops/views.py).  A
# view of an inference tensor is no view (torch tracks none).
#
# The tangent rule is the same for every view: a view's tangent is the same view of its
# input's tangent, i.e. the part of the tangent's storage the view covers
# (``give_view_tangent``), so a write through either is seen by both, as in torch.  It
# is computed at once, with the result (Note [Tangents computed at once]).
#
# The node keeps the arguments as torch keeps them: as the caller gave them (a negative
# dim stays negative; ``narrow`` and ``movedim`` keep what torch computes from them),
# and the backward rules wrap them.  torch's Python getters read a saved int64 as
# unsigned (``unsqueeze(-1).grad_fn._saved_dim`` is 18446744073709551615); the entry's
# getters do the same (``_as_torch_reads``, above), so the attributes read as torch's.


def _kept_property(name: str, index: int) -> property:
    """``grad_fn._saved_<name>``: the input's shape (``index`` -1) or argument ``index``."""
    if index < 0:
        def get(node: Any) -> Any:
            return node.self_sym_sizes
    else:
        def get(node: Any) -> Any:
            return _as_torch_reads(node.args[index])

    get.__name__ = "_saved_" + name
    return property(get)


class ViewEntryNode(Node):
    """Base of the node classes that ``View`` entries build: backward is the entry's rule."""

    __slots__ = ()
    entry: View  # the class's entry, set when the entry builds the class
    args: tuple  # slots of the built class: the call's arguments, and the input's shape
    self_sym_sizes: tuple
    saves_self = False  # no ``_saved_self`` getter (autograd/graph.py)
    saves_result = False
    holds_saved = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The entry gives the class torch's ``_saved_*`` getters itself (one per kept
        # value, as torch names it); the generic ones made from slot names are not wanted.
        pass

    def backward(self, *grads: Any) -> tuple:
        entry = self.entry
        args = self.args
        kept = [self.self_sym_sizes if i < 0 else args[i] for i in entry.kept_index]
        if entry.many:  # an output no gradient reached counts as zeros
            parts = [g if g is not None else wrap(np.zeros(shape, dtype), 0)
                     for g, (shape, dtype) in zip(grads, self._out_meta)]
            return entry.derivative(parts, *kept),
        return entry.derivative(grads[0], *kept),


class View:
    """An op whose output is a view of its input, as data (Note [A view is an entry]).

    - ``signature``: torch's Python signature, e.g. ``"transpose(Tensor input, int64_t
      dim0, int64_t dim1)"``;
    - ``grad_fn``: the name of the node class the entry builds;
    - ``params``: the names of the op's arguments after the tensor, in the order the
      entry is called with them (checked and normalised by the op's function first);
    - ``forward``: ``forward(array, *params)``, a NumPy view of ``array`` (a list of
      views when ``many``);
    - ``keeps``: what the node keeps, by torch's names: any of ``params``, and
      ``"self_sym_sizes"`` (the input's shape); the backward rule receives them in order;
    - ``derivative``: ``(grad, *kept) -> grad_input`` in npgrad ops (``grad`` is the
      list of the outputs' gradients when ``many``);
    - ``many``: the op returns several views sharing one node (split, unbind), output
      ``i`` being the ``i``-th; torch forbids writing into those in place;
    - ``hidden``: kept values torch keeps with no ``_saved_`` getter (as General's).
    """

    __slots__ = ("name", "signature", "node", "forward", "params", "keeps", "derivative",
                 "many", "kept_index", "sizes")

    def __init__(self, signature: str, *, grad_fn: str, forward: Callable, derivative: Callable,
                 params: tuple = (), keeps: tuple = (), many: bool = False,
                 hidden: tuple = ()) -> None:
        self.name = signature.split("(", 1)[0]
        self.signature = signature
        self.forward = forward
        self.derivative = derivative
        self.params = tuple(params)
        self.keeps = tuple(keeps)
        self.many = many
        if set(hidden) - set(self.keeps):
            raise ValueError(f"{grad_fn}: hidden {sorted(set(hidden) - set(self.keeps))} are "
                             "not kept values")
        for name in self.keeps:
            if name != "self_sym_sizes" and name not in self.params:
                raise ValueError(f"{grad_fn} keeps {name!r}, which is not one of its params")
        # The node keeps the call's arguments as one tuple (``args``: one store on the hot
        # path) and the input's shape when the rule reads it (``self_sym_sizes``);
        # ``kept_index`` says where each kept value is (-1: the shape)
        self.kept_index = tuple(-1 if name == "self_sym_sizes" else self.params.index(name)
                                for name in self.keeps)
        self.sizes = "self_sym_sizes" in self.keeps
        body: dict = {"__slots__": ("args", "self_sym_sizes") if self.sizes else ("args",),
                      "entry": self,
                      "__module__": __name__, "__qualname__": grad_fn,
                      "__doc__": f"The grad_fn of ``{self.name}``, built from its entry."}
        for name, index in zip(self.keeps, self.kept_index):
            if name not in hidden:  # Note [Kept values read as torch's]
                body["_saved_" + name] = _kept_property(name, index)
        self.node = type(grad_fn, (ViewEntryNode,), body)
        REGISTRY[grad_fn] = self

    def __repr__(self) -> str:
        return f"<op {self.signature} -> {self.node.__name__}>"

    def twin(self, grad_fn: str) -> type:
        """The node class of the op's in-place form (``t_``'s ``TBackward1``): the same slots,
        getters and rule under torch's other name (Note [In-place view ops])."""
        return type(grad_fn, (self.node,), {
            "__slots__": (), "__module__": self.node.__module__, "__qualname__": grad_fn,
            "__doc__": f"The grad_fn of ``{self.name}_``, the twin of {self.node.__name__}."})

    def _node(self, cls: type, input: Tensor, metas: tuple, params: tuple) -> Any:
        node: Any = _new(cls)
        node._init_node((edge_of(input),), metas)
        node.args = params
        if self.sizes:
            node.self_sym_sizes = input._data.shape
        return node

    def __call__(self, input: Tensor, *params: Any) -> Any:
        """Run the op on checked arguments: the view, its node with its kept values, and the
        view bookkeeping (Note [A view is an entry])."""
        data = input._data
        out = self.forward(data, *params)
        if self.many:
            return self._views(input, out, params)
        vc = input._vc
        if vc is INFERENCE_COUNTER:
            return make_tensor(out, None, False, vc)
        if vc is None:
            vc = version_counter(input)
        mode = _tls.mode
        requires_grad = input._requires_grad
        if mode == RECORDING and requires_grad:
            node: Any = _new(self.node)
            node._init_unary(input, out)
            node._view_version = vc.version  # Note [Stale view history]
            node.args = params
            if self.sizes:
                node.self_sym_sizes = data.shape
            res = make_tensor(out, node, True, vc)
        else:
            node = None
            res = make_tensor(out, None, requires_grad, vc)
        if input._base is None and not FW.active and (node is not None or not requires_grad):
            res._base = input  # all that ``mark_view`` would do here
        else:
            mark_view(res, input, node, mode, vc)
        return res

    def _views(self, input: Tensor, pieces: list, params: tuple) -> tuple:
        """Several views of ``input`` sharing one node whose output ``i`` is ``pieces[i]``."""
        vc = input._vc
        if vc is INFERENCE_COUNTER:
            return tuple(make_tensor(p, None, False, vc) for p in pieces)
        if vc is None:
            vc = version_counter(input)
        mode = _tls.mode
        node: Any = None
        requires_grad = input._requires_grad
        if mode == RECORDING and requires_grad:
            node = _new(self.node)
            node._init_node((edge_of(input),), tuple([(p.shape, p.dtype) for p in pieces]))
            node._view_version = vc.version
            node.args = params
            if self.sizes:
                node.self_sym_sizes = input._data.shape
        outs = []
        version = vc.version
        plain = input._base is None and not FW.active
        no_grad = node is None and requires_grad  # made under no_grad or inference mode
        in_inference = bool(no_grad and mode & INFERENCE)
        for i, piece in enumerate(pieces):
            res = make_tensor(piece, node, requires_grad, vc)
            if node is not None:
                res._output_nr = i
            if plain:  # all that ``mark_view`` would do here
                res._base = input
                extra = res._extra = TensorExtra()
                extra.view_info = ViewInfo(no_grad, True, version, in_inference)
            else:
                mark_view(res, input, node, mode, vc, True)
            outs.append(res)
        return tuple(outs)

    def on_fresh(self, cls: type, input: Tensor, *params: Any) -> Tensor:
        """The op applied to an op's fresh result that no one else holds, recorded as ``cls``
        (a ``twin``) and not as a view: torch's in-place ``squeeze_`` at the end of matmul
        and quantile leaves no view behind, only the result with its new shape."""
        out = self.forward(input._data, *params)
        mode = _tls.mode
        if mode == RECORDING and input._requires_grad:
            res = wrap_result(out, self._node(cls, input, ((out.shape, out.dtype),), params))
        else:
            res = wrap(out, mode)
        if FW.active and not mode & INFERENCE and has_tangent(input):
            tangent = tangent_of(input)
            FW.active = False
            try:
                moved = (self.on_fresh(cls, tangent, *params) if tangent._requires_grad
                         else wrap(self.forward(tangent._data, *params), 0))
            finally:
                FW.active = True
            set_tangent(res, moved)
        return res
