"""npgrad.save / npgrad.load: safetensors round trips, atomic saves, refused pickles, interop."""
from __future__ import annotations

import collections
import io
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import npgrad

pytest.importorskip("safetensors")


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
    npgrad.save({"w": w, "y": y}, tmp_path / "f")
    loaded = npgrad.load(tmp_path / "f")
    assert loaded["w"].tolist() == [1.0, 2.0] and loaded["y"].tolist() == [2.0, 4.0]
    assert not loaded["w"].requires_grad and loaded["y"].grad_fn is None
    loaded["w"].add_(1.0)  # loaded tensors are writable and independent of the file


def test_state_dict_round_trip(tmp_path):
    sd = collections.OrderedDict([("layer.0.weight", npgrad.randn(4, 3)),
                                  ("layer.0.bias", npgrad.zeros(4)),
                                  ("steps", npgrad.tensor(7))])
    npgrad.save(sd, tmp_path / "model.safetensors")
    loaded = npgrad.load(tmp_path / "model.safetensors")
    assert type(loaded) is dict and sorted(loaded) == sorted(sd)
    for k in sd:
        same(loaded[k], sd[k])


def test_nested_dicts_round_trip(tmp_path):
    nested = {"encoder": {"weight": npgrad.ones(2, 2), "bias": npgrad.zeros(2)},
              "head": {"proj": {"weight": npgrad.eye(2)}}, "scale": npgrad.tensor(2.0)}
    npgrad.save(nested, tmp_path / "n")
    same(npgrad.load(tmp_path / "n"), nested)


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
    from safetensors import safe_open

    npgrad.save(npgrad.ones(2), tmp_path / "t")
    with safe_open(str(tmp_path / "t"), framework="numpy") as f:
        assert list(f.keys()) == [npgrad.serialization.TENSOR_KEY]
        assert f.metadata()["format"] == "pt"
    npgrad.save({"w": npgrad.ones(2)}, tmp_path / "d")
    with safe_open(str(tmp_path / "d"), framework="numpy") as f:
        assert f.metadata()["format"] == "pt"


def test_what_cannot_be_saved(tmp_path):
    """Only data: no arbitrary objects (no pickle), and nothing is written on refusal."""
    path = tmp_path / "bad"
    with pytest.raises(TypeError, match=r"but the value at \['f'\] is function"):
        npgrad.save({"f": lambda: 0}, path)
    with pytest.raises(TypeError, match=r"value at \['a'\]\[1\] is ndarray"):
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
    npgrad.save(value, tmp_path / "s")
    back = npgrad.load(tmp_path / "s")
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


def test_optimizer_checkpoint_resumes_training(tmp_path):
    """Saving a model and an Adam state mid-run and resuming gives the uninterrupted run."""
    def make():
        npgrad.manual_seed(0)
        model = npgrad.nn.Sequential(npgrad.nn.Linear(3, 4), npgrad.nn.Tanh(),
                                     npgrad.nn.Linear(4, 1))
        return model, npgrad.optim.Adam(model.parameters(), lr=0.05)

    x, y = npgrad.randn(8, 3), npgrad.randn(8, 1)

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
                tmp_path / "ckpt")
    checkpoint = npgrad.load(tmp_path / "ckpt")
    resumed, resumed_optimizer = make()
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["epoch"] == 3
    train(resumed, resumed_optimizer, 3)
    for p, e in zip(resumed.parameters(), expected):
        np.testing.assert_array_equal(p.detach().numpy(), e.numpy())


def test_corrupt_structure_is_refused(tmp_path):
    import safetensors.numpy as st

    data = st.save({"0": np.ones(1, np.float32)},
                   metadata={"format": "pt", "npgrad.kind": "structured",
                             "npgrad.structure": '{"dict": [["w", {"tensor": "7"}]]}'})
    (tmp_path / "c").write_bytes(data)
    with pytest.raises(RuntimeError, match="unreadable structure"):
        npgrad.load(tmp_path / "c")


# -- atomicity ------------------------------------------------------------------------------

