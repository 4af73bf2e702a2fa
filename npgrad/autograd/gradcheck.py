"""npgrad.autograd.gradcheck: compare the gradients npgrad computes with finite differences.

Note [How gradcheck measures a Jacobian]
Both Jacobians of one (input, output) pair are stored the same way, as a
matrix with one row per input element and one column per output element:
  * numerical: each input element in turn is moved by ``-eps`` and ``+eps``
    (written into the input's NumPy buffer, in the input's dtype, then put
    back) and the central difference ``(f(x + eps) - f(x - eps)) / (2 eps)``,
    computed in the output's dtype, fills that element's row;
  * analytical: ``autograd.grad`` is called once per output element with a
    one-hot ``grad_output`` (a vector-Jacobian product gives one column); it is
    done twice so that a backward which is not deterministic is caught.
The pair passes when every entry satisfies ``|a - n| <= atol + rtol * |n|``.
After the Jacobians, three properties of the backward are checked, as torch
does: a zero ``grad_output`` gives zero input gradients; output gradients that
are left undefined (``None`` in npgrad) are handled; and, when asked, batched
vector-Jacobian products agree with single ones.

Note [What differs from torch here]
  * ``fast_mode=True`` runs the same full (slow) check: it is exact, only slower.
  * ``check_batched_grad`` compares ``autograd.grad(..., is_grads_batched=True)``
    (npgrad.func's vmap, which runs a backward per row: Note [vmap by slices]) with
    single products, and also computes each product by a second route (the product
    of a sum minus the product of the other term), which catches a backward that is
    not linear in ``grad_output``.  ``check_batched_forward_grad`` has no batched
    forward path to check.
  * ``masked`` is torch's: see Note [Sparse inputs in gradcheck].
  * ``check_forward_ad=True`` compares the Jacobian that forward-mode AD
    (``npgrad.autograd.forward_ad``) builds, one tangent per input element,
    with the finite differences, as torch's slow mode does.

Note [Sparse inputs in gradcheck]
A sparse COO input's Jacobian has a row per element of its dense shape, as a dense
input's.  With ``masked=False`` (the default) the numerical Jacobian is measured on a
copy of the input in which every element is specified (the unspecified ones as zeros),
so every row is filled, while the analytical rows come from the gradients for the input
itself: an op whose gradient keeps to the input's pattern (``to_dense``, ``sparse.mm``)
fails the check, as it does in torch.  With ``masked=True`` only the specified values
are moved, and the unspecified elements' rows stay zero on both sides.  A sparse
gradient counts as its dense tensor.  Sparse outputs are refused, as in torch.

Note [Complex gradcheck]
As torch's, the check of a function with complex outputs is two checks of real
functions: the imaginary parts of the complex outputs first (messages start "While
considering the imaginary part of complex outputs only, "), then the real parts.
With real outputs, a complex input element's numerical row is the conjugate
Wirtinger derivative ``ds/dx + i ds/dy`` (times two): one central difference along
the real part and one along the imaginary part, which is exactly the gradient that
backward gives for a one-hot real ``grad_output`` (Note [Gradients of complex
inputs] in npgrad._ops.complex).  Forward mode checks functions of the real and of
the imaginary parts of complex inputs (the other part held), as torch's does.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


# -- small helpers ----------------------------------------------------------------------------

def _tensor_type() -> type:
    from .._tensor import Tensor

    return Tensor


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _tensor_type())


def _is_float_tensor(x: Any) -> bool:
    return _is_tensor(x) and x._data.dtype.kind in "fc"


def _is_sparse(x: Any) -> bool:
    return _is_tensor(x) and x.is_sparse


def _dense_array(t: Any) -> np.ndarray:
    """A gradient's values as a dense array (a sparse gradient's duplicates added up)."""
    return t.to_dense()._data if t.is_sparse else t._data


def _densify(inputs: tuple) -> tuple:
    """``inputs`` with each sparse one replaced by a coalesced copy in which every element is
    specified, the unspecified ones as zeros (Note [Sparse inputs in gradcheck])."""
    from .._ops.sparse import make_sparse

    out = []
    for x in inputs:
        if not _is_sparse(x):
            out.append(x)
            continue
        shape = x._data.shape
        sd = x.sparse_dim()
        values = np.zeros((int(np.prod(shape[:sd], dtype=np.int64)),) + shape[sd:],
                          dtype=x._data.dtype)
        if x._sp_indices.shape[1]:
            flat = np.ravel_multi_index(tuple(x._sp_indices), shape[:sd])
            np.add.at(values, flat, x._sp_values)
        indices = np.indices(shape[:sd]).reshape(sd, -1).astype(np.int64)
        dense = make_sparse(indices, values, shape, True)
        dense._requires_grad = x.requires_grad
        out.append(dense)
    return tuple(out)


def _perturbed_elements(inp: Any) -> Any:
    """``(array, index, row)`` for each element gradcheck moves: the input's array (written in
    place), the element's index in it and its row of the Jacobian (the element's place in
    the dense shape); a sparse input's specified values (Note [Sparse inputs in
    gradcheck])."""
    if not inp.is_sparse:
        data = inp._data
        for row, idx in enumerate(np.ndindex(*data.shape)):
            yield data, idx, row
        return
    shape = inp._data.shape
    values = inp._sp_values
    for n in range(values.shape[0]):
        head = tuple(int(i) for i in inp._sp_indices[:, n])
        for rest in np.ndindex(*values.shape[1:]):
            yield values, (n, *rest), int(np.ravel_multi_index(head + rest, shape))


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x: Any) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(inputs: tuple) -> list:
    return [t for t in inputs if _is_tensor(t) and t.requires_grad]


def _show(array: np.ndarray) -> Any:
    """A Jacobian as an npgrad tensor, so that messages print as torch's do."""
    from .._creation import from_numpy

    return from_numpy(np.ascontiguousarray(array))


