"""npgrad.utils.data: datasets, samplers, DataLoader batching and collation (torch as oracle).

Random orders come from NumPy's generator, so they differ from torch's; the tests
check what must agree: sizes, contents, determinism under a seed, and messages.
"""
from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import npgrad
from npgrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                               IterableDataset, RandomSampler, SequentialSampler, Subset,
                               TensorDataset, default_collate, random_split)


def structure(obj):
    """A comparable description of a batch: type names, dtypes, shapes and values."""
    if hasattr(obj, "dtype") and hasattr(obj, "shape") and hasattr(obj, "tolist"):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.tolist())
    if isinstance(obj, dict):
        return {k: structure(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [structure(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [structure(v) for v in obj])
    return obj


def test_utils_data_imports():
    import npgrad.utils.data as data

    assert npgrad.utils.data is data
    assert data.DataLoader is DataLoader


def test_tensor_dataset():
    x = npgrad.arange(10.).reshape(5, 2)
    y = npgrad.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    a, b = ds[3]
    assert a.tolist() == [6.0, 7.0] and b.item() == 3


def test_tensor_dataset_size_mismatch():
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(npgrad.zeros(3), npgrad.zeros(4))


def test_dataset_base_and_concat():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement"):
        Dataset()[0]
    both = TensorDataset(npgrad.arange(3)) + TensorDataset(npgrad.arange(10, 12))
    assert isinstance(both, ConcatDataset)
    assert len(both) == 5
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11]
    assert both[-1][0].item() == 11


def test_subset():
    ds = TensorDataset(npgrad.arange(10))
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3
    assert [sub[i][0].item() for i in range(3)] == [7, 2, 5]
    assert [b[0].tolist() for b in DataLoader(sub, batch_size=2)] == [[7, 2], [5]]


# -- batching ------------------------------------------------------------------------------

@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                    (9, 3, True), (2, 5, False), (2, 5, True),
                                                    (7, 1, False)])
def test_batches_and_len(n, batch_size, drop_last):
    ds = TensorDataset(npgrad.arange(n), npgrad.arange(n) * 2.0)
    loader = DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(batches)
    expected = [list(range(i, min(i + batch_size, n))) for i in range(0, n, batch_size)]
    if drop_last:
        expected = [b for b in expected if len(b) == batch_size]
    assert [x.tolist() for x, _ in batches] == expected
    assert [y.tolist() for _, y in batches] == [[2.0 * v for v in b] for b in expected]
    for x, y in batches:
        assert x.dtype == npgrad.int64 and y.dtype == npgrad.float32


def test_batch_size_none_yields_samples():
    loader = DataLoader(range(4), batch_size=None)
    assert len(loader) == 4
    assert list(loader) == [0, 1, 2, 3]


def test_batch_sampler_argument():
    loader = DataLoader(list(range(6)), batch_sampler=[[0, 5], [1, 2, 3]])
    assert [b.tolist() for b in loader] == [[0, 5], [1, 2, 3]]
    assert len(loader) == 2


def test_custom_collate_fn():
    loader = DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(loader) == [1, 5, 4]


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                          [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(), batch_size=None)) == list(range(7))


def test_dataset_getitems_is_used():
    class Batched(Dataset):
        calls = []

        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [float(i) for i in indices]

    ds = Batched()
    assert [b.tolist() for b in DataLoader(ds, batch_size=3)] == [[0.0, 1.0, 2.0], [3.0]]
    assert ds.calls == [[0, 1, 2], [3]]


def test_num_workers_runs_in_process():
    loader = DataLoader(list(range(5)), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]


# -- collation, compared with torch ---------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


def _samples(lib):
    return {
        "tensors": [lib.ones(2, 3), lib.zeros(2, 3)],
        "tuples": [(lib.tensor([1.0, 2.0]), 1), (lib.tensor([3.0, 4.0]), 2)],
        "lists": [[1.0, 2], [3.0, 4]],
        "dicts": [{"a": 1, "b": np.ones(2)}, {"a": 2, "b": np.zeros(2)}],
        "nested": [{"x": (lib.tensor(1.0), [1, 2])}, {"x": (lib.tensor(2.0), [3, 4])}],
        "bools": [True, False, True],
        "floats": [0.5, 1.5],
        "ints": [3, 4],
        "strings": ["a", "b"],
        "numpy_scalars": [np.float32(1.0), np.float32(2.0)],
        "numpy_float64": [np.float64(1.0), np.float64(2.0)],
        "numpy_arrays": [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)],
        "numpy_0d": [np.array(1.5), np.array(2.5)],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "int_tensors": [lib.tensor(1), lib.tensor(2)],
    }


@pytest.mark.parametrize("kind", sorted(_samples(npgrad)))
def test_default_collate_matches_torch(kind):
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    ours = structure(default_collate(_samples(npgrad)[kind]))
    theirs = structure(torch_collate(_samples(torch)[kind]))
    assert ours == theirs


@pytest.mark.parametrize("batch", [[[1, 2], [3]], [object(), object()],
                                   [np.array(["a"]), np.array(["b"])]],
                         ids=["ragged", "object", "string_array"])
