"""Sparse COO tensors (issue 14, part 3): construction, conversions, reprs, errors, arithmetic,
products and sums, and their gradients, each compared with torch; gradchecks where torch has
them."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


def _text(x: Any) -> str:
    """A result as comparable text (reprs with npgrad's dtype prefix read as torch's)."""
    return repr(x).replace("npgrad.", "torch.")


def _outcome(f: Callable[[], Any]) -> str:
    try:
        return _text(f())
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {str(e)[:150]}"


def _same(run: Callable[[Any], list], torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = run(npgrad), run(torch)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert m == t


IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) appears twice: uncoalesced
VALS = [3., 4., 5., 1.]


def _s(lib: Any, dtype: Any = None, **kw: Any) -> Any:
    return lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS, dtype=dtype), (2, 3), **kw)


# -- construction, structure and repr -------------------------------------------------------

CONSTRUCTION: dict[str, Callable[[Any], Any]] = {
    "repr": lambda lib: _s(lib),
    "coalesce": lambda lib: _s(lib).coalesce(),
    "structure": lambda lib: (_s(lib).is_sparse, str(_s(lib).layout), _s(lib).sparse_dim(),
                              _s(lib).dense_dim(), _s(lib)._nnz(), _s(lib).is_coalesced(),
                              _s(lib).coalesce().is_coalesced(), _s(lib).shape, _s(lib).dim(),
                              _s(lib).numel(), str(_s(lib).dtype), _s(lib).is_leaf),
    "to_dense": lambda lib: _s(lib).to_dense(),
    "hybrid": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX[:1]), lib.ones(4, 2), (2, 2)),
    "hybrid_dense": lambda lib: lib.sparse_coo_tensor(
        lib.tensor(IDX[:1]), lib.arange(8.).view(4, 2), (2, 2)).to_dense(),
    "hybrid_coalesce": lambda lib: lib.sparse_coo_tensor(
        lib.tensor(IDX[:1]), lib.arange(8.).view(4, 2), (2, 2)).coalesce(),
    "empty": lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0),
                                               (2, 3)),
    "float64_requires_grad": lambda lib: _s(lib, lib.float64, requires_grad=True),
    "int_values": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([1, 2, 3, 4]),
                                                    (2, 3)),
    "inferred_size": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS)).shape,
    "inferred_hybrid": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.ones(4, 2)).shape,
    "lists": lambda lib: lib.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], [2, 2]),
    "dtype_kw": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (2, 3),
                                                  dtype=lib.float64),
    "to_sparse": lambda lib: lib.tensor([[0., 1.], [2., 0.]]).to_sparse(),
    "to_sparse_1": lambda lib: lib.tensor([[0., 1.], [0., 0.]]).to_sparse(1),
    "to_sparse_0d": lambda lib: lib.tensor(3.).to_sparse(),
    "to_sparse_3d": lambda lib: lib.arange(8.).view(2, 2, 2).to_sparse(2),
    "indices_values": lambda lib: (_s(lib).coalesce().indices(), _s(lib).coalesce().values()),
    "raw": lambda lib: (_s(lib)._indices(), _s(lib)._values(), _s(lib)._values().requires_grad),
    "detach": lambda lib: (_s(lib, requires_grad=True).detach(),
                           _s(lib, requires_grad=True).detach().requires_grad),
    "clone": lambda lib: _s(lib).clone(),
    "item": lambda lib: lib.sparse_coo_tensor(lib.zeros(1, 1, dtype=lib.long), lib.tensor([2.]),
                                              (1,)).item(),
    "same_objects": lambda lib: (lib.ones(2).to_dense().shape, _s(lib).to_sparse().shape,
                                 str(lib.sparse_coo), str(lib.ones(1).layout),
                                 lib.ones(1).is_sparse, lib.ones(2, 3).sparse_dim(),
                                 lib.ones(2, 3).dense_dim()),
    "is": lambda lib: [(lambda x: x.to_dense() is x)(lib.ones(2)),
                       (lambda s: s.to_sparse() is s)(_s(lib)),
                       (lambda c: c.coalesce() is c)(_s(lib).coalesce())],
    "contiguous": lambda lib: _s(lib).is_contiguous(),
    "pickle": lambda lib: __import__("pickle").loads(__import__("pickle").dumps(
        _s(lib, requires_grad=True))),
    "deepcopy": lambda lib: (lambda c: (c, c.requires_grad, c.is_coalesced()))(
        __import__("copy").deepcopy(_s(lib, requires_grad=True).coalesce().detach())),
    "check_invariants_ok": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS),
                                                             (2, 3), check_invariants=True),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTION))
def test_construction_and_repr_match_torch(name: str, torch: Any) -> None:
    _same(lambda lib: [_outcome(lambda: CONSTRUCTION[name](lib))], torch)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "nnz": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.ones(2), (2, 3)),
    "ndim": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (2, 3, 4)),
    "ndim_small": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (2,)),
    "int_requires_grad": lambda lib: lib.sparse_coo_tensor(
        lib.tensor(IDX), lib.tensor([1, 2, 3, 4]), (2, 3), requires_grad=True),
    "out_of_bounds": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (2, 2),
                                                       check_invariants=True),
    "negative": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, -1, 1, 0], [2, 0, 2, 2]]),
                                                  lib.tensor(VALS), (2, 3),
                                                  check_invariants=True),
    "indices_uncoalesced": lambda lib: _s(lib).indices(),
    "values_uncoalesced": lambda lib: _s(lib).values(),
    "to_sparse_bad_dim": lambda lib: lib.ones(2, 2).to_sparse(3),
    "to_sparse_zero_dim": lambda lib: lib.ones(2, 2).to_sparse(0),
    "sparse_to_sparse_dim": lambda lib: _s(lib).to_sparse(1),
    "dense_coalesce": lambda lib: lib.ones(2).coalesce(),
    "dense_is_coalesced": lambda lib: lib.ones(2).is_coalesced(),
    "dense_indices": lambda lib: lib.ones(2).indices(),
    "dense_values": lambda lib: lib.ones(2).values(),
    "numpy": lambda lib: _s(lib).numpy(),
    "tolist": lambda lib: _s(lib).tolist(),
    "data_ptr": lambda lib: _s(lib).data_ptr(),
    "storage": lambda lib: _s(lib).untyped_storage(),
    "item_many": lambda lib: _s(lib).item(),
    "sparse_plus_dense": lambda lib: _s(lib) + lib.ones(2, 3),
    "size_mismatch": lambda lib: _s(lib) + lib.sparse_coo_tensor(lib.tensor(IDX),
                                                                 lib.tensor(VALS), (3, 3)),
    "mm_shapes": lambda lib: lib.mm(_s(lib), lib.ones(2, 2)),
    "sparse_mm_shapes": lambda lib: lib.sparse.mm(_s(lib), lib.ones(2, 2)),
    "sparse_to_sparse_mm_dim": lambda lib: lib.sparse.mm(_s(lib), lib.ones(2, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str, torch: Any) -> None:
    _same(lambda lib: [_outcome(lambda: ERRORS[name](lib))], torch)


@pytest.mark.parametrize("op", ["exp", "sigmoid", "max"])
def test_dense_ops_refuse_a_sparse_tensor(op: str, torch: Any) -> None:
    """An op without a sparse kernel raises torch's NotImplementedError (its first sentence)."""
    for lib in (npgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(NotImplementedError,
                               match=f"^Could not run 'aten::{op}' with arguments from the "
                                     "'SparseCPU' backend. This could be because the operator "
                                     "doesn't exist for this backend, or was omitted during "
                                     r"the selective/custom build process \(if using custom "
                                     r"build\)."):
                getattr(_s(lib), op)()


def test_dense_ops_never_read_a_sparse_tensor_as_values() -> None:
    s = _s(npgrad)
    for f in (lambda: s.view(6), lambda: npgrad.cos(s), lambda: s == s, lambda: npgrad.exp(s),
              lambda: s.mean(), lambda: s.reshape(6), lambda: npgrad.cat([s, s])):
        with pytest.raises(NotImplementedError, match="with arguments from the 'SparseCPU' "
                                                      "backend"):
            f()
    for name in ("_indices", "_values", "_nnz"):
        with pytest.raises(NotImplementedError, match=f"^Could not run 'aten::{name}' with "
                                                      "arguments from the 'CPU' backend"):
            getattr(npgrad.ones(2), name)()


def test_invariant_warning_once_and_check_context(torch: Any) -> None:
    from npgrad._ops import sparse as sp

    sp._warned_invariants[0] = False
    with pytest.warns(UserWarning, match="^Sparse invariant checks are implicitly disabled"):
        _s(npgrad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _s(npgrad)  # once per process, as torch's
    with npgrad.sparse.check_sparse_tensor_invariants():
        assert npgrad.sparse.check_sparse_tensor_invariants.is_enabled()
        with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
            npgrad.sparse_coo_tensor([[-1]], [1.], (2,))
    assert not npgrad.sparse.check_sparse_tensor_invariants.is_enabled()


# -- arithmetic, products, sums ----------------------------------------------------------

def _t(lib: Any) -> Any:
    return lib.sparse_coo_tensor(lib.tensor([[1, 0], [1, 2]]), lib.tensor([1., 2.]), (2, 3))


OPS: dict[str, Callable[[Any], Any]] = {
    "add": lambda lib: _s(lib) + _t(lib),
    "add_coalesced": lambda lib: (_s(lib).coalesce() + _t(lib).coalesce(),
                                  (_s(lib).coalesce() + _t(lib).coalesce()).is_coalesced()),
    "add_same": lambda lib: (lambda u: (u + u, (u + u).is_coalesced()))(
        lib.sparse_coo_tensor(lib.tensor([[1, 1], [0, 0]]), lib.tensor([1., 2.]), (2, 3))),
    "add_alpha": lambda lib: _s(lib).add(_t(lib), alpha=2),
    "sub": lambda lib: _s(lib) - _t(lib),
    "dense_plus_sparse": lambda lib: lib.ones(2, 3) + _s(lib),
    "mul": lambda lib: _s(lib) * 2.5,
    "rmul": lambda lib: 2 * _s(lib),
    "int_mul_float": lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([1, 2, 3, 4]),
                                                       (2, 3)) * 2.5,
    "div": lambda lib: _s(lib) / 2,
    "neg": lambda lib: -_s(lib),
    "sparse_mm": lambda lib: lib.sparse.mm(_s(lib), lib.arange(6.).view(3, 2)),
    "mm": lambda lib: lib.mm(_s(lib), lib.arange(6.).view(3, 2)),
    "matmul": lambda lib: _s(lib) @ lib.arange(6.).view(3, 2),
    "sum": lambda lib: lib.sparse.sum(_s(lib)),
    "sum_method": lambda lib: _s(lib).sum(),
    "sum_dtype": lambda lib: lib.sparse.sum(_s(lib), dtype=lib.float64),
    "sum1": lambda lib: lib.sparse.sum(_s(lib), 1),
    "sum0": lambda lib: lib.sparse.sum(_s(lib), 0),
    "sum01": lambda lib: lib.sparse.sum(_s(lib), (0, 1)),
    "sum_neg": lambda lib: lib.sparse.sum(_s(lib), -1),
    "hybrid_sum_dense_dim": lambda lib: lib.sparse.sum(lib.sparse_coo_tensor(
        lib.tensor(IDX[:1]), lib.arange(8.).view(4, 2), (2, 2)), 1),
    "hybrid_sum_sparse_dim": lambda lib: lib.sparse.sum(lib.sparse_coo_tensor(
        lib.tensor(IDX[:1]), lib.arange(8.).view(4, 2), (2, 2)), 0),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_match_torch(name: str, torch: Any) -> None:
    _same(lambda lib: [_outcome(lambda: OPS[name](lib))], torch)


# -- gradients ---------------------------------------------------------------------------

W = np.arange(6.).reshape(2, 3) + 1
D = np.arange(6.).reshape(3, 2)

GRADS: dict[str, Callable[[Any, Any], Any]] = {
    "to_dense": lambda lib, s: (s.to_dense() * lib.tensor(W)).sum(),
    "sparse_mm": lambda lib, s: lib.sparse.mm(s, lib.tensor(D)).sum(),
    "mm": lambda lib, s: lib.mm(s, lib.tensor(D)).sum(),
    "sum": lambda lib, s: lib.sparse.sum(s),
    "sum1": lambda lib, s: (lib.sparse.sum(s, 1).to_dense()
                            * lib.tensor([1., 10.], dtype=lib.float64)).sum(),
    "sum01": lambda lib, s: lib.sparse.sum(s, (0, 1)),
    "values": lambda lib, s: (s.coalesce().values()
                              * lib.tensor([1., 2., 3.], dtype=lib.float64)).sum(),
    "mul": lambda lib, s: (s * 2).to_dense().sum(),
    "add": lambda lib, s: ((s * 3) + s).to_dense().sum(),
    "three_paths": lambda lib, s: s.to_dense().sum() + lib.sparse.sum(s) + lib.mm(
        s, lib.tensor(D)).sum(),
    "dense_plus_sparse": lambda lib, s: (lib.tensor(W) + s).sum(),
    "neg": lambda lib, s: (-s).to_dense().sum(),
    "div": lambda lib, s: (s / 4).to_dense().sum(),
    "coalesce": lambda lib, s: (s.coalesce().to_dense() * lib.tensor(W)).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name: str, torch: Any) -> None:
    """grad_fn name, the leaf's gradient (sparse or dense, as torch gives it) and its repr."""
    def run(lib: Any) -> list:
        s = _s(lib, lib.float64, requires_grad=True)
        out = GRADS[name](lib, s)
        names = type(out.grad_fn).__name__
        out.backward()
        return [names, _text(s.grad)]
    _same(run, torch)


def _graph_run(lib: Any) -> list:
    s = _s(lib, lib.float64, requires_grad=True)
    res = []
    for f in (lambda: lib.sparse.mm(s, lib.ones(3, 2, dtype=lib.float64)),
              lambda: lib.mm(s, lib.ones(3, 2, dtype=lib.float64)),
              lambda: s.to_dense(), lambda: lib.sparse.sum(s), lambda: lib.sparse.sum(s, 1),
              lambda: s.coalesce(), lambda: s.coalesce().values(), lambda: s * 2, lambda: s + s,
              lambda: s.clone(), lambda: -s, lambda: s / 2, lambda: s.sum(),
              lambda: lib.sparse.sum(s.coalesce())):
        out = f()
        res.append([type(out.grad_fn).__name__]
                   + [None if n is None else type(n).__name__
                      for n, _ in out.grad_fn.next_functions])
    x = lib.tensor([[0., 1.], [2., 0.]], dtype=lib.float64, requires_grad=True)
    res.append([type(x.to_sparse().grad_fn).__name__, type(x.to_sparse(1).grad_fn).__name__])
    (x.to_sparse().to_dense() * lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64)).sum() \
        .backward()
    res.append(_text(x.grad))
    x.grad = None
    lib.sparse.sum(x.to_sparse()).backward()
    res.append(_text(x.grad))
    vv = lib.tensor(VALS, dtype=lib.float64, requires_grad=True)
    sv = lib.sparse_coo_tensor(lib.tensor(IDX), vv, (2, 3))
    res.append([type(sv.grad_fn).__name__, sv.requires_grad, sv.is_leaf])
    (sv.to_dense() * lib.tensor(W)).sum().backward()
    res.append(_text(vv.grad))
    res.append(_outcome(lambda: (sv.to_dense() * lib.tensor(W)).sum().backward()))  # freed
    vv.grad = None
    lib.sparse.mm(lib.sparse_coo_tensor(lib.tensor(IDX), vv, (2, 3)),
                  lib.tensor(D)).sum().backward()
    res.append(_text(vv.grad))
    dg = lib.tensor(D, requires_grad=True)
    lib.sparse.mm(_s(lib, lib.float64, requires_grad=True), dg).sum().backward()
    res.append(_text(dg.grad))
    # accumulation into .grad: sparse + sparse stays sparse, with a dense one it is dense
    for first, second in (("to_dense", "to_dense"), ("mm", "to_dense"), ("to_dense", "mm")):
        s = _s(lib, lib.float64, requires_grad=True)
        GRADS[first](lib, s).backward()
        GRADS[second](lib, s).backward()
        res.append(_text(s.grad))
    s = _s(lib, lib.float64, requires_grad=True)
    res.append(_text(lib.autograd.grad(lib.sparse.mm(s, lib.tensor(D)).sum(), s)[0]))
    return res


def test_graphs_accumulation_and_values_gradients_match_torch(torch: Any) -> None:
    _same(_graph_run, torch)


def _idx() -> Any:
    return npgrad.tensor(IDX)


def _vals() -> Any:
    return npgrad.tensor(np.array(VALS), requires_grad=True)


def _dense(seed: int, shape: tuple) -> Any:
    return npgrad.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


GRADCHECKS: dict[str, tuple] = {
    "to_sparse_to_dense": (lambda t: t.to_sparse().to_dense(), lambda: (_dense(0, (2, 3)),)),
    "to_sparse_1": (lambda t: t.to_sparse(1).to_dense(), lambda: (_dense(1, (2, 3)),)),
    "sparse_mm_values": (lambda v: npgrad.sparse.mm(npgrad.sparse_coo_tensor(_idx(), v, (2, 3)),
                                                    npgrad.tensor(D)), lambda: (_vals(),)),
    "sparse_mm_both": (lambda v, d: npgrad.sparse.mm(npgrad.sparse_coo_tensor(_idx(), v, (2, 3)),
                                                     d), lambda: (_vals(), _dense(2, (3, 2)))),
    "mm_values": (lambda v: npgrad.mm(npgrad.sparse_coo_tensor(_idx(), v, (2, 3)),
                                      npgrad.tensor(D)), lambda: (_vals(),)),
    "sum_dim": (lambda v: npgrad.sparse.sum(npgrad.sparse_coo_tensor(_idx(), v, (2, 3)),
                                            1).to_dense(), lambda: (_vals(),)),
    "sum_all": (lambda v: npgrad.sparse.sum(npgrad.sparse_coo_tensor(_idx(), v, (2, 3))),
                lambda: (_vals(),)),
    "values": (lambda v: npgrad.sparse_coo_tensor(_idx(), v, (2, 3)).coalesce().values() ** 2,
               lambda: (_vals(),)),
    "add_mul": (lambda v: ((npgrad.sparse_coo_tensor(_idx(), v, (2, 3)) * 3)
                           + npgrad.sparse_coo_tensor(_idx(), v * v, (2, 3))).to_dense(),
                lambda: (_vals(),)),
    "dense_plus_sparse": (lambda d, v: d + npgrad.sparse_coo_tensor(_idx(), v, (2, 3)),
                          lambda: (_dense(3, (2, 3)), _vals())),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name: str) -> None:
    f, inputs = GRADCHECKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(f, inputs())


@pytest.mark.parametrize("name", ["sparse_mm_both", "to_sparse_to_dense", "sum_dim", "values"])
def test_gradgradcheck(name: str) -> None:
    f, inputs = GRADCHECKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradgradcheck(lambda *a: f(*a) ** 2, inputs())


def test_hand_derived_values() -> None:
    """Without torch: duplicates add up, a sparse product and its masked gradient."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = npgrad.sparse_coo_tensor(IDX, VALS, (2, 3), requires_grad=True)
    assert s.to_dense().tolist() == [[0., 0., 4.], [4., 0., 5.]]
    c = s.coalesce()
    assert c.indices().tolist() == [[0, 1, 1], [2, 0, 2]] and c.values().tolist() == [4., 4., 5.]
    d = npgrad.tensor([[1., 2.], [3., 4.], [5., 6.]])
    assert npgrad.sparse.mm(s, d).tolist() == [[20., 24.], [29., 38.]]
    npgrad.sparse.mm(s, d).sum().backward()
    # row i of grad @ d.T is the row sums of d: 3, 7, 11, read at the pattern's columns
    assert s.grad.is_sparse and s.grad.coalesce().values().tolist() == [11., 3., 11.]


def test_forward_ad_is_refused_as_torch_refuses(torch: Any) -> None:
    def run(lib: Any) -> list:
        fwad = __import__(lib.__name__ + ".autograd.forward_ad", fromlist=["dual_level"])
        out = []
        with fwad.dual_level():
            v = fwad.make_dual(lib.tensor([1., 2.]), lib.tensor([10., 20.]))
            d = fwad.make_dual(lib.ones(2, 2), lib.ones(2, 2))
            for f in (lambda: lib.sparse_coo_tensor([[0, 1], [1, 0]], v, (2, 2)),
                      lambda: d.to_sparse(),
                      lambda: lib.sparse.mm(lib.sparse_coo_tensor([[0, 1], [1, 0]],
                                                                  lib.ones(2), (2, 2)), d),
                      lambda: fwad.unpack_dual(lib.sparse_coo_tensor(
                          [[0, 1], [1, 0]], lib.ones(2), (2, 2)).to_dense()).tangent):
                out.append(_outcome(f))
        return out
    _same(run, torch)


def test_anomaly_mode_checks_sparse_gradients(torch: Any) -> None:
    def run(lib: Any) -> list:
        out = []
        for bad in (False, True):
            s = lib.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), requires_grad=True)
            w = lib.tensor([[1., float("nan") if bad else 3.], [1., 1.]])
            with lib.autograd.detect_anomaly():
                out.append(_outcome(lambda: ((s.to_dense() * w).sum().backward(), s.grad)[1]))
        return out
    _same(run, torch)