def _add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)``; Python 3.10 has no add_note, so the note is kept where 3.11's
    traceback would read it (``__notes__``)."""
    notes = getattr(error, "__notes__", None)
    if notes is None:
        notes = error.__notes__ = []  # type: ignore[attr-defined]  # (3.10 has no __notes__)
    notes.append(note)


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """torch.allclose after promotion: ``|a - b| <= atol + rtol * |b|``, NaN never close."""
    dt = np.result_type(a.dtype, b.dtype)
    return bool(np.isclose(a.astype(dt), b.astype(dt), rtol=rtol, atol=atol,
                           equal_nan=False).all())


def _grad(outputs: Any, inputs: Any, grad_outputs: Any, **kwargs: Any) -> tuple:
    from . import grad

    return grad(outputs, inputs, grad_outputs, **kwargs)


def _forward_ad() -> Any:
    from . import forward_ad

    return forward_ad


# -- inputs and outputs -----------------------------------------------------------------------

def _check_inputs(inputs: tuple) -> None:
    any_requiring_grad = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=4)
        content = inp._values() if inp.is_sparse else inp
        if any(st == 0 and sz > 1 for st, sz in zip(content.stride(), content._data.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _check_outputs(outputs: tuple) -> None:
    if any(_is_sparse(o) for o in outputs):
        raise ValueError("Sparse output is not supported at gradcheck yet. Please call "
                         "to_dense(masked_grad=...) on the output of fn for gradcheck.")


def _output_arrays(func: Callable, inputs: tuple) -> list:
    """Copies of every output's data (outputs may alias the inputs being perturbed)."""
    return [o._data.copy() for o in _as_tuple(func(*inputs))]


def _check_same_dtype_and_shape(a: np.ndarray, b: np.ndarray, eps: float, idx: tuple) -> None:
    from .. import _dtype
    from .._size import Size

    if a.shape != b.shape:
        raise AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"on index {idx} by {eps}, but got: shapes {Size(a.shape)} and {Size(b.shape)}.")
    if a.dtype != b.dtype:
        raise AssertionError(
            "Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"on index {idx} by {eps}, but got: dtypes {_dtype.from_np(a.dtype)} and "
            f"{_dtype.from_np(b.dtype)}.")


# -- the two Jacobians ------------------------------------------------------------------------

