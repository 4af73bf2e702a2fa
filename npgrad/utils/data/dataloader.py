"""DataLoader: batches of samples from a dataset, and the default collate functions.

Loading always runs in this process: ``num_workers > 0`` is accepted (so code
written for torch runs) and reads the samples in the same order, without
worker processes.
"""
from __future__ import annotations

import collections.abc
import math
import re
from typing import Any, Callable, Iterator

import numpy as np

from ..._tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")
_STRING_OR_OBJECT = re.compile(r"[SaUO]")


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _array_to_tensor(arr: Any) -> Tensor:
    from ..._creation import as_tensor

    return as_tensor(np.asarray(arr))


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays (also inside dicts, tuples and lists) into tensors; keep the rest."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return _array_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        items = [default_convert(d) for d in data]
        try:
            return type(data)(items)  # type: ignore[call-arg]
        except TypeError:
            return items
    return data


def default_collate(batch: Any) -> Any:
    """Merge a list of samples into a batch, torch's way.

    Tensors are stacked (a new first dimension); NumPy arrays become tensors and
    are stacked; Python floats give a float64 tensor, ints an int64 tensor (bools
    a bool tensor); strings stay a list; dicts are collated key by key; tuples
    and lists are transposed and collated position by position (a list comes
    back, a namedtuple stays a namedtuple).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import default_collate
    >>> default_collate([(torch.zeros(2), 1), (torch.ones(2), 2)])
    [tensor([[0., 0.],
            [1., 1.]]), tensor([1, 2])]
    """
    from ..._creation import tensor
    from ..._ops.shape import stack
    from ... import _dtype

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([_array_to_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return _array_to_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)  # type: ignore[call-arg]
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            return type(elem)(columns)  # type: ignore[call-arg]
        except TypeError:
            return columns
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def get_worker_info() -> None:
    """Always ``None``: npgrad loads data in the main process."""
    return None


class _InfiniteConstantSampler:
    """The index 'sampler' of an iterable dataset: ``None`` forever."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches: ``for x, y in DataLoader(ds, batch_size=32)``.

    Map-style datasets are read through a sampler (sequential, or random with
    ``shuffle=True``, seeded by ``generator``) grouped by a ``BatchSampler``;
    ``collate_fn`` (default: ``default_collate``) merges each batch.

    >>> import npgrad as torch
    >>> from npgrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(5.), torch.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True

    def __setattr__(self, attr: str, value: Any) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last \
                    else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self) -> Iterator[Any]:
        from ... import _sampling
        from ..._random import get_generator

        indices = iter(self._index_sampler)
        # torch draws a base seed (for workers) from the loader's generator on each pass, as
        # ``empty((), dtype=int64).random_(generator=...)``; drawing it here keeps the
        # generator's later draws where torch has them.
        _sampling.random_full(get_generator(self.generator), 1, np.dtype(np.int64))
        if self._iterable:
            return self._iter_stream(indices)
        return self._iter_map(indices)

    def _iter_map(self, indices: Iterator[Any]) -> Iterator[Any]:
        dataset = self.dataset
        collate = self.collate_fn
        if not self._auto_collation:
            for idx in indices:
                yield collate(dataset[idx])
            return
        getitems = getattr(dataset, "__getitems__", None)
        for batch_indices in indices:
            if getitems:
                samples = getitems(batch_indices)
            else:
                samples = [dataset[i] for i in batch_indices]
            yield collate(samples)

    def _iter_stream(self, indices: Iterator[Any]) -> Iterator[Any]:
        stream = iter(self.dataset)
        collate = self.collate_fn
        if not self._auto_collation:
            for _ in indices:
                try:
                    sample = next(stream)
                except StopIteration:
                    return
                yield collate(sample)
        for batch_indices in indices:
            samples = []
            for _ in batch_indices:
                try:
                    samples.append(next(stream))
                except StopIteration:
                    break
            if not samples or (self.drop_last and len(samples) < len(batch_indices)):
                return
            yield collate(samples)
            if len(samples) < len(batch_indices):
                return
