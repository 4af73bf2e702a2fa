"""pickle, copy.copy and copy.deepcopy of tensors, Parameters, Modules and optimizers, as torch's;
DLPack exchange with NumPy and torch, zero copy."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import npgrad
from npgrad.utils.dlpack import from_dlpack, to_dlpack


def shares_memory(a, b):
    return np.shares_memory(a._data, b._data)


def behaviour(m):
    """What pickle and copy do to a tensor in library ``m`` (torch or npgrad): comparable facts."""
    x = m.arange(6.).reshape(2, 3).requires_grad_()
    x.grad = m.ones(2, 3)
    y = x.detach()
    facts = {}
    z = pickle.loads(pickle.dumps(x))
    facts["pickle"] = (z.tolist(), z.requires_grad, z.grad is None, z.is_leaf)
    nonleaf = pickle.loads(pickle.dumps(x * 2))
    facts["pickle non-leaf"] = (nonleaf.tolist(), nonleaf.requires_grad, nonleaf.is_leaf)
    views = pickle.loads(pickle.dumps([y, y[1]]))
    views[0][1, 0] = 100.0
    facts["pickled views"] = views[1].tolist()  # not shared after pickle, as in torch
    d = copy.deepcopy(x)
    facts["deepcopy"] = (d.tolist(), d.requires_grad, d.grad.tolist(), d is x)
    dv = copy.deepcopy([y, y[1], y.t()])
    dv[0][1, 0] = 7.0
    facts["deepcopied views"] = (dv[1].tolist(), dv[2].tolist(), y[1, 0].item())
    c = copy.copy(x)
    facts["copy"] = (c is x, c.grad is None, c.requires_grad, c.data_ptr() == x.data_ptr())
    with pytest.raises(RuntimeError) as info:
        copy.deepcopy(x * 2)
    facts["deepcopy non-leaf"] = str(info.value)
    p = m.nn.Parameter(m.ones(2))
    q = pickle.loads(pickle.dumps(p))
    facts["parameter"] = (type(q).__name__, q.requires_grad, q.tolist())
    frozen = copy.deepcopy(m.nn.Parameter(m.ones(1), requires_grad=False))
    facts["frozen parameter"] = (type(frozen).__name__, frozen.requires_grad)
    return facts


def test_pickle_and_copy_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = behaviour(npgrad), behaviour(torch)
    assert ours == theirs
    assert theirs["deepcopy non-leaf"].startswith("Only Tensors created explicitly by the user "
                                                  "(graph leaves) support the deepcopy protocol")


def test_pickle_and_copy_without_torch():
    facts = behaviour(npgrad)
    assert facts["pickle"] == ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], True, True, True)
    assert facts["pickled views"] == [3.0, 4.0, 5.0]
    assert facts["deepcopied views"] == ([7.0, 4.0, 5.0], [[0.0, 7.0], [1.0, 4.0], [2.0, 5.0]],
                                         3.0)
    assert facts["copy"] == (False, True, True, True)


def test_every_dtype_pickles():
    for dtype in (npgrad.float32, npgrad.float64, npgrad.float16, npgrad.int64, npgrad.int32,
                  npgrad.int16, npgrad.int8, npgrad.uint8, npgrad.bool):
        t = npgrad.tensor([[1, 0], [0, 1]], dtype=dtype)[:, 1]
        back = pickle.loads(pickle.dumps(t))
        assert back.dtype is dtype and back.tolist() == t.tolist()
    assert pickle.loads(pickle.dumps(npgrad.tensor(2.5))).tolist() == 2.5
    assert pickle.loads(pickle.dumps(npgrad.zeros(0, 3))).shape == (0, 3)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int64", "int32", "int16",
                                  "int8", "uint8", "bool"])
def test_dtype_objects_pickle(name):
    dtype = getattr(npgrad, name)
    assert pickle.loads(pickle.dumps(dtype)) is dtype
    assert copy.deepcopy(dtype) is dtype


def test_modules_and_optimizers_pickle_and_deepcopy():
    model = npgrad.nn.Sequential(npgrad.nn.Linear(2, 3), npgrad.nn.BatchNorm1d(3),
                                 npgrad.nn.Linear(3, 1))
    optimizer = npgrad.optim.Adam(model.parameters(), lr=0.1)
    x = npgrad.linspace(-1, 1, 8).reshape(4, 2)
    model(x).sum().backward()
    optimizer.step()
    for clone in (lambda o: pickle.loads(pickle.dumps(o)), copy.deepcopy):
        m2, o2 = clone((model, optimizer))
        assert m2 is not model and m2[0].weight is not model[0].weight
        assert type(m2[0].weight) is npgrad.nn.Parameter and m2[0].weight.requires_grad
        assert o2.param_groups[0]["params"][0] is m2[0].weight  # links survive together
        for key, value in model.state_dict().items():
            np.testing.assert_array_equal(m2.state_dict()[key].numpy(), value.numpy())
        a, b = optimizer.state_dict(), o2.state_dict()
        assert a["param_groups"] == b["param_groups"]
        for i in a["state"]:
            for k in a["state"][i]:
                np.testing.assert_array_equal(a["state"][i][k].numpy(), b["state"][i][k].numpy())
        # the copies train on their own, and the same way
        for m, o in ((model, optimizer), (m2, o2)):
            o.zero_grad()
            m(x).pow(2).sum().backward()
            o.step()
        np.testing.assert_array_equal(m2[0].weight.detach().numpy(),
                                      model[0].weight.detach().numpy())


# -- DLPack -----------------------------------------------------------------------------------

def test_dlpack_with_numpy_is_zero_copy():
    a = np.arange(6.0).reshape(2, 3)
    t = npgrad.from_dlpack(a)
    a[0, 0] = 9.0
    assert t[0, 0].item() == 9.0 and t.dtype is npgrad.float64
    t.add_(1.0)  # writable, as torch.from_dlpack(ndarray) is
    assert a[0, 0] == 10.0
    x = npgrad.arange(4, dtype=npgrad.int32)
    b = np.from_dlpack(x)  # (read-only before NumPy 2, which had no DLPack read-only flag)
    x[1] = -5
    assert b.tolist() == [0, -5, 2, 3] and b.dtype == np.int32 and np.shares_memory(b, x._data)
    assert x.__dlpack_device__() == (1, 0)
    view = npgrad.arange(12.).reshape(3, 4).t()
    np.testing.assert_array_equal(np.from_dlpack(view), view.numpy())
    assert from_dlpack(to_dlpack(x)).tolist() == [0, -5, 2, 3]


def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    x = npgrad.arange(6.).reshape(2, 3)
    tx = torch.from_dlpack(x)
    tx[1, 1] = 50.0
    assert x[1, 1].item() == 50.0 and tx.dtype == torch.float32 and tx.shape == (2, 3)
    t = torch.arange(4, dtype=torch.int64)
    n = npgrad.from_dlpack(t)
    t[0] = 7
    assert n.tolist() == [7, 1, 2, 3] and n.dtype is npgrad.int64
    legacy = npgrad.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    t[1] = 8
    assert legacy.tolist() == [7, 8, 2, 3]
    back = torch.utils.dlpack.from_dlpack(to_dlpack(x))
    assert back.tolist() == x.tolist()
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # older NumPy exports no bool arrays
        assert torch.from_dlpack(npgrad.tensor([True, False])).tolist() == [True, False]


def test_dlpack_refuses_tensors_that_require_grad():
    torch = pytest.importorskip("torch")
    w = npgrad.ones(2, requires_grad=True)
    with pytest.raises(BufferError) as ours:
        w.__dlpack__()
    with pytest.raises(BufferError) as theirs:
        torch.ones(2, requires_grad=True).__dlpack__()
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        torch.from_dlpack(w)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        npgrad.from_dlpack(torch.ones(2, requires_grad=True))
    assert torch.from_dlpack(w.detach()).tolist() == [1.0, 1.0]


def test_from_dlpack_rejects_other_objects():
    with pytest.raises(TypeError, match="expects an object with __dlpack__"):
        npgrad.from_dlpack([1, 2])