def _numerical_jacobians(func: Callable, inputs: tuple, func_out: tuple, eps: float) -> list:
    """Per input requiring grad, per floating output: the central-difference Jacobian.

    See Note [How gradcheck measures a Jacobian].
    """
    float_positions = [k for k, o in enumerate(func_out) if _is_float_tensor(o)]
    jacobians = []
    for inp in inputs:
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        meta = inp._data
        is_complex = meta.dtype.kind == "c"
        per_output = [np.zeros((meta.size, func_out[k]._data.size),
                               dtype=np.result_type(func_out[k]._data.dtype, meta.dtype))
                      for k in float_positions]
        # written in place, like torch's ``.data``: no version bump
        for data, idx, row in _perturbed_elements(inp):
            orig = data[idx].copy()
            for jac in per_output:  # a duplicate sparse index measures its row anew
                jac[row] = 0
            # Note [Complex gradcheck]: a complex element moves along both of its parts
            for step, weight in ((eps, 1), (eps * 1j, 1j)) if is_complex else ((eps, 1),):
                data[idx] = orig - step
                minus = _output_arrays(func, inputs)
                data[idx] = orig + step
                plus = _output_arrays(func, inputs)
                data[idx] = orig
                for jac, k in zip(per_output, float_positions):
                    _check_same_dtype_and_shape(minus[k], plus[k], eps, idx)
                    if plus[k].size != jac.shape[1]:  # the output changed size (a densified
                        # sparse input's values(), say): torch's copy into the Jacobian fails
                        raise RuntimeError(
                            f"The expanded size of the tensor ({jac.shape[1]}) must match the "
                            f"existing size ({plus[k].size}) at non-singleton dimension 0.  "
                            f"Target sizes: [{jac.shape[1]}].  Tensor sizes: [{plus[k].size}]")
                    if is_complex and minus[k].dtype.kind == "c":
                        raise AssertionError("Expected ds_dx to be real-valued, not complex")
                    jac[row] += weight * ((plus[k] - minus[k]) / (2 * eps)).reshape(-1)
        jacobians.append(per_output)
    return jacobians


def _analytical_rows(output: Any, diff_inputs: list) -> list:
    """``rows[i][j]``: the gradient of input ``i`` for the one-hot grad_output ``j``."""
    from .._creation import zeros_like

    grad_out = zeros_like(output)
    flat = grad_out._data.reshape(-1)  # a view: the one-hot entry is written in place
    rows: list = [[] for _ in diff_inputs]
    for j in range(flat.size):
        flat[:] = 0
        flat[j] = 1
        grads = _grad(output, diff_inputs, grad_out, retain_graph=True, allow_unused=True)
        for i, g in enumerate(grads):
            rows[i].append(None if g is None else _dense_array(g).copy())
    return rows


def _stack_rows(rows: list, diff_inputs: list, numel_output: int) -> tuple:
    """Stack the rows into (input numel, output numel) matrices in the input's dtype.

    Note [Size and dtype flags, as torch reports them]
    torch computes "all gradients had the right size" and "all had the right
    dtype" and reads them back in the opposite order, so a dtype mismatch is
    reported as "Analytical gradient has incorrect size" and a size mismatch
    (of the same number of elements) as "Gradient has dtype mismatch" when
    ``check_grad_dtypes`` is set.  We reproduce what users see.  npgrad's
    engine casts and reduces every gradient to its input's dtype and shape, so
    neither can normally happen.
    """
    jacobians = []
    sizes_ok = types_ok = True
    for inp, per_row in zip(diff_inputs, rows):
        data = inp._data
        jac = np.zeros((data.size, numel_output), dtype=data.dtype)
        for j, g in enumerate(per_row):
            if g is None:
                continue
            if g.shape != data.shape:
                sizes_ok = False
            elif g.dtype != data.dtype:
                types_ok = False
            if g.size != data.size:
                raise AssertionError(f"Expected out_jacobian column to have {g.size} elements, "
                                     f"but got {data.size}")
            jac[:, j] = g.reshape(-1)
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


