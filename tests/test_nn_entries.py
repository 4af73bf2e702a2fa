"""The nn ops as registry entries: their nodes keep what torch's keep, link as torch's do,
and compute tangents as torch's forward AD does.

For each op below, the node of its output and the node of its input's gradient (built with
``create_graph=True``: torch's ``...BackwardBackward0`` nodes, or the op again) are compared
with torch's: class name, the names and the values of the ``_saved_*`` attributes (a saved
tensor by its values), and the names of ``next_functions``.  Then each op's output tangent
under forward-mode AD is compared with torch's, and forward-over-reverse (the tangent of a
gradient) with torch's too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")


def _F(m: Any) -> Any:
    return m.nn.functional


def _conv2d(m: Any, x: Any, w: Any, b: Any) -> Any:
    return _F(m).conv2d(x, w, b, stride=2, padding=1)


# name: (function of the module and the inputs, input shapes)
CASES: dict[str, tuple[Callable, tuple]] = {
    "interpolate_nearest1d": (lambda m, x: _F(m).interpolate(x, size=9), ((2, 3, 6),)),
    "interpolate_nearest2d": (lambda m, x: _F(m).interpolate(x, scale_factor=2), ((2, 3, 4, 5),)),
    "interpolate_nearest_exact1d": (
        lambda m, x: _F(m).interpolate(x, scale_factor=1.5, mode="nearest-exact"), ((2, 3, 6),)),
    "interpolate_nearest_exact2d": (
        lambda m, x: _F(m).interpolate(x, size=(7, 9), mode="nearest-exact"), ((2, 3, 4, 5),)),
    "interpolate_linear": (lambda m, x: _F(m).interpolate(x, size=9, mode="linear"),
                           ((2, 3, 6),)),
    "interpolate_bilinear": (
        lambda m, x: _F(m).interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
        ((2, 3, 4, 5),)),
    "interpolate_bicubic": (lambda m, x: _F(m).interpolate(x, size=(8, 9), mode="bicubic"),
                            ((2, 3, 4, 5),)),
    "pad_reflect1d": (lambda m, x: _F(m).pad(x, (1, 2), mode="reflect"), ((2, 3, 6),)),
    "pad_reflect2d": (lambda m, x: _F(m).pad(x, (1, 2, 2, 1), mode="reflect"), ((2, 3, 4, 5),)),
    "pad_reflect3d": (lambda m, x: _F(m).pad(x, (1, 2, 2, 1, 1, 0), mode="reflect"),
                      ((2, 3, 4, 5),)),
    "pad_replicate1d": (lambda m, x: _F(m).pad(x, (1, 2), mode="replicate"), ((2, 3, 6),)),
    "pad_replicate2d": (lambda m, x: _F(m).pad(x, (1, 2, 2, 1), mode="replicate"),
                        ((2, 3, 4, 5),)),
    "pad_replicate3d": (lambda m, x: _F(m).pad(x, (1, 2, 2, 1, 1, 0), mode="replicate"),
                        ((2, 3, 4, 5),)),
    "pad_constant_crop": (lambda m, x: _F(m).pad(x, (1, -2, 2, 1), value=3.0), ((2, 3, 4, 5),)),
    "pixel_shuffle": (lambda m, x: _F(m).pixel_shuffle(x, 2), ((2, 8, 3, 3),)),
    "pixel_unshuffle": (lambda m, x: _F(m).pixel_unshuffle(x, 2), ((2, 3, 4, 6),)),
    "unfold": (lambda m, x: _F(m).unfold(x, 3, padding=1, stride=2), ((2, 3, 6, 5),)),
    "fold": (lambda m, x: _F(m).fold(x, (4, 5), 2, padding=1, stride=2), ((2, 12, 9),)),
    "max_pool2d": (lambda m, x: _F(m).max_pool2d(x, 3, 2, 1), ((2, 3, 6, 6),)),
    "max_pool2d_dilation_ceil": (lambda m, x: _F(m).max_pool2d(x, 2, ceil_mode=True, dilation=2),
                                 ((2, 3, 7, 7),)),
    "avg_pool2d": (lambda m, x: _F(m).avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                   ((2, 3, 6, 6),)),
    "avg_pool2d_divisor": (lambda m, x: _F(m).avg_pool2d(x, [2, 3], divisor_override=4),
                           ((2, 3, 6, 6),)),
    "adaptive_avg_pool2d": (lambda m, x: _F(m).adaptive_avg_pool2d(x, (4, 3)), ((2, 3, 6, 6),)),
    "adaptive_max_pool2d": (lambda m, x: _F(m).adaptive_max_pool2d(x, (4, 3)), ((2, 3, 6, 6),)),
}


def _inputs(m: Any, shapes: tuple, requires_grad: bool = True) -> list:
    rng = np.random.default_rng(5)
    # distinct values: max pooling is differentiable away from ties
    return [m.tensor(rng.permutation(int(np.prod(s))).reshape(s) / 7.0 + rng.random(s) / 100,
                     dtype=m.float64, requires_grad=requires_grad) for s in shapes]


def _facts(node: Any) -> tuple:
    """A node's class name, saved attributes (name -> value) and next_functions' names."""
    saved = {}
    for name in dir(node):
        if not name.startswith("_saved_") or name == "_saved_fields":
            continue
        value = getattr(node, name)
        if hasattr(value, "detach"):
            # (rounded: batch statistics are sums in another order than torch's)
            value = ("tensor", tuple(value.shape), np.round(value.detach().numpy(), 9).tolist())
        saved[name] = value
    nexts = [None if n is None else type(n).__name__ for n, _ in node.next_functions]
    return type(node).__name__, saved, nexts


def _graph_facts(m: Any, name: str) -> tuple:
    fn, shapes = CASES[name]
    inputs = _inputs(m, shapes)
    out = fn(m, *inputs)
    seed = m.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)),
                    dtype=m.float64, requires_grad=True)
    grads = m.autograd.grad(out, inputs, seed, create_graph=True)
    return _facts(out.grad_fn), _facts(grads[0].grad_fn)


@pytest.mark.parametrize("name", sorted(CASES))
def test_nodes_keep_and_link_as_torchs(name: str) -> None:
    assert _graph_facts(npgrad, name) == _graph_facts(torch, name)


def _norm_graph(m: Any, name: str) -> tuple:
    fn, shapes = TANGENT_CASES[name]
    inputs = _inputs(m, shapes)
    out = fn(m, *inputs)
    return _facts(out.grad_fn)


@pytest.mark.parametrize("name", ["batch_norm", "batch_norm_eval", "layer_norm",
                                  "layer_norm_no_bias", "batch_norm_no_affine"])
def test_normalization_nodes_keep_and_link_as_torchs(name: str) -> None:
    assert _norm_graph(npgrad, name) == _norm_graph(torch, name)


def test_batch_norm_training_twice_before_backward() -> None:
    """The running statistics are updated without a version bump, as torch's kernel does:
    two training forwards before one backward are legal; a write to them in eval mode,
    whose node reads them, is not."""
    def run(m: Any) -> tuple:
        bn = m.nn.BatchNorm2d(3).double()
        x = _inputs(m, ((2, 3, 4, 4),))[0]
        (bn(x).sum() + bn(x * 2).sum()).backward()
        version = bn.running_mean._version
        bn.eval()
        y = bn(x).sum()
        bn.running_mean.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            y.backward()
        return x.grad.numpy().copy(), version, str(info.value)

    (mine, mine_version, mine_text), (theirs, theirs_version, theirs_text) = run(npgrad), \
        run(torch)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    assert mine_version == theirs_version
    assert mine_text.replace("Double", "Float") == theirs_text.replace("Double", "Float")


def _conv_graph(m: Any) -> tuple:
    x, w, b = _inputs(m, ((2, 3, 6, 6), (4, 3, 3, 3), (4,)))
    out = _conv2d(m, x, w, b)
    seed = m.ones(tuple(out.shape), dtype=m.float64, requires_grad=True)
    gx, gw, gb = m.autograd.grad(out, (x, w, b), seed, create_graph=True)
    return _facts(out.grad_fn), _facts(gx.grad_fn), gx.grad_fn is gw.grad_fn


def test_convolution_nodes_keep_and_link_as_torchs() -> None:
    assert _conv_graph(npgrad) == _conv_graph(torch)


def _conv_transpose_facts(m: Any) -> tuple:
    x, w = _inputs(m, ((2, 3, 4, 4), (3, 2, 3, 3)))
    out = _F(m).conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    return _facts(out.grad_fn)


def test_transposed_convolution_node_keeps_as_torchs() -> None:
    assert _conv_transpose_facts(npgrad) == _conv_transpose_facts(torch)


# -- forward-mode AD: tangents computed with the output, compared with torch's ---------------

def _batch_norm(m: Any, x: Any, w: Any, b: Any) -> Any:
    mean, var = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)
    return _F(m).batch_norm(x, mean, var, w, b, training=True)


def _batch_norm_eval(m: Any, x: Any, w: Any, b: Any) -> Any:
    mean = m.tensor([0.5, -0.25, 1.0], dtype=m.float64)
    var = m.tensor([1.5, 0.75, 2.0], dtype=m.float64)
    return _F(m).batch_norm(x, mean, var, w, b, training=False)


TANGENT_CASES: dict[str, tuple[Callable, tuple]] = {
    **CASES,
    "conv2d": (_conv2d, ((2, 3, 6, 6), (4, 3, 3, 3), (4,))),
    "conv_transpose2d": (lambda m, x, w: _F(m).conv_transpose2d(x, w, stride=2, padding=1),
                         ((2, 3, 4, 4), (3, 2, 3, 3))),
    "batch_norm": (_batch_norm, ((2, 3, 4, 4), (3,), (3,))),
    "batch_norm_eval": (_batch_norm_eval, ((2, 3, 4, 4), (3,), (3,))),
    "layer_norm": (lambda m, x, w, b: _F(m).layer_norm(x, (4, 4), w, b), ((2, 3, 4, 4),
                                                                         (4, 4), (4, 4))),
    "layer_norm_no_bias": (lambda m, x, w: _F(m).layer_norm(x, (1, 4), w), ((2, 3, 1, 4),
                                                                           (1, 4))),
    "batch_norm_no_affine": (lambda m, x: _F(m).batch_norm(x, None, None, training=True),
                             ((2, 3, 4),)),
}


def _tangent(m: Any, name: str) -> np.ndarray:
    fn, shapes = TANGENT_CASES[name]
    fwad = m.autograd.forward_ad
    primals = _inputs(m, shapes, requires_grad=False)
    rng = np.random.default_rng(9)
    with fwad.dual_level():
        duals = [fwad.make_dual(p, m.tensor(rng.standard_normal(tuple(p.shape)),
                                            dtype=m.float64)) for p in primals]
        out = fn(m, *duals)
        return fwad.unpack_dual(out).tangent.numpy().copy()  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(TANGENT_CASES))
def test_tangents_match_torch(name: str) -> None:
    np.testing.assert_allclose(_tangent(npgrad, name), _tangent(torch, name),
                               rtol=1e-10, atol=1e-12)


def _gradient_tangent(m: Any, name: str) -> list:
    """Forward over reverse: the tangents of the input gradients (the backward ops' tangents)."""
    fn, shapes = TANGENT_CASES[name]
    fwad = m.autograd.forward_ad
    primals = _inputs(m, shapes)
    rng = np.random.default_rng(4)
    with fwad.dual_level():
        duals = [fwad.make_dual(p, m.tensor(rng.standard_normal(tuple(p.shape)),
                                            dtype=m.float64)) for p in primals]
        out = fn(m, *duals)
        seed = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=m.float64)
        grads = m.autograd.grad(out, duals, seed, create_graph=True)
        tangents = [fwad.unpack_dual(g).tangent for g in grads]
        return [None if t is None else t.detach().numpy().copy() for t in tangents]


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
                                  "adaptive_avg_pool2d", "adaptive_max_pool2d",
                                  "interpolate_bilinear", "interpolate_nearest1d",
                                  "pad_reflect2d", "pad_replicate1d", "pad_constant_crop",
                                  "pixel_shuffle", "unfold", "fold", "batch_norm",
                                  "batch_norm_eval", "layer_norm"])
def test_gradient_tangents_match_torch(name: str) -> None:
    mine, theirs = _gradient_tangent(npgrad, name), _gradient_tangent(torch, name)
    assert [t is None for t in mine] == [t is None for t in theirs]
    for a, b in zip(mine, theirs):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
