"""npgrad.save / npgrad.load: safetensors round trips, both formats' atomic saves, corrupt files.

(torch's zip and legacy formats against real torch: tests/test_torch_files.py.)"""
from __future__ import annotations

import collections
import io
import json
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import npgrad

FORMATS = [".safetensors", ".pt"]


def same(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b) or sorted(a) == sorted(b)
        for k in a:
            same(a[k], b[k])
        return
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def leftovers(directory):
    return sorted(p.name for p in pathlib.Path(directory).iterdir() if p.name.endswith(".tmp"))


DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_round_trip(tmp_path, dtype):
    t = npgrad.tensor(np.arange(6).reshape(2, 3) % 2 if dtype == "bool"
                      else np.arange(6).reshape(2, 3), dtype=getattr(npgrad, dtype))
    path = tmp_path / "t.safetensors"
    npgrad.save(t, path)
    same(npgrad.load(path), t)


@pytest.mark.parametrize("t", [npgrad.tensor(3.5), npgrad.zeros(0, 3), npgrad.ones(2, 3).t(),
                               npgrad.arange(10.)[::3]],
                         ids=["0-dim", "empty", "transposed", "strided"])
def test_odd_shapes_and_layouts(tmp_path, t):
    npgrad.save(t, str(tmp_path / "t.safetensors"))
    same(npgrad.load(str(tmp_path / "t.safetensors")), t)


def test_saved_tensor_loses_autograd_state(tmp_path):
    w = npgrad.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    npgrad.save({"w": w, "y": y}, tmp_path / "f.safetensors")
    loaded = npgrad.load(tmp_path / "f.safetensors")
    assert loaded["w"].tolist() == [1.0, 2.0] and loaded["y"].tolist() == [2.0, 4.0]
    assert not loaded["w"].requires_grad and loaded["y"].grad_fn is None
    loaded["w"].add_(1.0)  # loaded tensors are writable and independent of the file


def test_state_dict_round_trip(tmp_path):
    sd = collections.OrderedDict([("layer.0.weight", npgrad.randn(4, 3)),
                                  ("layer.0.bias", npgrad.zeros(4)),
                                  ("steps", npgrad.tensor(7))])
    npgrad.save(sd, tmp_path / "model.safetensors")
    loaded = npgrad.load(tmp_path / "model.safetensors")
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(sd)
    for k in sd:
        same(loaded[k], sd[k])


def test_nested_dicts_round_trip(tmp_path):
    nested = {"encoder": {"weight": npgrad.ones(2, 2), "bias": npgrad.zeros(2)},
              "head": {"proj": {"weight": npgrad.eye(2)}}, "scale": npgrad.tensor(2.0)}
    npgrad.save(nested, tmp_path / "n.safetensors")
    same(npgrad.load(tmp_path / "n.safetensors"), nested)


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    npgrad.save({"a": npgrad.arange(3)}, buf)
    buf.seek(0)
    same(npgrad.load(buf), {"a": npgrad.arange(3)})
    with open(tmp_path / "f.safetensors", "wb") as fh:
        npgrad.save(npgrad.ones(2), fh)
    with open(tmp_path / "f.safetensors", "rb") as fh:
        same(npgrad.load(fh), npgrad.ones(2))


def test_single_tensor_key_and_metadata(tmp_path):
    safetensors = pytest.importorskip("safetensors", reason="needs the io extra: "
                                      "pip install 'npgrad[io]'")
    safe_open = safetensors.safe_open

    npgrad.save(npgrad.ones(2), tmp_path / "t.safetensors")
    with safe_open(str(tmp_path / "t.safetensors"), framework="numpy") as f:
        assert list(f.keys()) == [npgrad.serialization.TENSOR_KEY]
        assert f.metadata()["format"] == "pt"
    npgrad.save({"w": npgrad.ones(2)}, tmp_path / "d.safetensors")
    with safe_open(str(tmp_path / "d.safetensors"), framework="numpy") as f:
        assert f.metadata()["format"] == "pt"


