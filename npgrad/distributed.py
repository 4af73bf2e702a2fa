"""npgrad.distributed: torch.distributed as a CPU build on Linux answers it, for one process.

Note [One-process distributed]
CPU-only scripts import ``torch.distributed`` at the top and ask
``is_available()`` (True on Linux builds, with gloo) and ``is_initialized()``
before doing anything distributed.  npgrad runs in one process, so it
implements the one-process case exactly: ``init_process_group`` with a world
size of 1 (from its arguments or the ``RANK`` / ``WORLD_SIZE`` environment
variables, as ``env://`` reads them) makes rank 0 of a group of one, whose
collectives are identities (the sum, max, ... over one process is its own
tensor).  A larger world raises a RuntimeError saying so.  Before
initialisation every query raises torch's ValueError.
"""
from __future__ import annotations

import enum
import os
from typing import Any

__all__ = ["ReduceOp", "all_gather", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "get_backend", "get_rank", "get_world_size",
           "init_process_group", "is_available", "is_gloo_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "reduce"]

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class ReduceOp(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class _Group:
    __slots__ = ("backend",)

    def __init__(self, backend: str) -> None:
        self.backend = backend


_default_group: _Group | None = None


def is_available() -> bool:
    """True, as on torch's Linux CPU build."""
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return _default_group is not None


def _group() -> _Group:
    if _default_group is None:
        raise ValueError(_NOT_INITIALIZED)
    return _default_group


def _env_int(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(value)


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Make the one-process default group (Note [One-process distributed])."""
    global _default_group
    if _default_group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "gloo" if backend is None else str(backend).lower()
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name == "mpi":
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only included "
                           "if you build PyTorch from source on a host that has MPI installed.")
    if init_method is None or init_method.startswith("env://"):
        rank = rank if rank >= 0 else _env_int("RANK")
        world_size = world_size if world_size >= 0 else _env_int("WORLD_SIZE")
    if world_size != 1 or rank not in (0, -1):
        raise RuntimeError(f"npgrad runs in one process: torch.distributed supports a world size "
                           f"of 1 only (got world_size={world_size}, rank={rank})")
    _default_group = _Group(name)


def destroy_process_group(group: Any = None) -> None:
    global _default_group
    _group()
    _default_group = None


def get_rank(group: Any = None) -> int:
    _group()
    return 0


def get_world_size(group: Any = None) -> int:
    _group()
    return 1


def get_backend(group: Any = None) -> str:
    return _group().backend


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    _group()


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> None:
    """Over one process every reduction leaves ``tensor`` as it is."""
    _group()


def reduce(tensor: Any, dst: int = 0, op: ReduceOp = ReduceOp.SUM, group: Any = None,
           async_op: bool = False) -> None:
    _group()


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> None:
    _group()


def all_gather(tensor_list: list, tensor: Any, group: Any = None, async_op: bool = False) -> None:
    """``tensor_list[0]`` receives ``tensor`` (the only rank's contribution)."""
    _group()
    if len(tensor_list) != 1:
        raise RuntimeError(f"all_gather expects a list of world_size (1) tensors, got "
                           f"{len(tensor_list)}")
    tensor_list[0].copy_(tensor)