def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    npgrad.save({"w": npgrad.ones(3)}, path)
    before = path.read_bytes()

    with pytest.raises(TypeError):  # fails while converting, before touching the disk
        npgrad.save({"w": npgrad.zeros(3), "oops": object()}, path)
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


def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
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


def test_save_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "ckpt"
    npgrad.save(npgrad.ones(1), path)
    os.chmod(path, 0o640)
    npgrad.save(npgrad.zeros(1), path)
    assert npgrad.load(path).tolist() == [0.0]
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


# -- corrupt and foreign files ----------------------------------------------------------------

@pytest.fixture
def good_bytes(tmp_path):
    npgrad.save({"a": npgrad.arange(100.), "b": npgrad.ones(3, 3)}, tmp_path / "good")
    return (tmp_path / "good").read_bytes()


@pytest.mark.parametrize("cut", [1, 20, -1, -50])
def test_truncated_file(tmp_path, good_bytes, cut):
    path = tmp_path / "cut.safetensors"
    path.write_bytes(good_bytes[:cut])
    with pytest.raises(RuntimeError, match="cut.safetensors") as info:
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


def test_corrupt_offsets(tmp_path, good_bytes):
    # a header that promises more bytes than the file holds
    size = int.from_bytes(good_bytes[:8], "little")
    header = good_bytes[8:8 + size].replace(b"[0,400]", b"[0,404]")
    assert header != good_bytes[8:8 + size]
    path = tmp_path / "offsets"
    path.write_bytes(len(header).to_bytes(8, "little") + header + good_bytes[8 + size:])
    with pytest.raises(RuntimeError, match="offsets"):
        npgrad.load(path)


class _Trap:
    """Unpickling this runs code: it would create the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('unpickled!')",))


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_is_never_unpickled(tmp_path, protocol):
    trap = tmp_path / "trap_sprung"
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps(_Trap(trap), protocol=protocol))
    with pytest.raises(RuntimeError, match="never unpickles") as info:
        npgrad.load(path)
    assert "evil.pt" in str(info.value)
    assert not trap.exists()


@pytest.mark.parametrize("zipfile_format", [True, False], ids=["zip", "legacy"])
def test_torch_save_files_are_refused(tmp_path, zipfile_format):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=zipfile_format)
    with pytest.raises(RuntimeError, match="pickle file"):
        npgrad.load(path)


# -- interop with torch ------------------------------------------------------------------------

def test_torch_safetensors_state_dict_loads_into_npgrad(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    sd = {k: v.contiguous() for k, v in model.state_dict().items()}
    sd["counter"] = torch.tensor(5)
    save_file(sd, tmp_path / "model.safetensors", metadata={"format": "pt"})
    loaded = npgrad.load(tmp_path / "model.safetensors")
    assert sorted(loaded) == sorted(sd)
    for key, value in sd.items():
        assert str(loaded[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())


def test_npgrad_file_loads_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    sd = {"w": npgrad.randn(3, 2), "b": npgrad.zeros(2, dtype=npgrad.float64),
          "n": npgrad.arange(4), "mask": npgrad.tensor([True, False])}
    npgrad.save(sd, tmp_path / "m.safetensors")
    loaded = load_file(tmp_path / "m.safetensors")
    assert sorted(loaded) == sorted(sd)
    for key, value in sd.items():
        assert isinstance(loaded[key], torch.Tensor)
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())


def test_unsupported_dtype_is_explained(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    save_file({"h": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "bf16")
    with pytest.raises(RuntimeError, match="BF16"):
        npgrad.load(tmp_path / "bf16")


# -- the optional extra ---------------------------------------------------------------------

def test_missing_safetensors_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r"pip install 'npgrad\[io\]'"):
        npgrad.save(npgrad.ones(1), tmp_path / "x")
    with pytest.raises(ImportError, match=r"pip install 'npgrad\[io\]'"):
        npgrad.load(tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_import_npgrad_does_not_import_safetensors():
    code = ("import sys, npgrad; assert 'safetensors' not in sys.modules; "
            "npgrad.save; assert 'safetensors' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=pathlib.Path(__file__).resolve().parents[1])