def _analytical_jacobians(inputs: tuple, output: Any, nondet_tol: float,
                          check_grad_dtypes: bool) -> list:
    diff_inputs = _diff_inputs(inputs)
    numel = output._data.size
    first, flag_a, flag_b = _stack_rows(_analytical_rows(output, diff_inputs), diff_inputs, numel)
    second, _, _ = _stack_rows(_analytical_rows(output, diff_inputs), diff_inputs, numel)
    reentrant = all(a.size == 0 or not (np.abs(a - b).max() > nondet_tol)
                    for a, b in zip(first, second))
    # Note [Size and dtype flags, as torch reports them]: flag_a is "sizes ok".
    if not flag_a and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not flag_b:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        error = GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
        _add_note(error, "npgrad: if the op is meant to be nondeterministic, pass a larger "
                         "nondet_tol to gradcheck/gradgradcheck.")
        raise error
    return first


def _mismatch_message(analytical: np.ndarray, numerical: np.ndarray, output_idx: int,
                      input_idx: int, forward: bool = False, complex_part: Any = None) -> str:
    """torch's message; ``complex_part``: ``(part, complex indices)`` when checking one part
    of complex outputs (backward) or inputs (forward) (Note [Complex gradcheck])."""
    prefix = ""
    if complex_part is not None:
        part, indices = complex_part
        if (input_idx if forward else output_idx) in indices:
            element = "inputs" if forward else "outputs"
            prefix = f"While considering the {part} part of complex {element} only, "
    mode = "computed with forward mode " if forward else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def _forward_jacobians(func: Callable, inputs: tuple, func_out: tuple) -> list:
    """Per input requiring grad, per floating output: the Jacobian from forward-mode AD."""
    from .._creation import zeros_like

    fwad = _forward_ad()
    float_positions = [k for k, o in enumerate(func_out) if _is_float_tensor(o)]
    rg_positions = [k for k, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    jacobians = []
    with fwad.dual_level():
        for k in rg_positions:
            data = inputs[k]._data
            per_output = [np.zeros((data.size, func_out[p]._data.size),
                                   dtype=func_out[p]._data.dtype) for p in float_positions]
            for row, idx in enumerate(np.ndindex(*data.shape)):
                duals = []
                for q, t in enumerate(inputs):
                    if q not in rg_positions:
                        duals.append(t)
                        continue
                    tangent = zeros_like(t)
                    if q == k:
                        tangent._data[idx] = 1
                    duals.append(fwad.make_dual(t.detach(), tangent))
                outs = _as_tuple(func(*duals))
                for jac, p in zip(per_output, float_positions):
                    tangent_out = fwad.unpack_dual(outs[p])[1]
                    if tangent_out is not None:
                        jac[row] = tangent_out._data.reshape(-1)
            jacobians.append(per_output)
    return jacobians


def _check_undefined_forward(func: Callable, inputs: tuple) -> None:
    """A zero tangent and no tangent at all must give the same output tangents."""
    from .._creation import zeros_like

    fwad = _forward_ad()
    rg_positions = [k for k, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    with fwad.dual_level():
        base = [fwad.make_dual(t.detach(), zeros_like(t)) if k in rg_positions else t
                for k, t in enumerate(inputs)]
        for k in rg_positions:
            with_zero = list(base)
            with_zero[k] = fwad.make_dual(inputs[k].detach(), zeros_like(inputs[k]))
            without = list(base)
            without[k] = inputs[k].detach()
            outs1 = [o for o in _as_tuple(func(*with_zero)) if _is_float_tensor(o)]
            outs2 = [o for o in _as_tuple(func(*without)) if _is_float_tensor(o)]
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1 = fwad.unpack_dual(o1)[1]
                t2 = fwad.unpack_dual(o2)[1]
                if t1 is not None and t2 is not None and not _allclose(t1._data, t2._data,
                                                                       1e-05, 1e-08):
                    raise GradcheckError("Mismatch in tangent values for output with index: ",
                                         index_o, " when input: ", inputs[k],
                                         " has an undefined tangent value. ", " Got: ", t1,
                                         " but expected: ", t2)


def _check_no_differentiable_outputs(func: Callable, inputs: tuple, func_out: tuple,
                                     eps: float) -> None:
    for per_output in _numerical_jacobians(func, inputs, func_out, eps):
        for jac in per_output:
            if np.count_nonzero(jac != 0) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(func: Callable, func_out: tuple, inputs: tuple, outputs: tuple, eps: float,
                    rtol: float, atol: float, check_grad_dtypes: bool, nondet_tol: float,
                    use_forward_ad: bool = False, complex_part: Any = None,
                    masked: bool = False) -> None:
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, func_out, eps)
        return
    numerical_inputs = inputs if masked else _densify(inputs)
    numerical_by_input = _numerical_jacobians(func, numerical_inputs, func_out, eps)
    # per output (floating ones, in order), per input; then keep the differentiable outputs
    float_outs = [o for o in func_out if _is_float_tensor(o)]
    numerical = [[per_input[k] for per_input in numerical_by_input]
                 for k in range(len(float_outs))]
    numerical = [n for o, n in zip(float_outs, numerical) if o.requires_grad]
    if use_forward_ad:
        forward = _forward_jacobians(func, inputs, func_out)
        for i, per_input in enumerate(numerical):
            for j, n in enumerate(per_input):
                a = forward[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_mismatch_message(a, n, i, j, forward=True,
                                                           complex_part=complex_part))
        return
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_message(a, n, i, j, complex_part=complex_part))


