"""Names real PyTorch scripts need, each compared with torch's CPU build: constants, devices,
legacy tensor types, ``keepdims``, onnx / distributed / nn.parallel, mixed precision, histogram."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npgrad
from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")


def env(m):
    return {"torch": m, "x": m.tensor([[1., 2.], [3., 4.]])}


def same_error(expr: str) -> None:
    assert_same_error(expr, env)


def torch_repr(obj) -> str:
    return repr(obj).replace("npgrad.", "torch.")


# -- constants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["inf", "nan", "pi", "e", "newaxis"])
def test_constants(name):
    mine, theirs = getattr(npgrad, name), getattr(torch, name)
    if theirs is None:
        assert mine is None
    elif np.isnan(theirs):
        assert np.isnan(mine)
    else:
        assert mine == theirs and type(mine) is type(theirs)


def test_newaxis_indexes_like_none():
    x = npgrad.arange(3)
    assert x[npgrad.newaxis].shape == torch.arange(3)[torch.newaxis].shape


# -- keepdims, NumPy's spelling ----------------------------------------------------------------

@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod", "std", "var", "max", "min",
                                "any", "all", "logsumexp", "nansum", "nanmean", "argmax",
                                "argmin", "median", "nanmedian"])
def test_keepdims_alias(op):
    data = np.arange(6.0).reshape(2, 3)
    got = getattr(npgrad.tensor(data), op)(1, keepdims=True)
    want = getattr(torch.tensor(data), op)(1, keepdims=True)
    got = got[0] if isinstance(got, tuple) else got
    want = want[0] if isinstance(want, tuple) else want
    assert tuple(got.shape) == tuple(want.shape) == (2, 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_keepdims_false_drops_the_dim():
    x = np.arange(6.0).reshape(2, 3)
    assert tuple(npgrad.tensor(x).sum(1, keepdims=False).shape) == \
        tuple(torch.tensor(x).sum(1, keepdims=False).shape) == (2,)


# -- legacy tensor types -------------------------------------------------------------------------

LEGACY = ["LongTensor", "FloatTensor", "DoubleTensor", "IntTensor", "BoolTensor", "ByteTensor",
          "HalfTensor", "ShortTensor", "CharTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_class_from_data(name):
    data = [1.7, 0.0, -2.5] if name not in ("ByteTensor", "BoolTensor") else [1, 0, 2]
    mine, theirs = getattr(npgrad, name)(data), getattr(torch, name)(data)
    assert torch_repr(mine.dtype) == repr(theirs.dtype)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert mine.type() == theirs.type() == f"torch.{name}"
    assert torch_repr(getattr(npgrad, name)) == repr(getattr(torch, name))
    assert isinstance(mine, getattr(npgrad, name)) == isinstance(theirs, getattr(torch, name))
    assert isinstance(npgrad.zeros(1), getattr(npgrad, name)) == \
        isinstance(torch.zeros(1), getattr(torch, name))
    assert type(mine) is npgrad.Tensor
    assert issubclass(getattr(npgrad, name), npgrad.Tensor) == \
        issubclass(getattr(torch, name), torch.Tensor)


def test_legacy_class_from_sizes():
    for lib in (npgrad, torch):
        assert tuple(lib.LongTensor(2, 3).shape) == (2, 3)
        assert tuple(lib.FloatTensor().shape) == (0,)
        assert tuple(lib.FloatTensor(lib.Size([4])).shape) == (4,)
        assert lib.LongTensor(2).dtype == lib.int64
    np.testing.assert_array_equal(npgrad.FloatTensor((2, 3)).numpy(), [2., 3.])


@pytest.mark.parametrize("expr", ["torch.FloatTensor(2.5)",
                                  "torch.FloatTensor(torch.tensor([1, 2]))",
                                  "x.type('torch.Foo')", "x.type(int)", "x.type('float')",
                                  "x.type('torch.cuda.FloatTensor')"])
def test_legacy_errors(expr):
    same_error(expr)


@pytest.mark.parametrize("target", ["torch.LongTensor", "torch.IntTensor", "torch.DoubleTensor",
                                    "torch.BoolTensor", "torch.FloatTensor"])
def test_type_conversion(target):
    data = [1.5, -2.7, 0.0]
    name = target.split(".")[1]
    for arg in (target, None):
        mine = npgrad.tensor(data).type(arg or getattr(npgrad, name))
        theirs = torch.tensor(data).type(arg or getattr(torch, name))
        assert torch_repr(mine) == repr(theirs)
    assert npgrad.tensor(data).type(npgrad.float64).dtype is npgrad.float64
    assert npgrad.tensor(data).type(dtype=npgrad.float64).dtype is npgrad.float64


def test_module_type_with_legacy_class():
    m = npgrad.nn.Linear(2, 2).type(npgrad.DoubleTensor)
    assert m.weight.dtype is npgrad.float64


# -- devices -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["'cpu'", "'cuda'", "'cuda:0'", "'cuda', 1", "'cpu', 0",
                                  "type='cuda', index=3", "'mps'", "'cpu:0'",
                                  "torch.device('cuda:1')"])
def test_device_construction(spec):
    mine = eval(f"torch.device({spec})", {}, {"torch": npgrad})
    theirs = eval(f"torch.device({spec})", {}, {"torch": torch})
    assert repr(mine) == repr(theirs)
    assert str(mine) == str(theirs)
    assert (mine.type, mine.index) == (theirs.type, theirs.index)


def test_device_equality_and_hash():
    for lib in (npgrad, torch):
        d = lib.device("cuda:0")
        assert d == lib.device("cuda", 0) and d != lib.device("cuda")
        assert (d == "cuda:0") is False and (lib.device("cpu") == "cpu") is False
        assert hash(d) == hash(lib.device("cuda:0"))
        assert lib.zeros(1).device == lib.device("cpu")
        assert lib.zeros(1).get_device() == -1 and lib.zeros(1).is_pinned() is False


@pytest.mark.parametrize("expr", [
    "torch.device('gpu')", "torch.device('cuda:x')", "torch.device('cuda:-1')",
    "torch.device('cuda', -1)", "torch.device('cuda:01')", "torch.device('cuda:1:2')",
    "torch.device('cuda:1', 2)", "torch.device('')", "torch.device(1.5)", "torch.device(None)",
    "torch.device('cuda', 'a')", "torch.device(0)", "torch.device('CUDA')",
])
def test_device_construction_errors(expr):
    same_error(expr)


@pytest.mark.parametrize("expr", [
    "torch.zeros(2, device='cuda')", "torch.zeros(2, device='cuda:0')",
    "torch.ones(2, device='gpu')", "torch.tensor([1.], device='cuda')",
    "torch.tensor([1.], device=torch.device('cuda:0'))", "torch.arange(3, device='cuda')",
    "torch.empty(2, device='cuda')", "torch.full((2,), 1., device='cuda')",
    "torch.eye(2, device='cuda')", "torch.linspace(0, 1, 3, device='cuda')",
    "torch.as_tensor([1], device='cuda')", "torch.zeros_like(x, device='cuda')",
    "torch.rand(2, device='cuda')", "torch.randn(2, device='cuda')",
    "torch.randint(3, (2,), device='cuda')", "torch.randperm(3, device='cuda')",
    "torch.zeros(2, device='xpu')", "torch.zeros(2, device=0)",
    "x.to('cuda')", "x.to('cuda:1')", "x.to('gpu')", "x.to(torch.device('cuda'))",
    "x.to(0)", "x.to('cuda', non_blocking=True)", "x.to(device='cuda')",
    "x.to(torch.device('cuda'), torch.float64)", "x.cuda()", "x.cuda(0)", "x.cuda('cpu')",
    "x.cuda(device='cuda:0')", "x.new_zeros(2, device='cuda')",
    "torch.nn.Linear(2, 2).to('cuda')", "torch.nn.Linear(2, 2).cuda()",
    "torch.nn.ReLU().to('gpu')",
])
def test_using_an_absent_device_fails_as_torch(expr):
    same_error(expr)


def test_cpu_devices_are_accepted():
    x = npgrad.ones(2)
    assert x.to("cpu") is x and x.to("cpu:0") is x and x.to(npgrad.device("cpu", 0)) is x
    assert npgrad.zeros(2, device=npgrad.device("cpu", 0)).shape == (2,)
    # a module without tensors moves nowhere, so torch does not complain
    assert isinstance(npgrad.nn.ReLU().cuda(), npgrad.nn.ReLU)
    assert isinstance(npgrad.nn.ReLU().to("cuda"), npgrad.nn.ReLU)
    dev = npgrad.device("cuda" if npgrad.cuda.is_available() else "cpu")
    assert npgrad.nn.Linear(2, 2).to(dev).weight.dtype is npgrad.float32


# -- importable modules: onnx, distributed, nn.parallel -------------------------------------------

def test_onnx_importable_and_refuses_only_when_used():
    import npgrad.onnx as onnx

    assert onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match="cannot export models to ONNX"):
        onnx.export(npgrad.nn.Linear(2, 1), (npgrad.zeros(1, 2),), "m.onnx")


def test_distributed_answers_as_the_cpu_build():
    import torch.distributed as tdist

    import npgrad.distributed as dist

    for name in ("is_available", "is_initialized", "is_gloo_available", "is_nccl_available",
                 "is_mpi_available", "is_torchelastic_launched"):
        assert getattr(dist, name)() == getattr(tdist, name)(), name
    for fn in ("get_rank()", "get_world_size()", "barrier()", "get_backend()",
               "all_reduce(torch.ones(1))"):
        assert_same_error(f"dist.{fn}", lambda m: {
            "dist": dist if m is npgrad else tdist, "torch": m})
    assert repr(dist.ReduceOp.SUM) == repr(tdist.ReduceOp.SUM)
    assert str(dist.ReduceOp.SUM) == str(tdist.ReduceOp.SUM)


def test_distributed_env_rendezvous_error(monkeypatch):
    import torch.distributed as tdist

    import npgrad.distributed as dist

    monkeypatch.delenv("RANK", raising=False)
    errors = []
    for mod in (dist, tdist):
        with pytest.raises(ValueError) as info:
            mod.init_process_group("gloo")
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    with pytest.raises(RuntimeError) as mine:
        dist.init_process_group("nccl", rank=0, world_size=1)
    assert str(mine.value) == "Distributed package doesn't have NCCL built in"


def test_distributed_one_process_group():
    import npgrad.distributed as dist

    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        assert dist.get_backend() == "gloo"
        t = npgrad.tensor([1., 2.])
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        out = [npgrad.zeros(2)]
        dist.all_gather(out, t)
        np.testing.assert_array_equal(out[0].numpy(), [1., 2.])
        ddp = npgrad.nn.parallel.DistributedDataParallel(npgrad.nn.Linear(2, 1))
        assert list(ddp.state_dict()) == ["module.weight", "module.bias"]
        np.testing.assert_array_equal(ddp(t).detach().numpy(), ddp.module(t).detach().numpy())
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo", rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="world size of 1 only"):
        dist.init_process_group("gloo", rank=0, world_size=2)


def test_data_parallel_wraps_the_module():
    import npgrad.nn.parallel as parallel

    tm = torch.nn.DataParallel(torch.nn.Linear(2, 1))
    nm = npgrad.nn.DataParallel(npgrad.nn.Linear(2, 1))
    assert parallel.DataParallel is npgrad.nn.DataParallel
    assert torch_repr(nm) == repr(tm)
    assert list(nm.state_dict()) == list(tm.state_dict())
    assert nm.device_ids == tm.device_ids == []
    x = npgrad.ones(3, 2)
    np.testing.assert_array_equal(nm(x).detach().numpy(), nm.module(x).detach().numpy())
    np.testing.assert_array_equal(parallel.data_parallel(nm.module, x).detach().numpy(),
                                  nm.module(x).detach().numpy())


def test_ddp_needs_a_process_group():
    assert_same_error("torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))",
                      lambda m: {"torch": m})


# -- mixed precision on a CPU run ----------------------------------------------------------------

def _record(make, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        obj = make(lib)
    return obj, [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("make", [
    lambda m: m.cuda.amp.GradScaler(), lambda m: m.amp.GradScaler(),
    lambda m: m.amp.GradScaler("cuda"), lambda m: m.amp.GradScaler("cpu"),
    lambda m: m.cuda.amp.GradScaler(enabled=False), lambda m: m.cuda.amp.autocast(),
    lambda m: m.autocast("cuda"), lambda m: m.autocast("cpu", enabled=False),
    lambda m: m.amp.autocast("cuda"), lambda m: m.autocast(device_type="cuda", dtype=m.float16),
    lambda m: m.cpu.amp.autocast(enabled=False), lambda m: m.cpu.amp.GradScaler(),
])
def test_amp_construction_warnings(make):
    if make(npgrad) is None:  # the constructors must exist
        pytest.fail("constructor returned None")
    (mine, mine_w), (theirs, their_w) = _record(make, npgrad), _record(make, torch)
    assert mine_w == their_w
    assert mine.is_enabled() == theirs.is_enabled() if hasattr(theirs, "is_enabled") else True


def test_torch_cpu_queries():
    for name in ("is_available", "device_count", "current_device", "synchronize"):
        assert getattr(npgrad.cpu, name)() == getattr(torch.cpu, name)(), name


def test_autocast_block_is_full_precision_on_cpu_runs():
    for lib in (npgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autocast("cuda"):
                y = lib.ones(2, 2) @ lib.ones(2, 2)
            with lib.cuda.amp.autocast():
                z = lib.ones(2, 2) @ lib.ones(2, 2)
        assert y.dtype == z.dtype == lib.float32
        assert lib.is_autocast_enabled() is False
    assert npgrad.autocast("cuda", enabled=False).fast_dtype is npgrad.float16
    assert npgrad.autocast("cpu").fast_dtype is npgrad.bfloat16

    @npgrad.autocast("cpu", enabled=False)
    def f(a):
        return a * 2

    np.testing.assert_array_equal(f(npgrad.ones(2)).numpy(), [2., 2.])


def test_enabled_cpu_autocast_is_refused():
    with pytest.raises(RuntimeError, match="does not implement autocast on the CPU"):
        with npgrad.autocast("cpu"):
            pass


def test_autocast_bad_device():
    same_error("torch.autocast('gpu')")


def _train_with_scaler(lib, scaler, steps=4, poison=None):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        model.bias.copy_(lib.tensor([0.01, -0.02]))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.tensor([[1., 2., 3.], [-1., 0.5, 2.]])
    out = []
    for i in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        if poison == i:
            model.weight.grad[0, 0] = float("inf")
        scaler.unscale_(opt)
        ret = scaler.step(opt)
        scaler.update()
        out.append((scaled.item(), ret, scaler.get_scale(), model.weight.detach().numpy().copy()))
    return out, scaler.state_dict()


@pytest.mark.parametrize("kind", ["disabled", "cpu", "cpu-inf", "cpu-growth"])
def test_grad_scaler_matches_torch(kind):
    results = []
    for lib in (npgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "disabled":
                scaler = lib.cuda.amp.GradScaler()
            elif kind == "cpu-growth":
                scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
            else:
                scaler = lib.amp.GradScaler("cpu")
        results.append(_train_with_scaler(lib, scaler, poison=1 if kind == "cpu-inf" else None))
    (mine, mine_sd), (theirs, their_sd) = results
    assert mine_sd == their_sd
    for (ms, mr, mscale, mw), (ts, tr, tscale, tw) in zip(mine, theirs):
        # The scaler's decisions are exact; the loss goes through addmm, whose float32 rounding
        # (bias accumulated inside the GEMM in torch) may differ from npgrad's in the last bit.
        assert mscale == tscale and mr == tr
        assert ms == pytest.approx(ts, rel=1e-6)
        np.testing.assert_allclose(mw, tw, rtol=1e-6, atol=1e-7)


def test_disabled_scaler_is_transparent():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = npgrad.cuda.amp.GradScaler()
    loss = npgrad.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    assert scaler.state_dict() == {} and not scaler.is_enabled()


@pytest.mark.parametrize("expr", [
    "s.scale(2.0)", "s.load_state_dict({})",
])
def test_grad_scaler_errors(expr):
    assert_same_error(expr, lambda m: {"s": m.amp.GradScaler("cpu")})


def test_grad_scaler_stage_errors():
    for lib in (npgrad, torch):
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        s = lib.amp.GradScaler("cpu")
        s.scale((w * 2).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError) as info:
            s.unscale_(opt)
        assert "unscale_() has already been called" in str(info.value)
        s.step(opt)
        with pytest.raises(RuntimeError) as info:
            s.step(opt)
        assert str(info.value) == "step() has already been called since the last update()."


# -- histogram -----------------------------------------------------------------------------------

def _hist_case(rng, trial):
    n = int(rng.integers(0, 50))
    dt = [np.float32, np.float64][trial % 2]
    x = (rng.standard_normal(n) * rng.uniform(0.1, 100)).astype(dt)
    if trial % 5 == 0:
        x = np.round(x)
    kw = {}
    if trial % 3 == 0:
        kw["range"] = (float(rng.uniform(-5, 0)), float(rng.uniform(0, 5)))
    if trial % 4 == 0:
        # integer-valued weights: exact sums, so density is exact too
        kw["weight"] = rng.integers(0, 4, n).astype(dt)
    return x, int(rng.integers(1, 20)), kw, trial % 7 == 0


def _hist(lib, x, bins, kw, density):
    k = dict(kw)
    if "weight" in k:
        k["weight"] = lib.from_numpy(k["weight"].copy())
    if isinstance(bins, np.ndarray):
        bins = lib.from_numpy(bins.copy())
    return lib.histogram(lib.from_numpy(x.copy()), bins, density=density, **k)


def test_histogram_matches_torch_bit_for_bit():
    rng = np.random.default_rng(0)
    for trial in range(300):
        x, bins, kw, density = _hist_case(rng, trial)
        mine, theirs = _hist(npgrad, x, bins, kw, density), _hist(torch, x, bins, kw, density)
        np.testing.assert_array_equal(mine.bin_edges.numpy(), theirs.bin_edges.numpy())
        np.testing.assert_array_equal(mine.hist.numpy(), theirs.hist.numpy())
        assert mine.hist.dtype.name == str(theirs.hist.dtype).split(".")[1]
        edges = np.sort(rng.uniform(-3, 3, int(rng.integers(2, 8)))).astype(x.dtype)
        mine, theirs = _hist(npgrad, x, edges, {}, False), _hist(torch, x, edges, {}, False)
        np.testing.assert_array_equal(mine.hist.numpy(), theirs.hist.numpy())


def test_histogram_edge_cases_and_repr():
    cases = [(np.array([1., 1.], np.float32), 3, {}), (np.array([], np.float32), 3, {}),
             (np.array([1., 2, 1, 4, 2.5, 0.3, 7], np.float32), 2, {"range": (1., 1.)}),
             (np.array([1., 2, 1, 4, 2.5, 0.3, 7], np.float32), np.array([2., 1.], np.float32), {}),
             (np.array([1., 2, 1, 4, 2.5, 0.3, 7], np.float32), 3,
              {"weight": np.full(7, 2.0, np.float32)})]
    for x, bins, kw in cases:
        for density in (False, True):
            mine, theirs = _hist(npgrad, x, bins, kw, density), _hist(torch, x, bins, kw, density)
            assert torch_repr(mine) == repr(theirs)
    x = npgrad.tensor([1., 2., 1.])
    assert torch_repr(x.histogram(2)) == repr(torch.tensor([1., 2., 1.]).histogram(2))
    assert mine.hist is mine[0] and mine.bin_edges is mine[1]


@pytest.mark.parametrize("expr", [
    "torch.histogram(torch.tensor([1, 2]), 2)", "torch.histogram(x, 0)", "torch.histogram(x, -1)",
    "torch.histogram(x, 2, range=(3., 1.))", "torch.histogram(x, 2, weight=torch.ones(3))",
    "torch.histogram(x.double(), torch.tensor([0., 1.]))",
    "torch.histogram(torch.tensor([float('nan'), 1.]), 3)",
    "torch.histogram(torch.tensor([float('inf'), 1.]), 3)",
    "torch.histogram(x, bins=torch.tensor([[0., 1.]]))", "torch.histogram(x, torch.tensor([1.]))",
])
def test_histogram_errors(expr):
    same_error(expr)


# -- reprs in torch mode -------------------------------------------------------------------------

def test_repr_prefix_follows_the_mode():
    from npgrad import _dtype

    assert repr(npgrad.float32) == "npgrad.float32"
    _dtype.set_repr_prefix("torch.")
    try:
        assert repr(npgrad.float32) == repr(torch.float32)
        assert repr(npgrad.zeros(2, dtype=npgrad.float64)) == \
            repr(torch.zeros(2, dtype=torch.float64))
        x = np.arange(6.0).reshape(2, 3)
        assert repr(npgrad.tensor(x).max(1)) == repr(torch.tensor(x).max(1))
        long = np.linspace(0, 1, 13).reshape(1, 13)
        assert repr(npgrad.tensor(long, dtype=npgrad.float64)) == \
            repr(torch.tensor(long, dtype=torch.float64))
    finally:
        _dtype.set_repr_prefix("npgrad.")
    assert repr(npgrad.float64) == "npgrad.float64"
