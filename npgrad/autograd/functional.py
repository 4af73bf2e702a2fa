"""Higher-level differentiation of whole functions: vjp, jvp, jacobian, hessian, vhp, hvp.

Note [Functional API conventions]
Every function here takes ``func`` and ``inputs`` (a Tensor or a tuple of
Tensors) and answers in the shape the inputs and outputs came in: a single
Tensor in gives a single Tensor out, a tuple gives a tuple (jacobian and
hessian nest two levels: outputs x inputs, inputs x inputs).  Inputs are
always replaced by fresh tensor objects before ``func`` runs, so gradients
are taken with respect to exactly the given arguments even if ``func`` also
captured the originals.  Results are detached unless ``create_graph=True``.
Reverse mode only: ``jvp`` and ``hvp`` use the double-backward trick (the
gradient of a vjp with respect to its cotangent is a jvp), as torch does.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import _mode
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tensor_type() -> type:
    from .._tensor import Tensor

    return Tensor


def _tupled(value: Any, arg_name: str, fn_name: str) -> tuple:
    """``(was_tuple, tuple_of_tensors)``, with torch's error for anything else."""
    Tensor = _tensor_type()
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return was_tuple, items


def _untupled(result: Any, was_tuple: Any) -> Any:
    """Undo ``_tupled``: one flag for flat results, a pair (outer, inner) for nested ones."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for ``tensors``: differentiable aliases or detached copies."""
    from .._forward import has_tangent

    fresh = []
    for t in tensors:
        if create_graph and t.requires_grad:
            fresh.append(t.view(t.shape))  # keeps the path back to the caller's graph
        elif has_tangent(t):  # a dual input (forward-over-reverse): keep its tangent
            fresh.append(t.view(t.shape).requires_grad_(need_graph))
        else:
            fresh.append(t.detach().requires_grad_(need_graph))
    return tuple(fresh)


def _finish(tensors: Any, create_graph: bool) -> Any:
    """Detach results (recursively through nested tuples) unless a graph was asked for."""
    Tensor = _tensor_type()
    if isinstance(tensors, Tensor) or tensors is None:
        if create_graph or tensors is None:
            return tensors
        return tensors.detach()
    return tuple(_finish(t, create_graph) for t in tensors)


def _check_v(v: tuple, like: tuple, like_is_tuple: bool) -> None:
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


def _strict_check(tensors: tuple, kind: str, strict: bool) -> None:
    """In strict mode, refuse results that cannot depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
          create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """``autograd.grad`` that skips outputs without grad and answers None for unused inputs."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept),
                retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


_ZERO_FILL_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_none(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                    stage: str) -> tuple:
    """Replace None gradients by zeros shaped like ``refs`` (or raise, in strict mode)."""
    from .._creation import zeros_like

    result = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_ERRORS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        result.append(g)
    return tuple(result)


