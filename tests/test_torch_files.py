"""torch's file formats both ways: real torch.load reads npgrad.save's files and vice versa.

Also the weights-only unpickler (malicious pickles, torch's error texts, safe globals),
map_location, mmap, shared storages, the zip layout and corrupt files.
"""
from __future__ import annotations

import collections
import io
import pathlib
import pickle
import warnings
import zipfile

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def np_dtypes():
    return [d for d in DTYPES if hasattr(npgrad, d) and isinstance(getattr(npgrad, d),
                                                                   npgrad.dtype)]


def values(dtype):
    base = np.array([[0.5, -1.25, 3.0], [2.0, 0.0, -7.5]])
    if dtype == "bool":
        return base > 0
    if dtype.startswith("uint"):
        return np.abs(base).astype(np.int64)
    if dtype.startswith("int"):
        return base.astype(np.int64)
    return base


def to_numpy(t):
    """A float64/bool NumPy copy of an npgrad or torch tensor (bfloat16 included)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.numpy() if t.dtype == torch.bool else t.double().numpy()).copy()
    flat = t.detach().double().tolist() if t.dtype != npgrad.bool else t.tolist()
    return np.array(flat).reshape(tuple(t.shape))


def same_values(a, b):
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


def save_bytes(obj, **kw):
    buf = io.BytesIO()
    npgrad.save(obj, buf, **kw)
    buf.seek(0)
    return buf


def torch_bytes(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    buf.seek(0)
    return buf


# -- tensors of every dtype and layout --------------------------------------------------------

@pytest.mark.parametrize("dtype", np_dtypes())
def test_every_dtype_both_ways(dtype):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes", reason="needs the bf16 extra: pip install -e '.[bf16]'")
    t = npgrad.tensor(values(dtype), dtype=getattr(npgrad, dtype))
    back = torch.load(save_bytes(t))
    assert back.dtype == getattr(torch, dtype)
    same_values(t, back)
    tt = torch.tensor(values(dtype), dtype=getattr(torch, dtype))
    loaded = npgrad.load(torch_bytes(tt))
    assert loaded.dtype == getattr(npgrad, dtype)
    same_values(loaded, tt)


LAYOUTS = {
    "0-dim": lambda m: m.tensor(3.5),
    "empty": lambda m: m.zeros(0, 3),
    "transposed": lambda m: m.arange(6.).reshape(2, 3).t(),
    "strided": lambda m: m.arange(10.)[::3],
    "offset view": lambda m: m.arange(12.).reshape(3, 4)[1:, 2:],
    "expanded": lambda m: m.arange(3.).reshape(3, 1).expand(3, 4),
}


@pytest.mark.parametrize("make", LAYOUTS.values(), ids=list(LAYOUTS))
def test_layouts_both_ways(make):
    t, tt = make(npgrad), make(torch)
    back = torch.load(save_bytes(t))
    same_values(t, back)
    assert back.stride() == tt.stride() and back.storage_offset() == tt.storage_offset()
    loaded = npgrad.load(torch_bytes(tt))
    same_values(loaded, tt)
    assert loaded.stride() == tt.stride()


def test_views_saved_together_share_one_storage():
    x = npgrad.arange(12.).reshape(3, 4)
    back = torch.load(save_bytes({"x": x, "row": x[1], "col": x[:, 2], "t": x.t()}))
    assert back["row"].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
    assert back["row"].storage_offset() == 4 and back["col"].stride() == (4,)
    back["x"][1, 2] = 100.0
    assert back["row"][2].item() == 100.0 and back["col"][1].item() == 100.0
    assert back["t"][2, 1].item() == 100.0
    # and npgrad's load of torch's file keeps the sharing too
    tx = torch.arange(12.).reshape(3, 4)
    loaded = npgrad.load(torch_bytes({"x": tx, "row": tx[1], "t": tx.t()}))
    loaded["x"][1, 2] = -1.0
    assert loaded["row"][2].item() == -1.0 and loaded["t"][2, 1].item() == -1.0
    assert loaded["t"].stride() == (1, 4)
    # npgrad -> npgrad, and one storage saved once
    again = npgrad.load(save_bytes({"x": x, "row": x[1]}))
    again["x"][1, 0] = 5.0
    assert again["row"][0].item() == 5.0
    names = zipfile.ZipFile(save_bytes({"x": x, "row": x[1]})).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]


def test_requires_grad_and_parameters():
    w = npgrad.tensor([1.0, 2.0], requires_grad=True)
    p = npgrad.nn.Parameter(npgrad.ones(2))
    frozen = npgrad.nn.Parameter(npgrad.zeros(1), requires_grad=False)
    back = torch.load(save_bytes([w, w * 2, p, frozen]))
    assert back[0].requires_grad and back[1].requires_grad and back[1].grad_fn is None
    assert type(back[2]) is torch.nn.Parameter and back[2].requires_grad
    assert type(back[3]) is torch.nn.Parameter and not back[3].requires_grad
    loaded = npgrad.load(torch_bytes([torch.nn.Parameter(torch.ones(2)),
                                      torch.ones(1, requires_grad=True)]))
    assert type(loaded[0]) is npgrad.nn.Parameter and loaded[0].requires_grad
    assert loaded[1].requires_grad and loaded[1].is_leaf


def test_dtypes_sizes_and_devices_are_torchs():
    obj = [npgrad.float64, npgrad.int8, npgrad.Size([2, 3]), npgrad.device("cpu"),
           {1, 2}, 1 + 2j, b"raw", bytearray(b"ab"), collections.Counter("aab")]
    back = torch.load(save_bytes(obj))
    assert back[:4] == [torch.float64, torch.int8, torch.Size([2, 3]), torch.device("cpu")]
    assert type(back[2]) is torch.Size and back[4:] == obj[4:]
    loaded = npgrad.load(torch_bytes([torch.float16, torch.Size([4]), torch.device("cpu")]))
    assert loaded[0] is npgrad.float16 and type(loaded[1]) is npgrad.Size
    assert loaded[1] == (4,) and loaded[2] == npgrad.device("cpu")


# -- state dicts, optimizers, checkpoints ------------------------------------------------------

def models():
    npgrad.manual_seed(0)
    nm = npgrad.nn.Sequential(npgrad.nn.Linear(3, 4), npgrad.nn.BatchNorm1d(4),
                              npgrad.nn.ReLU(), npgrad.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                             torch.nn.ReLU(), torch.nn.Linear(4, 2))
    return nm, tm


def assert_same_state(a, b):
    assert list(a) == list(b)
    for key in a:
        same_values(a[key], b[key])


def test_nested_state_dict_loads_into_torch_model():
    nm, tm = models()
    nm.train()
    nm(npgrad.randn(5, 3))  # move the BatchNorm statistics off their start
    sd = nm.state_dict()
    back = torch.load(save_bytes(sd))
    assert type(back) is collections.OrderedDict and list(back) == list(sd)
    assert back._metadata == sd._metadata
    assert "0.weight" in back and "1.num_batches_tracked" in back
    tm.load_state_dict(back)
    assert_same_state(tm.state_dict(), sd)


def test_torch_state_dict_loads_into_npgrad_model():
    nm, tm = models()
    tm(torch.randn(5, 3))
    sd = tm.state_dict()
    loaded = npgrad.load(torch_bytes(sd))
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(sd)
    assert loaded._metadata == sd._metadata
    nm.load_state_dict(loaded)
    assert_same_state(nm.state_dict(), sd)


def test_adam_checkpoint_both_ways():
    nm, tm = models()
    tm.load_state_dict(torch.load(save_bytes(nm.state_dict())))
    nopt = npgrad.optim.Adam(nm.parameters(), lr=0.01)
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    for _ in range(2):
        nopt.zero_grad()
        nm(npgrad.tensor(x)).pow(2).sum().backward()
        nopt.step()
        topt.zero_grad()
        tm(torch.tensor(x)).pow(2).sum().backward()
        topt.step()
    ckpt = {"model": nm.state_dict(), "optimizer": nopt.state_dict(), "epoch": 3}
    back = torch.load(save_bytes(ckpt))
    assert back["epoch"] == 3
    assert back["optimizer"]["param_groups"] == topt.state_dict()["param_groups"]
    for i, state in topt.state_dict()["state"].items():
        for key, value in state.items():
            np.testing.assert_allclose(to_numpy(back["optimizer"]["state"][i][key]),
                                       to_numpy(value), rtol=1e-4, atol=1e-6)
    resumed = torch.optim.Adam(tm.parameters(), lr=0.01)
    resumed.load_state_dict(back["optimizer"])  # torch accepts npgrad's optimizer state
    loaded = npgrad.load(torch_bytes({"model": tm.state_dict(),
                                      "optimizer": topt.state_dict(), "epoch": 3}))
    assert loaded["epoch"] == 3 and loaded["optimizer"]["param_groups"] == \
        topt.state_dict()["param_groups"]
    fresh = npgrad.optim.Adam(nm.parameters(), lr=0.01)
    fresh.load_state_dict(loaded["optimizer"])
    nm.load_state_dict(loaded["model"])


def test_legacy_format_both_ways():
    x = torch.arange(6.).reshape(2, 3)
    loaded = npgrad.load(torch_bytes({"x": x, "row": x[1]}, _use_new_zipfile_serialization=False))
    same_values(loaded["x"], x)
    loaded["x"][1, 1] = 9.0
    assert loaded["row"][1].item() == 9.0
    n = npgrad.arange(6.).reshape(2, 3)
    buf = save_bytes({"x": n, "t": n.t(), "i": npgrad.tensor([1, 2])},
                     _use_new_zipfile_serialization=False)
    assert buf.getvalue()[:1] == b"\x80" and not zipfile.is_zipfile(buf)
    buf.seek(0)
    back = torch.load(buf)
    same_values(back["x"], n)
    same_values(back["t"], n.t())
    same_values(back["i"], npgrad.tensor([1, 2]))
    buf.seek(0)
    same_values(npgrad.load(buf)["t"], n.t())


# -- the zip layout ----------------------------------------------------------------------------

def test_zip_layout_matches_torchs(tmp_path):
    npgrad.save({"a": npgrad.ones(3), "b": npgrad.zeros(2, dtype=npgrad.int64)},
                tmp_path / "model.pt")
    torch.save({"a": torch.ones(3), "b": torch.zeros(2, dtype=torch.int64)},
               tmp_path / "ref.pt")
    ours = zipfile.ZipFile(tmp_path / "model.pt")
    ref = zipfile.ZipFile(tmp_path / "ref.pt")
    assert [n.replace("model/", "") for n in ours.namelist()] == \
        [n.replace("ref/", "") for n in ref.namelist()]
    for record in ("version", ".format_version", ".storage_alignment", "byteorder",
                   "data/0", "data/1", "data.pkl"):
        assert ours.read(f"model/{record}") == ref.read(f"ref/{record}"), record
    sid = ours.read("model/.data/serialization_id")
    assert len(sid) == 40 and sid.isdigit()
    raw = (tmp_path / "model.pt").read_bytes()
    for info in ours.infolist():
        start = info.header_offset + 30 + len(info.filename) + \
            int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
        assert start % 64 == 0 and info.compress_type == zipfile.ZIP_STORED
    assert zipfile.ZipFile(save_bytes(npgrad.ones(1))).namelist()[0] == "archive/data.pkl"


# -- map_location and mmap ---------------------------------------------------------------------

def test_map_location(tmp_path):
    tt = torch.arange(3.)
    buf = torch_bytes(tt)
    for where in ("cpu", torch.device("cpu"), npgrad.device("cpu"), {"cpu": "cpu"}):
        buf.seek(0)
        same_values(npgrad.load(buf, map_location=where), tt)
    seen = []

    def spy(storage, location):
        seen.append((location, storage.nbytes()))
        return storage

    buf.seek(0)
    same_values(npgrad.load(buf, map_location=spy), tt)
    buf.seek(0)
    same_values(npgrad.load(buf, map_location=lambda s, loc: None), tt)
    assert seen == [("cpu", 12)]
    # a tensor saved on CUDA: torch's CPU build and npgrad say the same, and map_location helps
    path = tmp_path / "cuda.pt"
    npgrad.save(npgrad.ones(2), path)
    data = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        records = [(i.filename.split("/", 1)[1], z.read(i)) for i in z.infolist()]
    records = [(name, body.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
               if name == "data.pkl" else (name, body) for name, body in records
               if name not in ("version", ".data/serialization_id")]
    from npgrad.serialization import _zip_format

    with open(path, "wb") as fh:
        _zip_format.write_archive(fh, "cuda", records)
    assert data != path.read_bytes()
    with pytest.raises(RuntimeError) as ours:
        npgrad.load(path)
    with pytest.raises(RuntimeError) as theirs:
        torch.load(path)
    assert str(ours.value) == str(theirs.value)
    assert npgrad.load(path, map_location="cpu").tolist() == [1.0, 1.0]
    assert npgrad.load(path, map_location={"cuda:0": "cpu"}).tolist() == [1.0, 1.0]


def test_mmap(tmp_path):
    path = tmp_path / "big.pt"
    x = npgrad.arange(1000.)
    npgrad.save({"x": x, "tail": x[990:]}, path)
    loaded = npgrad.load(path, mmap=True)
    assert isinstance(npgrad._storage.root_of(loaded["x"]._data), np.memmap)
    same_values(loaded["tail"], x[990:])
    loaded["x"][995] = -1.0  # copy-on-write, as torch's MAP_PRIVATE: the file is unchanged
    assert loaded["tail"][5].item() == -1.0
    assert npgrad.load(path)["x"][995].item() == 995.0
    same_values(torch.load(path, mmap=True)["tail"], x[990:])
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        npgrad.load(save_bytes(x), mmap=True)
    legacy = tmp_path / "legacy.pt"
    npgrad.save(x, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError) as ours:
        npgrad.load(str(legacy), mmap=True)
    with pytest.raises(RuntimeError) as theirs:
        torch.load(str(legacy), mmap=True)
    assert str(ours.value) == str(theirs.value)


# -- weights-only loading ----------------------------------------------------------------------

class _Trap:
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('unpickled!')",))


class _SysTrap:
    def __reduce__(self):
        import os

        return (os.system, ("echo sprung",))


def errors_of(data, **kw):
    """The exceptions (type, text) npgrad.load and torch.load raise for ``data``."""
    out = []
    for load in (npgrad.load, torch.load):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                load(io.BytesIO(data), **kw)
        out.append((type(info.value), str(info.value)))
    return out


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("payload", ["exec", "os.system", "pickle-protocol-5", "class"])
def test_malicious_pickles_never_run(tmp_path, payload, legacy):
    trap = tmp_path / "sprung"
    obj = {"exec": lambda: {"w": _Trap(trap)}, "os.system": lambda: [_SysTrap()],
           "class": lambda: _Trap, "pickle-protocol-5": lambda: {"w": _Trap(trap)}}[payload]()
    if payload == "pickle-protocol-5":
        data = pickle.dumps(obj, protocol=5)
    else:
        data = torch_bytes(obj, _use_new_zipfile_serialization=not legacy).getvalue()
    ours, theirs = errors_of(data)
    assert ours == theirs and ours[0] is pickle.UnpicklingError
    assert "Weights only load failed" in ours[1]
    assert not trap.exists()


def test_safe_globals():
    point = collections.namedtuple("Point", "x y")
    globals()["Point"] = point  # picklable by name
    point.__module__ = __name__
    try:
        data = torch_bytes({"p": _Safe(3)}).getvalue()
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL tests.test_torch_files._Safe|"
                           "GLOBAL test_torch_files._Safe"):
            npgrad.load(io.BytesIO(data))
        assert npgrad.serialization.get_safe_globals() == []
        with npgrad.serialization.safe_globals([_Safe]):
            assert npgrad.serialization.get_safe_globals() == [_Safe]
            assert npgrad.load(io.BytesIO(data))["p"].value == 3
        assert npgrad.serialization.get_safe_globals() == []
        npgrad.serialization.add_safe_globals([(_Safe, f"{_Safe.__module__}._Safe")])
        assert npgrad.load(io.BytesIO(data))["p"].value == 3
        npgrad.serialization.clear_safe_globals()
        assert npgrad.serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError):
            npgrad.load(io.BytesIO(data))
    finally:
        npgrad.serialization.clear_safe_globals()
        del globals()["Point"]


class _Safe:
    def __init__(self, value):
        self.value = value


def test_weights_only_false_loads_whole_modules():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    data = torch_bytes(tm).getvalue()
    ours, theirs = errors_of(data)
    assert ours == theirs
    nm = npgrad.load(io.BytesIO(data), weights_only=False)
    assert isinstance(nm, npgrad.nn.Sequential) and isinstance(nm[0], npgrad.nn.Linear)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(nm(npgrad.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    npgrad_model = npgrad.nn.Sequential(npgrad.nn.Linear(2, 2))
    again = npgrad.load(save_bytes(npgrad_model), weights_only=False)
    same_values(again[0].weight, npgrad_model[0].weight)
    assert type(again[0].weight) is npgrad.nn.Parameter
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        npgrad.load(save_bytes(npgrad.ones(1)), pickle_module=pickle, weights_only=True)


def test_whole_arrays_need_weights_only_false():
    data = torch_bytes({"a": np.arange(3)}).getvalue()
    ours, theirs = errors_of(data)
    assert ours == theirs
    assert npgrad.load(io.BytesIO(data), weights_only=False)["a"].tolist() == [0, 1, 2]


# -- corrupt files -----------------------------------------------------------------------------

@pytest.mark.parametrize("cut", [10, 200, -30, -200])
def test_truncated_zip(tmp_path, cut):
    good = save_bytes({"a": npgrad.arange(100.), "b": npgrad.ones(3)}).getvalue()
    path = tmp_path / "cut.pt"
    path.write_bytes(good[:cut])
    with pytest.raises(RuntimeError, match="cut.pt") as info:
        npgrad.load(path)
    assert "truncated or corrupt" in str(info.value)


def test_flipped_byte_in_a_storage_is_caught(tmp_path):
    good = bytearray(save_bytes({"a": npgrad.arange(100.)}).getvalue())
    start = good.index(b"archive/data/0") + len(b"archive/data/0")
    good[start + 200] ^= 0xFF
    (tmp_path / "flip.pt").write_bytes(bytes(good))
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        npgrad.load(tmp_path / "flip.pt")


def test_garbage_is_refused(tmp_path):
    for data in (b"", b"hello world, not a checkpoint"):
        (tmp_path / "junk.pt").write_bytes(data)
        with pytest.raises(RuntimeError, match="junk.pt"):
            npgrad.load(tmp_path / "junk.pt")


def test_failed_save_leaves_no_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    npgrad.save({"w": npgrad.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        npgrad.save({"w": npgrad.zeros(2), "f": lambda: 0}, path)
    assert path.read_bytes() == before
    assert [p.name for p in pathlib.Path(tmp_path).iterdir()] == ["ckpt.pt"]


def test_views_as_different_dtypes_are_refused_as_in_torch():
    x = npgrad.from_numpy(np.zeros(4, np.float32))
    y = npgrad.from_numpy(x.numpy().view(np.int32))
    with pytest.raises(RuntimeError) as ours:
        npgrad.save([x, y], io.BytesIO())
    tx = torch.zeros(4)
    with pytest.raises(RuntimeError) as theirs:
        torch.save([tx, tx.view(torch.int32)], io.BytesIO())
    assert str(ours.value) == str(theirs.value)


def test_pickles_are_byte_identical_to_torchs():
    """npgrad's data.pkl for a state dict and an Adam state dict is torch's, byte for byte."""
    nm, tm = models()
    tm.load_state_dict(torch.load(save_bytes(nm.state_dict())))

    def pickled(save, obj):
        buf = io.BytesIO()
        save(obj, buf)
        return zipfile.ZipFile(buf).read("archive/data.pkl")

    assert pickled(npgrad.save, nm.state_dict()) == pickled(torch.save, tm.state_dict())
    nopt, topt = npgrad.optim.Adam(nm.parameters()), torch.optim.Adam(tm.parameters())
    nm(npgrad.ones(2, 3)).sum().backward()
    nopt.step()
    tm(torch.ones(2, 3)).sum().backward()
    topt.step()
    assert pickled(npgrad.save, nopt.state_dict()) == pickled(torch.save, topt.state_dict())


def test_big_endian_files_are_swapped(tmp_path):
    from npgrad.serialization import _zip_format

    with zipfile.ZipFile(torch_bytes({"a": torch.tensor([1.5, -2.0]),
                                      "i": torch.tensor([1, 256], dtype=torch.int16)})) as z:
        records = [(i.filename.split("/", 1)[1], z.read(i)) for i in z.infolist()]
    swapped = []
    for name, body in records:
        if name == "byteorder":
            body = b"big"
        elif name == "data/0":
            body = np.frombuffer(body, np.float32).byteswap().tobytes()
        elif name == "data/1":
            body = np.frombuffer(body, np.int16).byteswap().tobytes()
        if name not in ("version", ".data/serialization_id"):
            swapped.append((name, body))
    path = tmp_path / "big.pt"
    with open(path, "wb") as fh:
        _zip_format.write_archive(fh, "big", swapped)
    ours, theirs = npgrad.load(path), torch.load(path)
    assert ours["a"].tolist() == theirs["a"].tolist() == [1.5, -2.0]
    assert ours["i"].tolist() == theirs["i"].tolist() == [1, 256]


def test_bad_targets_raise_torchs_errors(tmp_path):
    for target in (tmp_path / "missing" / "x.pt", 3):
        with pytest.raises(Exception) as ours:
            npgrad.save(npgrad.ones(1), target if target == 3 else str(target))
        with pytest.raises(Exception) as theirs:
            torch.save(torch.ones(1), target if target == 3 else str(target))
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    assert list(tmp_path.iterdir()) == []


def test_fortran_ordered_arrays_keep_their_layout():
    t = npgrad.from_numpy(np.asfortranarray(np.arange(6.).reshape(2, 3)))
    back = torch.load(save_bytes({"t": t, "col": t[:, 1]}))
    ref = torch.arange(6., dtype=torch.float64).reshape(3, 2).t()  # torch's (1, 2)-strided twin
    same_values(back["t"], t)
    assert back["t"].stride() == ref.stride() == (1, 2) and back["col"].storage_offset() == 2
    back["t"][0, 1] = 50.0
    assert back["col"][0].item() == 50.0
