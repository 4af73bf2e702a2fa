"""npgrad.autograd: reverse-mode differentiation entry points and the grad-mode managers."""
from __future__ import annotations

import warnings
from typing import Any

from . import anomaly_mode, grad_mode, graph  # noqa: F401
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                           is_anomaly_enabled, set_detect_anomaly)
from .grad_mode import (_force_original_view_tracking, enable_grad, inference_mode,  # noqa: F401
                        no_grad, set_grad_enabled)
from .graph import GradientEdge, Node  # noqa: F401
from .._mode import is_grad_enabled, is_inference_mode_enabled  # noqa: F401


CREATE_GRAPH_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak."
)


def _as_tuple(x: Any) -> tuple:
    from .._tensor import Tensor

    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple) -> list:
    """The gradient fed to each root: given, or ones for a one-element output."""
    from .._creation import ones_like
    from .._tensor import Tensor

    result = []
    for out, g in zip(outputs, grads):
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._requires_grad and out._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            g = ones_like(out, dtype=None) if out._requires_grad else None
        elif isinstance(g, Tensor):
            if g._data.shape != out._data.shape:
                i = len(result)
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}.")
            if g._data.dtype != out._data.dtype:
                from .._ops.shape import to
                from .. import _dtype

                g = to(g, _dtype.from_np(out._data.dtype))
        else:  # torch takes nothing else (a number, a list, a string) for a gradient
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        result.append(g)
    return result


def _roots(outputs: tuple) -> list:
    from .graph import edge_of

    roots = []
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        roots.append(edge_of(out))
    return roots


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves.

    >>> import npgrad
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> npgrad.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    from .engine import run_backward
    from .graph import edge_of

    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grads: tuple = (None,) * len(outputs)
    else:
        grads = _as_tuple(grad_tensors) if not _is_single(grad_tensors) else (grad_tensors,)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    capture = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        capture = [_input_edge(t, i) for i, t in enumerate(inputs)]
    root_grads = _make_grads(outputs, grads)
    roots = _roots(outputs)
    if create_graph:
        warnings.warn(CREATE_GRAPH_CYCLE_WARNING, UserWarning, stacklevel=3)
    if inputs is None:
        run_backward(roots, root_grads, retain_graph, create_graph)
        return
    # backward(inputs=...): run only what leads to the given tensors.  As torch's, a
    # non-leaf input retains its grad (for good), and the engine runs its grad_fn with
    # that node's hooks; a leaf input's AccumulateGrad runs as in any backward.
    for t in inputs:
        if not isinstance(t, GradientEdge) and t._grad_fn is not None:
            t.retain_grad()
    run_backward(roots, root_grads, retain_graph, create_graph, capture=capture,
                 accumulate=True)


def _is_single(x: Any) -> bool:
    from .._tensor import Tensor

    return isinstance(x, Tensor)  # a bare number is not one: torch iterates it and fails


def _input_edge(t: Any, index: int) -> tuple:
    from .graph import edge_of

    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return edge_of(t)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).

    >>> import npgrad
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> npgrad.autograd.grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    """
    from .engine import run_backward

    outputs_t = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if grad_outputs is None:
        grads: tuple = (None,) * len(outputs_t)
    else:
        grads = (grad_outputs,) if _is_single(grad_outputs) else tuple(grad_outputs)
    if len(grads) != len(outputs_t):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(outputs_t)} "
                           f"outputs and {len(grads)} grad_outputs")
    if is_grads_batched:  # one backward per row of the grad_outputs (npgrad.func)
        from ..func._batched_grad import batched_grad

        return batched_grad(grad, outputs_t, inputs_t, grads, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    capture = [_input_edge(t, i) for i, t in enumerate(inputs_t)]
    root_grads = _make_grads(outputs_t, grads)
    roots = _roots(outputs_t)
    captured = run_backward(roots, root_grads, retain_graph, create_graph, capture=capture,
                            accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs_t, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .._creation import zeros_like

                g = zeros_like(t)
        elif not create_graph and g._grad_fn is not None:
            g = g.detach()
        result.append(g)
    return tuple(result)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from .variable import Variable  # noqa: E402,F401 - deprecated; needs Tensor only when called


# Custom Functions and the functional API load on first use: this package is
# imported while npgrad._tensor itself is still loading, and they need Tensor.
_LAZY_FROM_FUNCTION = ("Function", "FunctionCtx")
_LAZY_SUBMODULES = ("function", "functional", "forward_ad")


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY_FROM_FUNCTION:
        return getattr(importlib.import_module(f"{__name__}.function"), name)
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
