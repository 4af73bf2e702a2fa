"""npgrad.device: device objects as a CPU-only torch build parses them, and the check made on use.

Note [Devices: construct anything, use only the CPU]
A CPU build of torch constructs ``torch.device('cuda')`` and ``torch.device('cuda:0')``
happily (scripts build ``device = torch.device('cuda' if ... else 'cpu')`` at the top);
only *using* such a device fails, with ``AssertionError: Torch not compiled with CUDA
enabled``.  So ``device`` parses every string torch parses (and rejects what torch
rejects, with its texts), and ``check_device`` is what factories, ``Tensor.to`` and
``Tensor.cuda`` call before allocating.  Devices npgrad cannot hold data on raise:
cuda and xpu as a CPU build does, others (meta, mps, ...) with a RuntimeError that
says npgrad keeps tensors on the CPU.
"""
from __future__ import annotations

from typing import Any

# the device types torch's parser knows, in the order its error message lists them
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_TYPES_SET = frozenset(DEVICE_TYPES)
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_NOT_COMPILED = {"cuda": "Torch not compiled with CUDA enabled",
                 "xpu": "Torch not compiled with XPU enabled"}


def _invalid_args(got: str) -> TypeError:
    return TypeError(
        f"device() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n * (torch.device device)\n      didn't match because some of the arguments have "
        f"invalid types: (!{got}!)\n * (str type, int index = -1)\n")


def _parse(text: str) -> tuple:
    """``'cuda:1'`` -> ``('cuda', 1)`` with torch's checks and messages."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    name, sep, idx = text.partition(":")
    if name not in _TYPES_SET:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {name}")
    if not sep:
        return name, None
    # torch accepts a plain decimal index without a leading zero (``cuda:01`` is invalid)
    if not idx.isdigit() or not idx.isascii() or (len(idx) > 1 and idx[0] == "0"):
        raise RuntimeError(f"Invalid device string: '{text}'")
    return name, int(idx)


class device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``.

    >>> import npgrad
    >>> npgrad.device('cuda:0')
    device(type='cuda', index=0)
    >>> npgrad.device('gpu')
    Traceback (most recent call last):
    RuntimeError: Expected one of cpu, cuda, ipu, ... device type at start of device string: gpu
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: Any = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, bool) or not isinstance(type, (str, int)):
            raise _invalid_args(_type_label(type))
        if isinstance(type, int):  # an accelerator index: a CPU build has no accelerator
            raise RuntimeError(_NO_ACCELERATOR)
        name, parsed = _parse(type)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                                f"{_type_label(index)}")
            if parsed is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            parsed = index
        self.type = name
        self.index = parsed

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        # torch compares devices with devices only: device('cpu') == 'cpu' is False
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple:
        return (device, (self.type,) if self.index is None else (self.type, self.index))


def _type_label(x: Any) -> str:
    if isinstance(x, list):
        return "list of [" + ", ".join(sorted({type(v).__name__ for v in x})) + "]"
    return type(x).__name__


cpu = device("cpu")


def check_device(dev: Any) -> None:
    """Raise what a CPU build of torch raises when asked to put data on ``dev``.

    ``None``, ``'cpu'``, ``'cpu:0'`` and cpu devices pass (see Note [Devices: construct
    anything, use only the CPU]).

    >>> import npgrad
    >>> npgrad.zeros(2, device='cuda')
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    if dev is None or dev is cpu:
        return
    if isinstance(dev, str):
        if dev == "cpu":
            return
        name = _parse(dev)[0]
    elif isinstance(dev, device):
        name = dev.type
    elif isinstance(dev, int) and not isinstance(dev, bool):
        raise RuntimeError(_NO_ACCELERATOR)
    else:
        raise _invalid_args(_type_label(dev))
    if name == "cpu":
        return
    if name in _NOT_COMPILED:
        raise AssertionError(_NOT_COMPILED[name])
    raise RuntimeError(f"npgrad keeps tensors on the CPU only; the '{name}' device is not "
                       f"supported")


def check_cuda_device(dev: Any = None) -> None:
    """``Tensor.cuda(device)``: a CPU build always refuses, after checking the argument."""
    if isinstance(dev, int) and not isinstance(dev, bool):
        raise RuntimeError(_NO_ACCELERATOR)
    if dev is not None:
        name = _parse(dev)[0] if isinstance(dev, str) else device(dev).type
        if name != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
    raise AssertionError(_NOT_COMPILED["cuda"])
