"""torch's CPU random-number generator: an MT19937 engine, its seeding and its state tensor.

Note [One engine, torch's words]
torch's CPU generator is a 32-bit Mersenne Twister (MT19937) seeded with the low 32 bits
of the seed by the reference ``init_genrand`` recurrence, exactly what NumPy's
``RandomState(seed)`` does for a seed below 2**32.  So the engine here is NumPy's
``MT19937`` bit generator with that state, and ``random_raw(n)`` hands out torch's next
``n`` 32-bit words in one C call.  torch's two draws are ``random()`` (one word) and
``random64()`` (two words, the first one the high half); every sampler in
``npgrad._sampling`` turns such words into values with torch's transforms.

Besides the engine, the generator carries the one Box-Muller value torch caches between
calls of its scalar normal sampler (``next_double_normal_sample``) and a float twin that
torch's CPU kernels never fill but its state tensor keeps.

Note [The state tensor]
``get_state`` returns the bytes torch's ``CPUGeneratorImpl::get_state`` writes (5056 of
them, little-endian, torch's legacy struct layout): the initial seed (u64), ``left`` (i32),
``seeded`` (i32), ``next`` (u64), the 624 state words (each stored as u64), three doubles
of which the second is the cached normal, its validity flag (i32, then 4 padding bytes),
then the cached float normal (f32) and its flag (bool, then 3 padding bytes).  torch's
engine keeps ``next`` (the index of the next word) and ``left`` (= 625 - next once the
state has been twisted); NumPy's keeps ``pos``.  They agree except when the next draw
twists: torch then says ``left == 1`` with ``next`` 0 right after seeding and 624 after a
full block, NumPy says ``pos == 624`` for both, so the generator remembers which one.

NumPy's random module is imported on the first draw, not with npgrad: it costs about a
tenth of ``import npgrad`` and many programs never draw a number.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ._device import check_device, device as _device
from ._ops.signature import bind_generator_class
if TYPE_CHECKING:
    from ._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from ._tensor_base import TensorBase as Tensor
from ._vmap_mode import VMAP, on_random_draw

DEFAULT_SEED = 67280421310721  # what a new torch.Generator() starts from
STATE_SIZE = 5056
_N = 624
_U64 = (1 << 64) - 1

_STATE_DTYPE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float_normal", "float_normal_is_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", (_N,)), "<f8", "<f8", "<f8", "<i4", "<f4",
                "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": STATE_SIZE,
})


@functools.lru_cache(maxsize=64)  # programs and tests re-seed with the same few seeds
def _seed_words(seed32: int) -> np.ndarray:
    """The 624 MT19937 state words ``init_genrand(seed32)`` makes (untwisted, read-only)."""
    legacy = np.random.RandomState(seed32).get_state(legacy=False)
    key = np.asarray(legacy["state"]["key"], dtype=np.uint32)
    key.flags.writeable = False
    return key


def _unpack_seed(seed: Any) -> int:
    """torch's reading of a seed: any int in [-2**63, 2**64), negatives wrapped to uint64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        if isinstance(seed, Tensor) and seed._data.ndim == 0 and seed._data.dtype.kind in "iu":
            seed = int(seed._data)
        else:
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _U64


