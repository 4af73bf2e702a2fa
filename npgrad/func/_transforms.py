"""torch.func's differentiation transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd and hessian, on npgrad's reverse mode (autograd.grad) and forward mode (forward_ad).

Note [Transform levels on one tape]
functorch gives every transform a level, so that ``grad(grad(f))`` or ``jacrev(jacrev(f))``
differentiate the inner result again.  npgrad has one tape, and the levels are made of it:
a transform hands the function a fresh tensor per differentiated input, which is

* a differentiable alias (``x.view_as(x)``) when ``x`` already requires grad (an outer
  transform, or user autograd, is tracking it), so the inner gradient, taken with respect
  to the alias only, stays connected to the outer level; or
* a new leaf (``x.detach().requires_grad_()``) otherwise.

The inner gradient is built with ``create_graph=True`` exactly when something outside
could differentiate it again: grad mode was on at the call and either an input was tracked
or the function's graph reaches a leaf the transform did not make (a captured parameter);
otherwise results come back detached, as torch's.  Gradients with respect to an alias are
partial derivatives (paths through other uses of the outer tensor do not count), which is
functorch's semantics for captured outer tensors too.

Forward mode has one dual level in npgrad.  ``jvp`` uses it when it is free; inside another
``jvp`` / ``jacfwd`` it computes the same product by the double-vjp identity
(``J v = d/du <J^T u, v>``, two reverse passes), so ``jacfwd(jacfwd(f))`` composes too.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

from .. import _vmap_mode
from .._vmap_mode import VmapFallback
from .._forward import FW
from .._mode import is_grad_enabled
from .._tensor import Tensor
from ..autograd.graph import edge_of
from ..autograd import grad as autograd_grad
from ..autograd.graph import AccumulateGrad
from ..autograd.grad_mode import enable_grad
from ._pytree import TreeSpec, spec_pprint, tree_flatten, tree_unflatten
from . import _batched
from ._batched import BatchedTensor
from ._vmap import vmap


# -- arguments ------------------------------------------------------------------------------

def _check_argnums(argnums: Any, n: int) -> tuple[int, ...] | int:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _one_argnum(argnums, n)
    if not isinstance(argnums, tuple) or not all(isinstance(a, int) for a in argnums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(_one_argnum(a, n) for a in argnums)


def _one_argnum(a: int, n: int) -> int:
    if not -n <= a < n:
        raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return a % n


def _check_tensors(leaves: list) -> None:
    for t in leaves:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")


# id -> weak reference of every leaf a transform made (Note [Transform levels on one tape]):
# a graph reaching only these leaves needs no graph kept for outside differentiation.
_PRIVATE_LEAVES: dict[int, Any] = {}


def _private(t: Tensor) -> Tensor:
    key = id(t)
    def forget(_: Any, key: int = key) -> None:
        _PRIVATE_LEAVES.pop(key, None)

    _PRIVATE_LEAVES[key] = weakref.ref(t, forget)
    return t


def _is_private(t: Tensor) -> bool:
    ref = _PRIVATE_LEAVES.get(id(t))
    return ref is not None and ref() is t


# Note [grad under a batched vmap]
# Inside a vmap that runs on batched values (Note [Batched values] in ``_batched``) the graph
# is made of physical values, all samples at once.  A gradient per sample needs an input per
# sample: the fresh tensor a transform hands the function is the input expanded to every
# running batched level (an unbatched parameter becomes one copy per sample, as a view), and
# the gradient is taken with respect to that expanded view, so sample ``b``'s gradient is
# the slice of the physical gradient at ``b`` -- the per-sample gradients of torch.func,
# from one backward over the batch.  Forward mode has no batched form here: ``jvp`` (and
# ``jacfwd``, ``hessian``, ``linearize``) make the vmap run by slices.

def _batched_levels() -> tuple:
    if not _vmap_mode.VMAP.depth:
        return ()
    return tuple(level for level in _vmap_mode.VMAP.levels if level.batched)


def _plain(t: Any) -> Any:
    """The physical value of a batched tensor (Note [grad under a batched vmap])."""
    return t._value if type(t) is BatchedTensor else t


def _enter_batched(t: Tensor, levels: tuple) -> Tensor:
    value = _plain(t)
    own = t._levels if type(t) is BatchedTensor else ()
    if not own and not value._requires_grad and FW.level < 0 \
            and (value.is_floating_point() or value.is_complex()):
        # an unbatched, untracked input (a model's parameter): the copy per sample is a new
        # leaf over the broadcast array, the same numbers as the expanded view, without
        # an expand recorded on each call (Note [Per-sample parameters, fast] in
        # ``_batching_rules``)
        import numpy as np

        from .._tensor_base import make_tensor

        data = value._data
        sizes = tuple(level.batch_size for level in levels)
        fresh = _private(make_tensor(np.broadcast_to(data, sizes + data.shape), None, True,
                                     None))
        return _batched.make(fresh, levels)
    fresh = value.view_as(value) if value._requires_grad \
        else _private(value.detach().requires_grad_())
    if FW.level >= 0:
        raise VmapFallback("forward-mode AD")
    return _batched.make(_batched.full_physical(_batched.make(fresh, own), levels), levels)


def _enter(t: Tensor) -> Tensor:
    """The tensor the function sees for differentiated input ``t``; Note [Transform levels]."""
    levels = _batched_levels()
    if levels:
        return _enter_batched(t, levels)
    if t._requires_grad:
        return t.view_as(t)  # views keep their base's tangent
    fresh = _private(t.detach().requires_grad_())
    if FW.level >= 0:  # detach drops a tangent: put it back (forward over reverse)
        from ..autograd import forward_ad as fwad

        tangent = fwad.unpack_dual(t).tangent
        if tangent is not None:
            fresh = fwad.make_dual(fresh, tangent)
    level = _vmap_mode.batched_level(t) if _vmap_mode.VMAP.depth else None
    if level is not None:  # still a slice of that vmap (Note [vmap by slices])
        level.add_slice(fresh)
    return fresh


def _reaches_foreign_leaf(outputs: list) -> bool:
    """Does the graph of ``outputs`` reach a leaf requiring grad that no transform made?"""
    seen: set = set()
    stack = []
    for o in outputs:
        o = _plain(o)
        if not isinstance(o, Tensor) or not o._requires_grad:
            continue
        if o._grad_fn is None and o._base is None:
            if not _is_private(o):
                return True
            continue
        stack.append(edge_of(o)[0])
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            if not _is_private(node.variable):
                return True
            continue
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    return False


def _needs_graph(outer_grad: bool, inputs: list, outputs: list) -> bool:
    if FW.level >= 0:  # forward over reverse: tangents ride on the backward's ops
        return True
    if not outer_grad:
        return False
    if any(_plain(t)._requires_grad for t in inputs):
        return True
    return _reaches_foreign_leaf(outputs)


def _exit(x: Any, keep_graph: bool) -> Any:
    if keep_graph or not isinstance(x, Tensor):
        return x
    return x.detach() if _plain(x)._requires_grad else x


def _gradients(outputs: list, inputs: list, cotangents: list | None, create_graph: bool,
               retain_graph: bool) -> list:
    """d outputs / d inputs (zeros where unused), skipping outputs that need no grad."""
    from .._creation import zeros_like

    if any(type(t) is BatchedTensor for t in (*outputs, *inputs)):
        return _batched_gradients(outputs, inputs, cotangents, create_graph, retain_graph)

    pairs = [(o, None if cotangents is None else c)
             for o, c in zip(outputs, cotangents or outputs) if o._requires_grad]
    if not pairs:
        return [zeros_like(t) for t in inputs]
    outs = [p[0] for p in pairs]
    cts = None if cotangents is None else [p[1] for p in pairs]
    grads = autograd_grad(outs, inputs, cts, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=True)
    return [zeros_like(t) if g is None else g for g, t in zip(grads, inputs)]


def _batched_gradients(outputs: list, inputs: list, cotangents: list | None,
                       create_graph: bool, retain_graph: bool) -> list:
    """``_gradients`` on physical values (Note [grad under a batched vmap])."""
    import numpy as np

    from .._creation import zeros_like
    from .._tensor_base import make_tensor

    outs, cts = [], []
    for i, o in enumerate(outputs):
        value = _plain(o)
        if not value._requires_grad:
            continue
        own = o._levels if type(o) is BatchedTensor else ()
        if cotangents is None:  # a fresh array of ones (``ones_like`` costs more calls)
            ct = make_tensor(np.ones(value._data.shape, value._data.dtype), None, False, None)
        else:
            c = cotangents[i]
            c_levels = c._levels if type(c) is BatchedTensor else ()
            if any(level not in own for level in c_levels):
                raise VmapFallback("a cotangent batched where its output is not")
            ct = _batched.full_physical(c, own) if own else _plain(c)
        outs.append(value)
        cts.append(ct)
    values = [_plain(t) for t in inputs]
    if not outs:
        grads: list = [None] * len(values)
    else:
        grads = list(autograd_grad(outs, values, cts, retain_graph=retain_graph,
                                   create_graph=create_graph, allow_unused=True))
    result = []
    for g, t, value in zip(grads, inputs, values):
        own = t._levels if type(t) is BatchedTensor else ()
        result.append(_batched.make(zeros_like(value) if g is None else g, own))
    return result


# -- grad -----------------------------------------------------------------------------------

def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable:
    """``func``'s gradient with respect to ``args[argnums]``, and its value.

    >>> import npgrad
    >>> from npgrad.func import grad_and_value
    >>> grad_and_value(lambda x: (x ** 2).sum())(npgrad.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums, len(args))
        diff = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
        leaves, spec = tree_flatten(diff)
        _check_tensors(leaves)
        outer_grad = is_grad_enabled()
        with enable_grad():
            entered = [_enter(t) for t in leaves]
            new_args = list(args)
            entered_tree = tree_unflatten(entered, spec)
            if isinstance(nums, int):
                new_args[nums] = entered_tree
            else:
                for i, t in zip(nums, entered_tree):
                    new_args[i] = t
            result = func(*new_args, **kwargs)
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                output, aux = result
            else:
                output, aux = result, None
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?")
            if has_aux:
                for a in tree_flatten(aux)[0]:
                    if not isinstance(a, Tensor):
                        raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
            keep = _needs_graph(outer_grad, leaves, [output])
            grads = _gradients([output], entered, None, keep, keep)
        grads = [_exit(g, keep) for g in grads]
        grad_tree = tree_unflatten(grads, spec)
        value = _exit(output, keep)
        if has_aux:
            aux = tree_unflatten([_exit(a, keep) for a in tree_flatten(aux)[0]],
                                 tree_flatten(aux)[1])
            return grad_tree, (value, aux)
        return grad_tree, value

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of scalar ``func`` with respect to ``args[argnums]``.

    >>> import npgrad
    >>> from npgrad.func import grad
    >>> grad(lambda x: (x ** 3).sum())(npgrad.tensor([1., 2.]))
    tensor([ 3., 12.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


# -- vjp ------------------------------------------------------------------------------------

def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``func(*primals)`` and a function giving the vector-Jacobian product for a cotangent.

    >>> import npgrad
    >>> from npgrad.func import vjp
    >>> out, vjp_fn = vjp(lambda x: x ** 2, npgrad.tensor([1., 2.]))
    >>> vjp_fn(npgrad.tensor([1., 1.]))
    (tensor([2., 4.]),)
    """
    return _vjp(func, primals, has_aux)


def _vjp(func: Callable, primals: tuple, has_aux: bool) -> tuple:
    leaves, spec = tree_flatten(primals)
    _check_tensors(leaves)
    outer_grad = is_grad_enabled()
    with enable_grad():
        entered = [_enter(t) for t in leaves]
        result = func(*tree_unflatten(entered, spec))
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            result, aux = result
        flat_out, out_spec = tree_flatten(result)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        keep = _needs_graph(outer_grad, leaves, flat_out)

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None
               ) -> tuple:
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {spec_pprint(ct_spec)}, primal output: "
                f"{spec_pprint(out_spec)}")
        cg = keep if create_graph is None else create_graph
        with enable_grad():
            grads = _gradients(flat_out, entered, flat_ct, cg, retain_graph or cg)
        return tuple(tree_unflatten([_exit(g, cg) for g in grads], spec))

    output = tree_unflatten([_exit(o, keep) for o in flat_out], out_spec)
    if has_aux:
        aux_leaves, aux_spec = tree_flatten(aux)
        return output, vjp_fn, tree_unflatten([_exit(a, keep) for a in aux_leaves], aux_spec)
    return output, vjp_fn


# -- jvp ------------------------------------------------------------------------------------

def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``func(*primals)`` and its Jacobian-vector product with ``tangents``.

    >>> import npgrad
    >>> from npgrad.func import jvp
    >>> jvp(lambda x: x ** 2, (npgrad.tensor([1., 2.]),), (npgrad.tensor([1., 0.]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    prefix = "jvp(f, primals, tangents): "
    if not isinstance(primals, tuple):
        raise RuntimeError(prefix + "Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            prefix + "Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {p_spec} and tangents with structure {t_spec}")
    if not flat_p:
        raise RuntimeError(prefix + "Expected primals to contain at least one Tensor.")
    for role, leaves in (("primals", flat_p), ("tangents", flat_t)):
        for t in leaves:
            if not isinstance(t, Tensor):
                raise RuntimeError(prefix + f"Expected {role} to only contain Tensors, got "
                                   f"{type(t)}")
    if _batched_levels():  # Note [grad under a batched vmap]
        raise VmapFallback("jvp")
    if FW.level >= 0:
        return _jvp_by_double_vjp(func, primals, flat_t, has_aux)
    return _jvp_forward_mode(func, flat_p, flat_t, p_spec, has_aux)


def _jvp_outputs(result: Any, has_aux: bool) -> tuple[list, TreeSpec, Any]:
    prefix = "jvp(f, primals, tangents): "
    aux = None
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(prefix + "output of function f should be a tuple: (output, aux) "
                               "if has_aux is True")
        result, aux = result
    flat_out, out_spec = tree_flatten(result)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(prefix + "expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    return flat_out, out_spec, aux


def _jvp_forward_mode(func: Callable, flat_p: list, flat_t: list, p_spec: TreeSpec,
                      has_aux: bool) -> tuple:
    from .._creation import zeros_like
    from ..autograd import forward_ad as fwad

    outer_grad = is_grad_enabled()
    with fwad.dual_level():
        duals = [fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        flat_out, out_spec, aux = _jvp_outputs(func(*tree_unflatten(duals, p_spec)), has_aux)
        primal_out, tangent_out = [], []
        for o in flat_out:
            unpacked = fwad.unpack_dual(o)
            primal_out.append(unpacked.primal)
            tangent_out.append(zeros_like(unpacked.primal) if unpacked.tangent is None
                               else unpacked.tangent)
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([fwad.unpack_dual(a).primal if isinstance(a, Tensor) else a
                                  for a in aux_leaves], aux_spec)
    keep = _needs_graph(outer_grad, flat_p + flat_t, primal_out + tangent_out)
    out = (tree_unflatten([_exit(o, keep) for o in primal_out], out_spec),
           tree_unflatten([_exit(o, keep) for o in tangent_out], out_spec))
    return out + (aux,) if has_aux else out


def _jvp_by_double_vjp(func: Callable, primals: tuple, flat_t: list, has_aux: bool) -> tuple:
    """``J v`` as the gradient of ``<J^T u, v>`` in ``u`` (Note [Transform levels on one tape])."""
    from .._creation import zeros_like

    outer_grad = is_grad_enabled()
    with enable_grad():
        result = _vjp(func, primals, has_aux)
        out, vjp_fn = result[0], result[1]
        flat_out, out_spec, _ = _jvp_outputs((out, result[2]) if has_aux else out, has_aux)
        us = [_private(zeros_like(o).requires_grad_()) for o in flat_out]
        vjps = vjp_fn(tree_unflatten(us, out_spec), create_graph=True)
        flat_vjp = tree_flatten(vjps)[0]
        products = _gradients(flat_vjp, us, flat_t, True, True)
        keep = _needs_graph(outer_grad, tree_flatten(primals)[0] + flat_t, products)
    tangent_out = [_exit(p, keep) for p in products]
    res = (out, tree_unflatten(tangent_out, out_spec))
    return res + (result[2],) if has_aux else res


def linearize(func: Callable, *primals: Any) -> tuple:
    """``func(*primals)`` and a function giving ``jvp(func, primals, tangents)`` at them.

    >>> import npgrad
    >>> from npgrad.func import linearize
    >>> out, jvp_fn = linearize(npgrad.sin, npgrad.tensor([0., 1.]))
    >>> jvp_fn(npgrad.tensor([1., 1.]))
    tensor([1.0000, 0.5403])
    """
    output = func(*primals)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


# -- Jacobians ------------------------------------------------------------------------------

def _argnums_view(args: tuple, argnums: Any) -> tuple[Any, Any]:
    nums = _check_argnums(argnums, len(args))
    diff = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
    return nums, diff


def _with_args(args: tuple, nums: Any, diff: Any) -> list:
    new_args = list(args)
    if isinstance(nums, int):
        new_args[nums] = diff
    else:
        for i, t in zip(nums, diff):
            new_args[i] = t
    return new_args


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by reverse mode.

    >>> import npgrad
    >>> from npgrad.func import jacrev
    >>> jacrev(lambda x: x ** 2)(npgrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .._creation import zeros
        from .._ops.shape import stack

        nums, diff = _argnums_view(args, argnums)

        def restricted(*d: Any) -> Any:
            return func(*_with_args(args, nums, d[0] if isinstance(nums, int) else d), **kwargs)

        primals = (diff,) if isinstance(nums, int) else diff
        res = _vjp(restricted, primals, has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        flat_in, in_spec = tree_flatten(primals)
        per_output = []
        for i, o in enumerate(flat_out):
            rows: list = [[] for _ in flat_in]
            for j in range(o.numel()):
                cts = [zeros(tuple(x.shape), dtype=x.dtype) for x in flat_out]
                cts[i].view(-1)[j] = 1
                grads = tree_flatten(vjp_fn(tree_unflatten(cts, out_spec)))[0]
                for k, g in enumerate(grads):
                    rows[k].append(g)
            jac = []
            for k, x in enumerate(flat_in):
                shape = tuple(o.shape) + tuple(x.shape)
                jac.append(stack(rows[k], 0).view(shape) if rows[k]
                           else zeros(shape, dtype=x.dtype))
            tree = tree_unflatten(jac, in_spec)
            per_output.append(tree[0] if isinstance(nums, int) else tree)
        result = tree_unflatten(per_output, out_spec)
        return (result, res[2]) if has_aux else result

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by forward mode.

    >>> import npgrad
    >>> from npgrad.func import jacfwd
    >>> jacfwd(lambda x: x ** 2)(npgrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .._creation import eye, zeros

        nums, diff = _argnums_view(args, argnums)
        primals = (diff,) if isinstance(nums, int) else diff
        flat_in, in_spec = tree_flatten(primals)
        _check_tensors(flat_in)
        sizes = [x.numel() for x in flat_in]
        total = sum(sizes)

        def restricted(*d: Any) -> Any:
            return func(*_with_args(args, nums, d[0] if isinstance(nums, int) else d), **kwargs)

        def column(basis: Tensor) -> Any:
            tangents, start = [], 0
            for x, n in zip(flat_in, sizes):
                tangents.append(basis[start:start + n].view(tuple(x.shape)).to(x.dtype))
                start += n
            res = jvp(restricted, primals, tree_unflatten(tangents, in_spec), has_aux=has_aux)
            return (res[1], res[0], res[2]) if has_aux else (res[1], res[0])

        column._vmap_by_slices = True  # type: ignore[attr-defined]  # forward mode

        dtype = flat_in[0].dtype if flat_in else None
        if total == 0:
            basis = zeros((0, 0), dtype=dtype)
        else:
            basis = eye(total, dtype=dtype)
        if total == 0:
            first = column(zeros((0,), dtype=dtype))
            tangents_b = tree_map_flat(lambda t: t.unsqueeze(0)[:0], first[0])
            outs = (tangents_b, first[1]) + ((first[2],) if has_aux else ())
        else:
            outs = vmap(column, randomness=randomness, out_dims=(0, None, None)
                        if has_aux else (0, None))(basis)
        tangent_cols, output = outs[0], outs[1]
        flat_cols, out_spec = tree_flatten(tangent_cols)
        per_output = []
        for o, cols in zip(tree_flatten(output)[0], flat_cols):
            jac, start = [], 0
            for x, n in zip(flat_in, sizes):
                shape = tuple(o.shape) + tuple(x.shape)
                if n == 0 or o.numel() == 0:
                    jac.append(zeros(shape, dtype=o.dtype))
                else:
                    jac.append(cols[start:start + n].movedim(0, -1).reshape(shape))
                start += n
            tree = tree_unflatten(jac, in_spec)
            per_output.append(tree[0] if isinstance(nums, int) else tree)
        result = tree_unflatten(per_output, out_spec)
        return (result, outs[2]) if has_aux else result

    return wrapper


def tree_map_flat(fn: Callable, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of scalar ``func``: ``jacfwd(jacrev(func))``.

    >>> import npgrad
    >>> from npgrad.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(npgrad.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