def test_what_cannot_be_saved(tmp_path):
    """Only data: no arbitrary objects (no pickle), and nothing is written on refusal."""
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match=r"but the value at f is function"):
        npgrad.save({"f": lambda: 0}, path)
    with pytest.raises(TypeError, match=r"value at a\.1 is ndarray"):
        npgrad.save({"a": [npgrad.ones(1), np.ones(1)]}, path)
    with pytest.raises(TypeError, match="value at <root> is set"):
        npgrad.save({1, 2}, path)
    with pytest.raises(TypeError, match="dict keys that are str, int, float, bool or None, got "
                                        "tuple"):
        npgrad.save({(1, 2): npgrad.ones(1)}, path)
    assert not path.exists()
    assert leftovers(tmp_path) == []


def test_structured_values_round_trip(tmp_path):
    """Note [Structured files]: key types, order, lists, tuples and scalars come back as saved."""
    w = npgrad.arange(4.0)
    value = {"lr": 0.1, 0: [w, (1, "x", None, True)], "inf": float("inf"), "w again": w,
             "nested": {"a.b": npgrad.ones(2), "empty": {}}, 2.5: []}
    npgrad.save(value, tmp_path / "s.safetensors")
    back = npgrad.load(tmp_path / "s.safetensors")
    assert list(back) == ["lr", 0, "inf", "w again", "nested", 2.5]
    assert back["lr"] == 0.1 and back["inf"] == float("inf") and back[2.5] == []
    assert back[0][1] == (1, "x", None, True) and type(back[0]) is list
    assert back[0][0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert back["w again"] is back[0][0]  # one tensor saved once comes back as one tensor
    assert back["nested"]["a.b"].tolist() == [1.0, 1.0] and back["nested"]["empty"] == {}
    assert npgrad.load(_save_bytes([npgrad.ones(1)]))[0].tolist() == [1.0]


def _save_bytes(value):
    import io

    buffer = io.BytesIO()
    npgrad.save(value, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("suffix", FORMATS)
def test_optimizer_checkpoint_resumes_training(tmp_path, suffix):
    """Saving a model and an Adam state mid-run and resuming gives the uninterrupted run."""
    def make():
        model = npgrad.nn.Sequential(npgrad.nn.Linear(3, 4), npgrad.nn.Tanh(),
                                     npgrad.nn.Linear(4, 1))
        with npgrad.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(npgrad.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 3)
        return model, npgrad.optim.Adam(model.parameters(), lr=0.05)

    x = npgrad.linspace(-2.0, 2.0, 24).reshape(8, 3)
    y = npgrad.linspace(0.0, 1.0, 8).reshape(8, 1)

    def train(model, optimizer, steps):
        for _ in range(steps):
            optimizer.zero_grad()
            npgrad.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()

    model, optimizer = make()
    train(model, optimizer, 6)
    expected = [p.detach().clone() for p in model.parameters()]

    model, optimizer = make()
    train(model, optimizer, 3)
    npgrad.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3},
                tmp_path / f"ckpt{suffix}")
    checkpoint = npgrad.load(tmp_path / f"ckpt{suffix}")
    resumed, resumed_optimizer = make()
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["epoch"] == 3
    assert list(checkpoint["model"]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    train(resumed, resumed_optimizer, 3)
    for p, e in zip(resumed.parameters(), expected):
        np.testing.assert_array_equal(p.detach().numpy(), e.numpy())


def test_nested_state_dict_keeps_dotted_keys_and_order(tmp_path):
    """A nested model's state dict keeps its '0.weight' keys, order and _metadata."""
    model = npgrad.nn.Sequential(npgrad.nn.Linear(2, 3), npgrad.nn.BatchNorm1d(3))
    sd = model.state_dict()
    npgrad.save(sd, tmp_path / "m.safetensors")
    back = npgrad.load(tmp_path / "m.safetensors")
    assert list(back) == list(sd) and type(back) is collections.OrderedDict
    assert back._metadata == sd._metadata
    fresh = npgrad.nn.Sequential(npgrad.nn.Linear(2, 3), npgrad.nn.BatchNorm1d(3))
    fresh.load_state_dict(back)
    for key in sd:
        same(fresh.state_dict()[key], sd[key])


def test_key_order_is_kept(tmp_path):
    keys = ["zeta", "alpha", "m.2", "m.10", "b"]
    value = {k: npgrad.full((2,), float(i)) for i, k in enumerate(keys)}
    value["alpha"] = npgrad.zeros(3, dtype=npgrad.float64)  # a different size and alignment
    npgrad.save(value, tmp_path / "o.safetensors")
    assert list(npgrad.load(tmp_path / "o.safetensors")) == keys


def test_conflicting_keys_are_refused(tmp_path):
    path = tmp_path / "clash.safetensors"
    with pytest.raises(ValueError, match="two different tensors under the safetensors key "
                                         "'a.b'"):
        npgrad.save({"a": {"b": npgrad.ones(1)}, "a.b": npgrad.zeros(1)}, path)
    with pytest.raises(ValueError, match="key '0'"):
        npgrad.save({0: npgrad.ones(1), "0": npgrad.zeros(1)}, path)
    assert not path.exists() and leftovers(tmp_path) == []
    # a flat file may hold both 'a' and 'a.b': nothing is dropped on load
    npgrad.save({"a": npgrad.ones(1), "a.b": npgrad.zeros(1)}, path)
    assert sorted(npgrad.load(path)) == ["a", "a.b"]


def test_foreign_safetensors_file_loads_flat_in_data_order(tmp_path):
    from npgrad.serialization import _safetensors_format

    # a file without npgrad's structure entry, as safetensors.torch writes them
    pieces = _safetensors_format.dumps({"b.x": npgrad.ones(2), "a": npgrad.zeros(1),
                                        "c": npgrad.zeros(1, dtype=npgrad.float64)})
    header = json.loads(pieces[1])
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    body = b"".join(bytes(memoryview(p).cast("B")) for p in pieces[2:])
    (tmp_path / "f.safetensors").write_bytes(len(text).to_bytes(8, "little") + text + body)
    back = npgrad.load(tmp_path / "f.safetensors")
    assert list(back) == ["c", "b.x", "a"] and back["b.x"].tolist() == [1.0, 1.0]


def test_format_option_and_sniffing(tmp_path):
    buf = io.BytesIO()
    npgrad.save({"w": npgrad.ones(2)}, buf, format="safetensors")
    assert buf.getvalue()[8:9] == b"{"
    buf.seek(0)
    same(npgrad.load(buf), {"w": npgrad.ones(2)})
    npgrad.save(npgrad.ones(2), tmp_path / "w.bin", format="safetensors")
    same(npgrad.load(tmp_path / "w.bin"), npgrad.ones(2))  # load goes by the bytes
    npgrad.save(npgrad.ones(2), tmp_path / "w.pt")
    assert (tmp_path / "w.pt").read_bytes()[:4] == b"PK\x03\x04"
    with pytest.raises(ValueError, match="format must be 'torch' or 'safetensors'"):
        npgrad.save(npgrad.ones(1), io.BytesIO(), format="npz")


def test_corrupt_structure_is_refused(tmp_path):
    from npgrad.serialization import _safetensors_format

    pieces = _safetensors_format.dumps({"w": npgrad.ones(1)})
    header = pieces[1].replace(b'{\\"tensor\\": \\"w\\"}', b'{\\"tensor\\": \\"7\\"}')
    assert header != pieces[1]
    data = pieces[0] + header + bytes(memoryview(pieces[2]).cast("B"))
    (tmp_path / "c.safetensors").write_bytes(data)
    with pytest.raises(RuntimeError, match="unreadable structure"):
        npgrad.load(tmp_path / "c.safetensors")


# -- atomicity ------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", FORMATS)
def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"ckpt{suffix}"
    npgrad.save({"w": npgrad.ones(3)}, path)
    before = path.read_bytes()

    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        npgrad.save({"w": npgrad.zeros(3), "oops": lambda: 0}, path)  # fails before the disk
    assert path.read_bytes() == before

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):  # fails after writing the temporary file
        npgrad.save({"w": npgrad.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []
    same(npgrad.load(path), {"w": npgrad.ones(3)})


@pytest.mark.parametrize("suffix", FORMATS)
def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"ckpt{suffix}"
    npgrad.save({"w": npgrad.ones(3)}, path)
    before = path.read_bytes()

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        npgrad.save({"w": npgrad.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("suffix", FORMATS)
def test_save_replaces_and_keeps_permissions(tmp_path, suffix):
    path = tmp_path / f"ckpt{suffix}"
    npgrad.save(npgrad.ones(1), path)
    os.chmod(path, 0o640)
    npgrad.save(npgrad.zeros(1), path)
    assert npgrad.load(path).tolist() == [0.0]
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


# -- corrupt files ----------------------------------------------------------------------------

@pytest.fixture(params=FORMATS)
def good_file(tmp_path, request):
    path = tmp_path / f"good{request.param}"
    npgrad.save({"a": npgrad.arange(100.), "b": npgrad.ones(3, 3)}, path)
    return path.read_bytes(), request.param


@pytest.mark.parametrize("cut", [1, 20, -1, -50])
def test_truncated_file(tmp_path, good_file, cut):
    data, suffix = good_file
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(data[:cut])
    with pytest.raises(RuntimeError, match="cut") as info:
        npgrad.load(path)
    assert "truncated or corrupt" in str(info.value)


@pytest.mark.parametrize("data", [b"", b"\x00" * 7, b"garbage" * 10,
                                  (4).to_bytes(8, "little") + b"nope",
                                  (2).to_bytes(8, "little") + b"[]"],
                         ids=["empty", "short", "garbage", "bad-json", "not-an-object"])
def test_corrupt_file(tmp_path, data):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(RuntimeError, match="bad.safetensors"):
        npgrad.load(path)


def test_corrupt_offsets(tmp_path):
    npgrad.save({"a": npgrad.arange(100.), "b": npgrad.ones(3, 3)}, tmp_path / "g.safetensors")
    good = (tmp_path / "g.safetensors").read_bytes()
    size = int.from_bytes(good[:8], "little")
    header = good[8:8 + size].replace(b"[0,400]", b"[0,404]")
    assert header != good[8:8 + size]
    path = tmp_path / "offsets.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + good[8 + size:])
    with pytest.raises(RuntimeError, match="offsets"):
        npgrad.load(path)


class _Trap:
    """Unpickling this runs code: it would create the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('unpickled!')",))


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_plain_pickle_is_never_run(tmp_path, protocol):
    trap = tmp_path / "trap_sprung"
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps(_Trap(trap), protocol=protocol))
    with pytest.warns(UserWarning) if protocol != 2 else _no_warning(), \
            pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        npgrad.load(path)
    assert not trap.exists()


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# -- interop with safetensors.torch (the io extra) --------------------------------------------

def test_torch_safetensors_state_dict_loads_into_npgrad(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch", reason="needs the io extra: "
                                   "pip install 'npgrad[io]'")

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    sd = {k: v.contiguous() for k, v in model.state_dict().items()}
    sd["counter"] = torch.tensor(5)
    st_torch.save_file(sd, tmp_path / "model.safetensors", metadata={"format": "pt"})
    loaded = npgrad.load(tmp_path / "model.safetensors")
    assert list(loaded) == list(torch.load(tmp_path / "model.safetensors"))  # torch's order
    assert sorted(loaded) == sorted(sd)
    for key, value in sd.items():
        assert str(loaded[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())


def test_npgrad_file_loads_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch", reason="needs the io extra: "
                                   "pip install 'npgrad[io]'")

    sd = {"w": npgrad.randn(3, 2), "b": npgrad.zeros(2, dtype=npgrad.float64),
          "n": npgrad.arange(4), "mask": npgrad.tensor([True, False]), "s": npgrad.tensor(2.5),
          "e": npgrad.zeros(0, 2), "t": npgrad.ones(2, 3).t()}
    npgrad.save(sd, tmp_path / "m.safetensors")
    for loaded in (st_torch.load_file(tmp_path / "m.safetensors"),
                   torch.load(tmp_path / "m.safetensors")):
        assert sorted(loaded) == sorted(sd)
        for key, value in sd.items():
            assert isinstance(loaded[key], torch.Tensor)
            np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())
    model = npgrad.nn.Sequential(npgrad.nn.Linear(3, 4), npgrad.nn.ReLU(),
                                 npgrad.nn.Linear(4, 2))
    ckpt = {"model": model.state_dict(), "epoch": 3, "steps": [npgrad.tensor(1.0)]}
    npgrad.save(ckpt, tmp_path / "ckpt.safetensors")
    flat = st_torch.load_file(tmp_path / "ckpt.safetensors")
    assert sorted(flat) == ["model.0.bias", "model.0.weight", "model.2.bias",
                            "model.2.weight", "steps.0"]
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tm.load_state_dict({k[len("model."):]: v for k, v in flat.items() if k.startswith("model.")})
    np.testing.assert_array_equal(tm[0].weight.detach().numpy(), model[0].weight.detach().numpy())


def test_state_dict_file_loads_into_torch_model(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch", reason="needs the io extra: "
                                   "pip install 'npgrad[io]'")
    model = npgrad.nn.Sequential(npgrad.nn.Linear(3, 4), npgrad.nn.BatchNorm1d(4))
    npgrad.save(model.state_dict(), tmp_path / "sd.safetensors")
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    result = tm.load_state_dict(st_torch.load_file(tmp_path / "sd.safetensors"))
    assert result.missing_keys == [] and result.unexpected_keys == []


def test_unsupported_dtype_is_explained(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch", reason="needs the io extra: "
                                   "pip install 'npgrad[io]'")

    st_torch.save_file({"h": torch.ones(2, dtype=torch.float8_e4m3fn)},
                       tmp_path / "f8.safetensors")
    with pytest.raises(RuntimeError, match="dtype F8_E4M3"):
        npgrad.load(tmp_path / "f8.safetensors")


# -- no dependency ---------------------------------------------------------------------------

def test_safetensors_files_need_no_package(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    npgrad.save({"w": npgrad.ones(2)}, tmp_path / "x.safetensors")
    same(npgrad.load(tmp_path / "x.safetensors"), {"w": npgrad.ones(2)})


def test_import_npgrad_does_not_import_safetensors():
    code = ("import sys, npgrad; assert 'safetensors' not in sys.modules; "
            "npgrad.save; assert 'safetensors' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=pathlib.Path(__file__).resolve().parents[1])


def test_bfloat16_safetensors_both_ways(tmp_path):
    if not isinstance(getattr(npgrad, "bfloat16", None), npgrad.dtype):
        pytest.skip("npgrad has no bfloat16")
    pytest.importorskip("ml_dtypes", reason="bfloat16 storage is the bf16 extra")
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch", reason="needs the io extra: "
                                   "pip install 'npgrad[io]'")
    x = npgrad.tensor([1.5, -2.25, 3.0], dtype=npgrad.bfloat16)
    npgrad.save({"x": x}, tmp_path / "b.safetensors")
    back = st_torch.load_file(tmp_path / "b.safetensors")["x"]
    assert back.dtype == torch.bfloat16 and back.tolist() == [1.5, -2.25, 3.0]
    st_torch.save_file({"y": torch.tensor([0.1, 7.0], dtype=torch.bfloat16)},
                       tmp_path / "c.safetensors")
    for mmap in (False, True):
        y = npgrad.load(tmp_path / "c.safetensors", mmap=mmap)["y"]
        assert y.dtype is npgrad.bfloat16
        assert y.float().tolist() == torch.tensor([0.1, 7.0], dtype=torch.bfloat16).float().tolist()
