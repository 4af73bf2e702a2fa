"""Datasets: the map-style base, tensors as a dataset, subsets, concatenation, random splits."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Any, Iterable, Sequence

from ..._tensor import Tensor

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "random_split"]


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; most also define ``__len__``."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses define ``__iter__``."""

    def __iter__(self) -> Any:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; the tensors share their first size.

    >>> import npgrad as torch
    >>> ds = torch.utils.data.TensorDataset(torch.arange(3), torch.zeros(3, 2))
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor([0., 0.])))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Several map-style datasets one after the other."""

    @staticmethod
    def cumsum(sequence: Iterable) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        offset = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - offset]


class ChainDataset(IterableDataset):
    """Several iterable datasets read one after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Any:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[float],
                 generator: Any = None) -> list[Subset]:
    """Split ``dataset`` at random into subsets of the given lengths (or fractions of it).

    Fractions that sum to 1 become lengths rounded down, with the remainder
    handed out one by one from the first split.  The permutation is
    ``npgrad.randperm(len(dataset), generator=generator)``: a seeded generator
    gives the same split each time.

    >>> import npgrad as torch
    >>> parts = torch.utils.data.random_split(range(10), [0.7, 0.3],
    ...                                       generator=torch.Generator().manual_seed(0))
    >>> [len(p) for p in parts]
    [7, 3]
    """
    from ..._creation import randperm

    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))  # type: ignore[arg-type]
        for i in range(len(dataset) - sum(sizes)):  # type: ignore[arg-type]
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()  # type: ignore[arg-type]
    return [Subset(dataset, indices[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths)]  # type: ignore[arg-type]