def test_default_collate_errors_match_torch(batch):
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    with pytest.raises(Exception) as ours:
        default_collate(batch)
    with pytest.raises(Exception) as theirs:
        torch_collate(batch)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_loader_collates_dict_samples():
    class Dicts(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"x": npgrad.full((2,), float(i)), "label": i}

    batches = list(DataLoader(Dicts(), batch_size=2))
    assert batches[0]["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert batches[0]["label"].tolist() == [0, 1]
    assert batches[1]["label"].tolist() == [2]


# -- shuffling and samplers -----------------------------------------------------------------

def _order(seed, n=20, batch_size=4):
    g = npgrad.Generator().manual_seed(seed)
    loader = DataLoader(npgrad.arange(n), batch_size=batch_size, shuffle=True, generator=g)
    return [v for batch in loader for v in batch.tolist()]


def test_shuffle_is_a_permutation_and_deterministic_under_a_seed():
    a = _order(0)
    assert sorted(a) == list(range(20))
    assert a != list(range(20))
    assert _order(0) == a
    assert _order(1) != a


def test_shuffle_changes_between_epochs_with_one_generator():
    g = npgrad.Generator().manual_seed(5)
    loader = DataLoader(npgrad.arange(20), batch_size=5, shuffle=True, generator=g)
    first = [v for b in loader for v in b.tolist()]
    second = [v for b in loader for v in b.tolist()]
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second


def test_shuffle_without_generator_follows_manual_seed():
    npgrad.manual_seed(7)
    a = [v for b in DataLoader(npgrad.arange(10), batch_size=3, shuffle=True) for v in b.tolist()]
    npgrad.manual_seed(7)
    b = [v for b in DataLoader(npgrad.arange(10), batch_size=3, shuffle=True) for v in b.tolist()]
    assert a == b and sorted(a) == list(range(10))


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = npgrad.Generator().manual_seed(3)
    s = RandomSampler(range(6), generator=g)
    assert len(s) == 6 and sorted(s) == list(range(6))
    r = RandomSampler(range(3), replacement=True, num_samples=40, generator=g)
    drawn = list(r)
    assert len(drawn) == 40 and set(drawn) <= {0, 1, 2}
    more = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == [0, 1, 2, 3]
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3
    assert len(BatchSampler(range(5), 2, True)) == 2


# -- random_split ----------------------------------------------------------------------------

@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5],
                                     [1, 1, 8], [0.05, 0.95]])
def test_random_split_sizes_match_torch(lengths):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = random_split(range(10), lengths, generator=npgrad.Generator().manual_seed(0))
        theirs = torch.utils.data.random_split(range(10), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    items = sorted(i for s in ours for i in (s[j] for j in range(len(s))))
    assert items == list(range(10))


def test_random_split_is_deterministic_under_a_seed():
    def split(seed):
        parts = random_split(range(12), [4, 8], generator=npgrad.Generator().manual_seed(seed))
        return [list(p.indices) for p in parts]

    assert split(3) == split(3)
    assert split(3) != split(4)


def test_random_split_zero_length_warning():
    with pytest.warns(UserWarning, match="Length of split at index 0 is 0"):
        random_split(range(3), [0.0, 1.0])


# -- errors, compared with torch -------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__, str(exc)
    return None


ERRORS = {
    "sampler_and_shuffle": lambda d: d.DataLoader(list(range(5)), shuffle=True, sampler=[0]),
    "batch_sampler_and_batch_size": lambda d: d.DataLoader(list(range(5)), batch_size=2,
                                                           batch_sampler=[[0]]),
    "batch_sampler_and_drop_last": lambda d: d.DataLoader(list(range(5)), drop_last=True,
                                                          batch_sampler=[[0]]),
    "no_batch_and_drop_last": lambda d: d.DataLoader(list(range(5)), batch_size=None,
                                                     drop_last=True),
    "negative_workers": lambda d: d.DataLoader(list(range(5)), num_workers=-1),
    "negative_timeout": lambda d: d.DataLoader(list(range(5)), timeout=-1),
    "prefetch_without_workers": lambda d: d.DataLoader(list(range(5)), prefetch_factor=2),
    "persistent_without_workers": lambda d: d.DataLoader(list(range(5)),
                                                         persistent_workers=True),
    "zero_batch_size": lambda d: d.DataLoader(list(range(5)), batch_size=0),
    "bool_batch_size": lambda d: d.BatchSampler(range(5), True, False),
    "drop_last_not_bool": lambda d: d.BatchSampler(range(5), 2, 1),
    "replacement_not_bool": lambda d: d.RandomSampler(range(5), replacement=1),
    "num_samples_zero": lambda d: d.RandomSampler(range(5), num_samples=0),
    "split_sum": lambda d: d.random_split(range(10), [3, 3]),
    "split_fraction": lambda d: d.random_split(range(10), [1.5, -0.5]),
    "set_batch_size_after_init": lambda d: setattr(d.DataLoader(list(range(5))), "batch_size",
                                                   3),
    "concat_empty": lambda d: d.ConcatDataset([]),
    "iterable_shuffle": lambda d: d.DataLoader(_Stream(d), shuffle=True),
}


def _Stream(d):  # noqa: N802 - builds an IterableDataset of either library
    class Stream(d.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    return Stream()


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    import npgrad.utils.data as ours_mod
    import torch.utils.data as torch_mod

    theirs = _error(lambda: ERRORS[case](torch_mod))
    assert theirs is not None
    assert _error(lambda: ERRORS[case](ours_mod)) == theirs