def _complex_parts_of_outputs(func: Callable) -> tuple:
    """``real(func)`` and ``imag(func)``: func with its complex outputs' parts taken
    (Note [Complex gradcheck])."""
    def with_part(part: str) -> Callable:
        def wrapped(*inputs: Any) -> tuple:
            return tuple(getattr(o, part) if _is_tensor(o) and o.is_complex() else o
                         for o in _as_tuple(func(*inputs)))
        return wrapped
    return with_part("real"), with_part("imag")


def _complex_parts_of_inputs(func: Callable, indices: list, inputs: tuple) -> tuple:
    """Functions of the real parts and of the imaginary parts of the complex inputs at
    ``indices``, the other part held at its value in ``inputs``."""
    def with_part(rebuild: Callable) -> Callable:
        def wrapped(*args: Any) -> tuple:
            new = list(args)
            for k in indices:
                new[k] = rebuild(new[k], inputs[k])
            return _as_tuple(func(*new))
        return wrapped
    return (with_part(lambda x, orig: x + orig.imag * 1j),
            with_part(lambda y, orig: orig.real + y * 1j))


def _gradcheck_real_imag(func: Callable, func_out: tuple, inputs: tuple, outputs: tuple,
                         eps: float, rtol: float, atol: float, check_grad_dtypes: bool,
                         nondet_tol: float, use_forward_ad: bool, masked: bool = False) -> None:
    """The slow check, split into real checks where complex numbers appear (Note [Complex
    gradcheck])."""
    if not use_forward_ad:
        complex_outs = [i for i, o in enumerate(outputs) if o.is_complex()]
        if not any(_is_tensor(o) and o.is_complex() for o in func_out):
            _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol,
                            check_grad_dtypes, nondet_tol, masked=masked)
            return
        real_fn, imag_fn = _complex_parts_of_outputs(func)
        for fn, part in ((imag_fn, "imaginary"), (real_fn, "real")):
            out = _as_tuple(fn(*inputs))
            _slow_gradcheck(fn, out, inputs, _differentiable_outputs(out), eps, rtol, atol,
                            check_grad_dtypes, nondet_tol, complex_part=(part, complex_outs),
                            masked=masked)
        return
    complex_ins = [i for i, t in enumerate(inputs) if _is_tensor(t) and t.is_complex()]
    if not complex_ins:
        _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                        nondet_tol, use_forward_ad=True)
        return
    real_fn, imag_fn = _complex_parts_of_inputs(func, complex_ins, inputs)
    for fn, part, take in ((imag_fn, "imaginary", "imag"), (real_fn, "real", "real")):
        parts = tuple(_part_leaf(t, take) if k in complex_ins else t
                      for k, t in enumerate(inputs))
        out = _as_tuple(fn(*parts))
        _slow_gradcheck(fn, out, parts, _differentiable_outputs(out), eps, rtol, atol,
                        check_grad_dtypes, nondet_tol, use_forward_ad=True,
                        complex_part=(part, complex_ins))