def nondeterministic_seed() -> int:
    """A fresh 64-bit seed from the operating system (what ``seed()`` uses)."""
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """torch's CPU generator: ``Generator().manual_seed(0)`` draws what torch's does.

    >>> import npgrad
    >>> g = npgrad.Generator().manual_seed(0)
    >>> npgrad.rand(2, generator=g)
    tensor([0.4963, 0.7682])
    """

    __slots__ = ("_bits", "_seed", "_fresh", "_normal_double", "_normal_float")

    def __init__(self, device: Any = "cpu") -> None:
        _check_generator_device(device)
        self._bits: Any = None        # NumPy's MT19937, made on the first draw
        self._seed = DEFAULT_SEED
        self._fresh = True            # seeded (or set) and not drawn from since
        self._normal_double: float | None = None
        self._normal_float: float | None = None

    @property
    def device(self) -> Any:
        return _device("cpu")

    # -- seeding ------------------------------------------------------------------------

    def manual_seed(self, seed: Any) -> Generator:
        """Seed the engine; returns the generator (torch's chaining)."""
        self._set_seed(_unpack_seed(seed))
        return self

    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._bits = None
        self._fresh = True
        self._normal_double = None
        self._normal_float = None

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed."""
        s = nondeterministic_seed()
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    # -- the engine ---------------------------------------------------------------------

    def _engine(self) -> Any:
        bits = self._bits
        if bits is None:
            bits = np.random.MT19937()
            bits.state = {"bit_generator": "MT19937",
                          "state": {"key": _seed_words(self._seed & 0xFFFFFFFF), "pos": _N}}
            self._bits = bits
        return bits

    def _words(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs (torch's ``random()``), as uint64."""
        if VMAP.depth:  # every sampler draws through here: vmap's randomness modes
            on_random_draw(self)
        bits = self._engine()
        if n <= 0:
            return np.zeros(0, dtype=np.uint64)
        self._fresh = False
        return bits.random_raw(n)

    def _words64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit values (torch's ``random64()``: high word drawn first)."""
        w = self._words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _snapshot(self) -> dict:
        return self._engine().state

    def _rewind(self, snapshot: dict, used: int) -> None:
        """Back to ``snapshot``, then ``used`` words on (for samplers that over-draw)."""
        bits = self._engine()
        bits.state = snapshot
        if used:
            bits.random_raw(used)

    # -- the state tensor (Note [The state tensor]) ---------------------------------------

    def get_state(self) -> Tensor:
        """The generator's state as torch's 5056-byte uint8 tensor."""
        from ._creation import _leaf  # _creation imports this module

        st = self._engine().state["state"]
        pos = int(st["pos"])
        rec = np.zeros((), dtype=_STATE_DTYPE)
        rec["seed"] = self._seed
        rec["seeded"] = 1
        if pos >= _N:
            rec["left"], rec["next"] = 1, 0 if self._fresh else _N
        else:
            rec["left"], rec["next"] = _N + 1 - pos, pos
        rec["state"] = np.asarray(st["key"], dtype=np.uint64)
        if self._normal_double is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self._normal_double
        if self._normal_float is not None:
            rec["float_normal_is_valid"] = 1
            rec["next_float_normal"] = self._normal_float
        return _leaf(np.frombuffer(rec.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from ``get_state`` (npgrad's or torch's: the bytes are the same)."""
        data = _state_bytes(new_state, "expected a torch.ByteTensor, but got "
                            f"{type(new_state).__name__}")
        if data.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {data.size}")
        rec = np.frombuffer(np.ascontiguousarray(data).tobytes(), dtype=_STATE_DTYPE)[0]
        left, nxt = int(rec["left"]), int(rec["next"]) & 0xFFFFFFFF
        if not (int(rec["seeded"]) != 0 and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        bits = np.random.MT19937()
        key = (rec["state"] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        bits.state = {"bit_generator": "MT19937",
                      "state": {"key": key, "pos": _N if left == 1 else nxt}}
        self._bits = bits
        self._seed = int(rec["seed"])
        self._fresh = left == 1 and nxt == 0
        self._normal_double = float(rec["normal_y"]) if int(rec["normal_is_valid"]) else None
        self._normal_float = (float(rec["next_float_normal"])
                              if int(rec["float_normal_is_valid"]) else None)
        return self


_NO_CUDA_GENERATOR = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")
_NO_GENERATOR = {"cuda": _NO_CUDA_GENERATOR,
                 "xpu": "Cannot get XPU generator without ATen_xpu library.",
                 "mps": "Cannot execute getNewGenerator() without MPS backend.",
                 "meta": "META device type not an accelerator."}


def _check_generator_device(dev: Any) -> None:
    """What a CPU build of torch raises for ``Generator(dev)``: only the CPU has one."""
    try:
        check_device(dev)
    except AssertionError:  # a device type torch knows but this build lacks
        name = dev if isinstance(dev, str) else getattr(dev, "type", "")
        raise RuntimeError(_NO_GENERATOR.get(str(name).partition(":")[0],
                                             _NO_CUDA_GENERATOR)) from None
    except RuntimeError as exc:
        name = dev if isinstance(dev, str) else getattr(dev, "type", "")
        key = str(name).partition(":")[0]
        if key in _NO_GENERATOR:
            raise RuntimeError(_NO_GENERATOR[key]) from None
        raise exc


def _state_bytes(state: Any, type_message: str) -> np.ndarray:
    if not isinstance(state, Tensor):
        raise TypeError(type_message)
    if state._data.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    return state._data.reshape(-1)


bind_generator_class(Generator)  # Note [The Tensor class, bound late] in npgrad._ops.signature
default_generator = Generator()
default_generator._set_seed(nondeterministic_seed())  # torch seeds its default from entropy


def get_generator(generator: Generator | None) -> Generator:
    """``generator`` itself, or the default generator for ``None``."""
    return default_generator if generator is None else generator


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator; returns it.

    >>> import npgrad
    >>> _ = npgrad.manual_seed(0)
    >>> npgrad.rand(1)
    tensor([0.4963])
    """
    return default_generator.manual_seed(int(seed))  # torch's Python layer calls int() first


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state: torch's 5056-byte uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator from a state ``get_rng_state`` gave (npgrad's or torch's)."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    default_generator.set_state(new_state)