def _prepare_v(v: Any, like: tuple, like_is_tuple: bool, fn_name: str, create_graph: bool,
               none_msg: str) -> tuple | None:
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _tupled(v, "v", fn_name)
    v = _fresh(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


_V_NONE_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function "
                     "is a single Tensor with a single element.")


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> import npgrad
    >>> from npgrad.autograd.functional import vjp
    >>> vjp(lambda x: x ** 2, npgrad.tensor([1., 2.]), npgrad.ones(2))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        outputs_tuple, outputs = _tupled(outputs, "outputs of the user-provided function", "vjp")
        _strict_check(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, outputs_tuple, "vjp", create_graph,
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
    with set_grad_enabled(create_graph or _mode.is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (_untupled(_finish(outputs, create_graph), outputs_tuple),
            _untupled(_finish(result, create_graph), inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    >>> import npgrad
    >>> from npgrad.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, npgrad.tensor([1., 2.]), npgrad.ones(2))[1]
    tensor([2., 4.])
    """
    from .._creation import zeros_like

    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_tuple, "jvp", create_graph,
                       "The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.")
        outputs = func(*inputs)
        outputs_tuple, outputs = _tupled(outputs, "outputs of the user-provided function", "jvp")
        _strict_check(outputs, "outputs", strict)
        # vjp(u) = u^T J is linear in u, so differentiating it with respect to u in
        # the direction v gives J v; the value of u itself never matters.
        cotangents = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        vjps = _grad(outputs, inputs, cotangents, create_graph=True)
        _strict_check(vjps, "grad_inputs", strict)
    with set_grad_enabled(True) if create_graph else _NullContext():
        grads = _grad(vjps, cotangents, v, create_graph=create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "back_trick")
    return (_untupled(_finish(outputs, create_graph), outputs_tuple),
            _untupled(_finish(result, create_graph), outputs_tuple))


class _NullContext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``out_i.shape + in_j.shape``.

    >>> import npgrad
    >>> from npgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, npgrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward_mode(func, inputs, strict, vectorize)
    from .._creation import zeros_like
    from .._ops.shape import stack

    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        outputs_tuple, outputs = _tupled(outputs, "outputs of the user-provided function",
                                         "jacobian")
        _strict_check(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            result = _finish(_jacobian_vectorized(outputs, inputs, create_graph), create_graph)
            return _untupled(result, (outputs_tuple, inputs_tuple))
        rows = []
        for i, out in enumerate(outputs):
            # One backward per output element: row j of out's Jacobian, per input.
            per_input: list = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                grads = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True.")
                    per_input[k].append(g)
            rows.append(tuple(
                _stack_rows(stack, per_input[k], out.shape + inp.shape, inp)
                for k, inp in enumerate(inputs)))
        result = _finish(tuple(rows), create_graph)
    return _untupled(result, (outputs_tuple, inputs_tuple))


def _jacobian_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """``jacobian(vectorize=True)``: one batched vjp per output (``is_grads_batched=True``),
    the batch being the one-hot grad_outputs of all its elements."""
    from .._creation import eye, zeros
    from . import grad

    rows = []
    for out in outputs:
        n = out.nelement()
        shapes = [tuple(out.shape) + tuple(inp.shape) for inp in inputs]
        if n == 0 or not out.requires_grad:
            rows.append(tuple(zeros(shape, dtype=inp.dtype) for shape, inp in zip(shapes, inputs)))
            continue
        basis = eye(n, dtype=out.dtype).view((n,) + tuple(out.shape))
        grads = grad((out,), inputs, (basis,), retain_graph=True, create_graph=create_graph,
                     allow_unused=True, is_grads_batched=True)
        rows.append(tuple(zeros(shape, dtype=inp.dtype) if g is None else g.view(shape)
                          for g, shape, inp in zip(grads, shapes, inputs)))
    return tuple(rows)


def _jacobian_forward_mode(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    """``jacobian(strategy="forward-mode")``: one tangent per input element, column by column.

    torch vmaps the columns and so requires ``vectorize=True``; npgrad has no vmap
    and computes the same columns in a loop, keeping torch's argument checks.
    """
    from .._creation import zeros, zeros_like
    from .._ops.shape import stack
    from . import forward_ad as fwad

    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
            'not supported together (yet). Please either set `strict=False` or '
            '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    inputs_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    columns: list = [[] for _ in inputs]  # per input: per element, the output tangents
    outputs_tuple, outputs = False, ()
    for k, inp in enumerate(inputs):
        for j in range(inp.nelement()):
            basis = zeros_like(inp)
            basis.view(-1)[j] = 1
            with fwad.dual_level():
                duals = tuple(fwad.make_dual(x, basis if i == k else zeros_like(x))
                              for i, x in enumerate(inputs))
                outputs_tuple, outputs = _tupled(func(*duals), "outputs", "jacobian")
                unpacked = [fwad.unpack_dual(o) for o in outputs]
                outputs = tuple(u.primal for u in unpacked)
                columns[k].append(tuple(zeros_like(u.primal) if u.tangent is None else u.tangent
                                        for u in unpacked))
    rows = []
    for i, out in enumerate(outputs):
        per_input = []
        for k, inp in enumerate(inputs):
            shape = tuple(out.shape) + tuple(inp.shape)
            if not columns[k]:
                per_input.append(zeros(shape, dtype=out.dtype))
                continue
            # column j is d out / d inp[j]: stack them last, then lay them out as inp's shape
            cols = stack([c[i] for c in columns[k]], -1)
            per_input.append(cols.reshape(shape))
        rows.append([t.detach() for t in per_input])
    # torch returns lists here (tuples in reverse mode)
    return _untupled(rows, (outputs_tuple, inputs_tuple))


def _stack_rows(stack: Callable, rows: list, shape: tuple, like: Any) -> Any:
    if not rows:  # an output with no elements
        from .._creation import zeros

        return zeros(shape, dtype=like.dtype)
    return stack(rows, 0).view(shape)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of scalar ``func`` at ``inputs`` (nested tuples for tuple inputs).

    >>> import npgrad
    >>> from npgrad.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), npgrad.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    Tensor = _tensor_type()
    inputs_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp: Any) -> Any:
        out = func(*inp)
        out_tuple, t_out = _tupled(out, "outputs of the user-provided function", "hessian")
        _strict_check(t_out, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient_func(*inp: Any) -> Any:
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untupled(res, (inputs_tuple, inputs_tuple))


def _scalar_output(outputs: tuple, outputs_tuple: bool, fn_name: str) -> None:
    Tensor = _tensor_type()
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def _gradient_of_scalar(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool,
                        name: str) -> tuple:
    """vhp's and hvp's first half (under enable_grad): checked inputs and ``v``, the scalar
    output and its gradient, kept differentiable for the second backward."""
    inputs_tuple, inputs = _tupled(inputs, "inputs", name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, inputs_tuple, name, create_graph, _V_NONE_FOR_INPUT)
    outputs = func(*inputs)
    outputs_tuple, outputs = _tupled(outputs, "outputs of the user-provided function", name)
    _strict_check(outputs, "outputs", strict)
    _scalar_output(outputs, outputs_tuple, name)
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_check(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs, jac


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T H)`` for a scalar ``func``.

    >>> import npgrad
    >>> from npgrad.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), npgrad.tensor([1., 2.]), npgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(create_graph or _mode.is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back")
    return (_untupled(_finish(outputs, create_graph), outputs_tuple),
            _untupled(_finish(result, create_graph), inputs_tuple))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), H v)`` for a scalar ``func``, by the double-backward trick.

    >>> import npgrad
    >>> from npgrad.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), npgrad.tensor([1., 2.]), npgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    from .._creation import zeros_like

    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "hvp")
        # u^T H is linear in u: its derivative with respect to u, along v, is H v.
        cotangents = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, cotangents, create_graph=True)
        _strict_check(jac, "hessian", strict)
    with set_grad_enabled(create_graph or _mode.is_grad_enabled()):
        grads = _grad(double_back, cotangents, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back_trick")
    return (_untupled(_finish(outputs, create_graph), outputs_tuple),
            _untupled(_finish(result, create_graph), inputs_tuple))