def _part_leaf(t: Any, part: str) -> Any:
    """A complex input's real or imaginary part as a fresh leaf requiring grad as ``t`` does."""
    from .._creation import _leaf

    return _leaf(np.ascontiguousarray(getattr(t._data, part)), t.requires_grad)


# -- properties of the backward ---------------------------------------------------------------

def _test_batched_grad(inputs: tuple, output: Any, output_idx: int) -> None:
    """See Note [What differs from torch here]: batched products, and a linearity check."""
    from .._creation import randn_like, zeros_like

    diff_inputs = _diff_inputs(inputs)

    def vjp(v: Any) -> list:
        grads = _grad(output, diff_inputs, v, retain_graph=True, allow_unused=True)
        return [(zeros_like(t) if g is None else g)._data for g, t in zip(grads, diff_inputs)]

    grad_outputs = [randn_like(output) for _ in range(2)]
    expected = [np.stack(shards) for shards in zip(*(vjp(g) for g in grad_outputs))]
    from .._creation import from_numpy

    # np.asarray: the sum of two 0-dim arrays is a NumPy scalar, not an array
    total = from_numpy(np.asarray(grad_outputs[0]._data + grad_outputs[1]._data))
    of_total = vjp(total)
    of_first, of_second = vjp(grad_outputs[0]), vjp(grad_outputs[1])
    result = [np.stack([t - b, t - a]) for t, a, b in zip(of_total, of_first, of_second)]
    from .._ops.shape import stack

    batched = _grad(output, diff_inputs, stack(grad_outputs), retain_graph=True,
                    allow_unused=True, is_grads_batched=True)
    for input_idx, (b, exp) in enumerate(zip(batched, expected)):
        got = np.zeros_like(exp) if b is None else b._data
        if not _allclose(got, exp, 1e-05, 1e-08):
            raise GradcheckError(
                f"For output {output_idx} and input {input_idx}:\n\n"
                "gradcheck or gradgradcheck failed while testing batched gradient computation."
                f"\n\nGot:\n{_show(got)}\n\nExpected:\n{_show(exp)}")
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if _allclose(res, exp, 1e-05, 1e-08):
            continue
        error = GradcheckError(
            f"For output {output_idx} and input {input_idx}:\n\n"
            "gradcheck or gradgradcheck failed while testing batched gradient computation.\n\n"
            f"Got:\n{_show(res)}\n\nExpected:\n{_show(exp)}")
        _add_note(error, "npgrad: each product of the batch was recomputed as "
                         "the product of a sum of grad_outputs minus the other product, so the "
                         "backward is not linear in grad_output. Pass check_batched_grad=False "
                         "to skip this check.")
        raise error


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple, masked: bool) -> None:
    from .._creation import zeros_like

    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = _grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if gi.is_sparse:
            if not di.is_sparse:
                raise GradcheckError(f"grad is incorrect layout ({gi.layout} is not "
                                     f"{di.layout})")
            if gi.sparse_dim() != di.sparse_dim():
                raise GradcheckError("grad is sparse tensor, but has incorrect sparse_dim "
                                     f"{gi.sparse_dim()}, expected {di.sparse_dim()}")
            if gi.dense_dim() != di.dense_dim():
                raise GradcheckError("grad is sparse tensor, but has incorrect dense_dim "
                                     f"{gi.dense_dim()}, expected {di.dense_dim()}")
        values = _dense_array(gi)
        zero = np.isclose(values, 0, rtol=1e-05, atol=1e-08) if masked else values == 0
        if not zero.all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._data.dtype != di._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._data.shape != di._data.shape:
            raise GradcheckError("grad is incorrect size")


_UNDEFINED_HELP = 'Please look at "Notes about undefined output gradients" in ' \
                  '"tools/autograd/derivatives.yaml"'


def _warn_undefined_grad_check() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled "
        "by default, but it may break existing callers of this function. If this is true for "
        'you, you can call this function with "check_undefined_grad=False" to disable the '
        "feature", UserWarning, stacklevel=4)


def _test_undefined_backward_mode(func: Callable, outputs: tuple, inputs: tuple) -> None:
    """Backward must cope with output gradients that are undefined (``None`` in npgrad).

    torch wraps an output in a node whose gradient is undefined; in npgrad an
    undefined gradient is simply a root that is not fed, so the engine hands
    ``None`` to a node for that output (or skips the node when all its inputs
    are ``None``).  Every defined output gets a zero gradient, as in torch.
    """
    from .._creation import zeros_like

    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def check(defined: list) -> None:
        if not defined:  # every output undefined: nothing reaches the inputs at all
            return
        try:
            grads = _grad(defined, diff_inputs, [zeros_like(o) for o in defined],
                          allow_unused=True)
        except RuntimeError as e:
            _warn_undefined_grad_check()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_HELP) from e
        for gi in grads:
            if gi is not None and not (_dense_array(gi) == 0).all():
                _warn_undefined_grad_check()
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero. " + _UNDEFINED_HELP)

    check([])
    if len(_differentiable_outputs(func(*inputs))) > 1:
        for undefined_idx in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            check([o for k, o in enumerate(fresh) if k != undefined_idx])


# -- public API -------------------------------------------------------------------------------

def _gradcheck_helper(func: Callable, inputs: Any, eps: float, atol: float, rtol: float,
                      nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
                      check_batched_grad: bool, check_forward_ad: bool,
                      check_backward_ad: bool, masked: bool) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = _as_tuple(func(*tupled_inputs))
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    if check_backward_ad:
        _gradcheck_real_imag(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                             check_grad_dtypes, nondet_tol, use_forward_ad=False,
                             masked=masked)
    if check_forward_ad:
        _gradcheck_real_imag(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                             check_grad_dtypes, nondet_tol, use_forward_ad=True)
        if check_undefined_grad:
            _check_undefined_forward(func, tupled_inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-06, atol: float = 1e-05,
              rtol: float = 0.001, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Inputs that require grad should be float64 (a UserWarning says so otherwise).
    Returns True, or raises ``GradcheckError`` (``False`` with ``raise_exception=False``).
    ``fast_mode`` runs the full check (see Note [What differs from torch here]).

    >>> import npgrad
    >>> x = npgrad.tensor([0.5, -1.0], dtype=npgrad.float64, requires_grad=True)
    >>> npgrad.autograd.gradcheck(npgrad.exp, (x,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad "
                             "to be True")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes, check_batched_grad, check_forward_ad,
                                 check_backward_ad, bool(masked))
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _random_grad_output(output: Any, noncontiguous: bool) -> Any:
    """Uniform in [-1, 1), in the output's floating dtype (float64 otherwise), requiring grad."""
    from .. import _dtype
    from .._creation import _leaf, rand

    dt = output.dtype if output._data.dtype.kind in "fc" else _dtype.float64
    if dt.is_complex:  # both parts uniform in [-1, 1)
        pairs = rand(tuple(output._data.shape) + (2,), dtype=dt.to_real())._data * 2 - 1
        data = np.ascontiguousarray(pairs).view(dt.np_dtype)[..., 0]
    else:
        data = np.asarray(rand(tuple(output._data.shape), dtype=dt)._data * 2 - 1,
                          dtype=dt.np_dtype)
    if noncontiguous and data.size > 1:
        wide = np.repeat(data, 2, axis=-1)
        data = wide[..., ::2]
    return _leaf(data, True)


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-06,
                  atol: float = 1e-05, rtol: float = 0.001,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check second derivatives: gradcheck of the first-order gradients of ``func``.

    The first-order gradients are taken against ``grad_outputs`` (random, in
    [-1, 1) and requiring grad, when not given) with ``create_graph=True``;
    gradcheck then differentiates them with respect to the inputs and the
    grad_outputs.

    >>> import npgrad
    >>> x = npgrad.tensor([0.5, -1.0], dtype=npgrad.float64, requires_grad=True)
    >>> npgrad.autograd.gradgradcheck(npgrad.exp, (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                                    for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_indices = {i for i, x in enumerate(tupled_inputs)
                          if _is_tensor(x) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def first_order_grads(*args: Any) -> tuple:
        input_args = tuple(x.requires_grad_() if i in diff_input_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outs = _differentiable_outputs(func(*input_args))
        grad_outs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                          for i, x in enumerate(args[-num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grads = _grad(outs, diff_args, grad_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order_grads, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
