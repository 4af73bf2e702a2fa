"""Tests for npgrad._tensor_str: hand-written expectations plus comparisons with real torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from npgrad._tensor_str import format_tensor, get_printoptions, printoptions, set_printoptions

DEFAULT_OPTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


@pytest.fixture(autouse=True)
def _restore_printoptions():
    # Every test starts and ends with default options, in npgrad and in torch.
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default")


def dtype_name(arr: np.ndarray) -> str | None:
    return None if arr.dtype in (np.float32, np.int64, np.bool_) else str(arr.dtype)


def ours(arr: np.ndarray, suffixes: list[str] | None = None) -> str:
    return format_tensor(arr, dtype_name=dtype_name(arr), suffixes=suffixes or [])


def theirs(t) -> str:
    return repr(t).replace("torch.", "npgrad.")


def torch_repr(arr: np.ndarray, requires_grad: bool = False) -> str:
    torch = pytest.importorskip("torch")
    return theirs(torch.from_numpy(np.array(arr, copy=True)).requires_grad_(requires_grad))


# ---------------------------------------------------------------- hand-written

HAND_CASES = [
    (np.array([2.0], np.float32), [], "tensor([2.])"),
    (np.array(3.0, np.float32), ["requires_grad=True"], "tensor(3., requires_grad=True)"),
    (np.array(1.5, np.float32), [], "tensor(1.5000)"),
    (np.array([1.5, 2.0, 3.0], np.float32), [], "tensor([1.5000, 2.0000, 3.0000])"),
    (np.array([0.5, 100.0], np.float32), [], "tensor([  0.5000, 100.0000])"),
    (np.array([1001.0, 1.0], np.float32), [], "tensor([1.0010e+03, 1.0000e+00])"),
    (np.array([1e-5, 1.0], np.float32), [], "tensor([1.0000e-05, 1.0000e+00])"),
    (np.array([np.nan, np.inf, -np.inf], np.float32), [], "tensor([nan, inf, -inf])"),
    (np.array([-0.0, 0.0], np.float32), [], "tensor([-0., 0.])"),
    (np.zeros((2, 0), np.float32), [], "tensor([], size=(2, 0))"),
    (np.zeros((0,), np.float32), [], "tensor([])"),
    (np.zeros((0,), np.float64), [], "tensor([], dtype=npgrad.float64)"),
    (np.zeros((0,), np.int64), [], "tensor([], dtype=npgrad.int64)"),
    (np.array([True, False]), [], "tensor([ True, False])"),
    (np.array([1, -2], np.int64), [], "tensor([ 1, -2])"),
    (np.array([1, 2], np.int32), [], "tensor([1, 2], dtype=npgrad.int32)"),
    (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), ["grad_fn=<MulBackward0>"],
     "tensor([[1., 2.],\n        [3., 4.]], grad_fn=<MulBackward0>)"),
    (np.arange(8, dtype=np.int64).reshape(2, 2, 2), [],
     "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
]


@pytest.mark.parametrize("arr, suffixes, expected", HAND_CASES)
def test_hand_written(arr, suffixes, expected):
    assert format_tensor(arr, dtype_name=dtype_name(arr), suffixes=suffixes) == expected


def test_custom_prefix_sets_indent():
    arr = np.array([[1, 2], [3, 4]], np.int64)
    assert format_tensor(arr, dtype_name=None, suffixes=[], prefix="Foo(") == "Foo([[1, 2],\n     [3, 4]])"


def test_printoptions_round_trip():
    assert get_printoptions() == DEFAULT_OPTS
    set_printoptions(precision=2, sci_mode=True)
    assert get_printoptions() == {**DEFAULT_OPTS, "precision": 2, "sci_mode": True}
    set_printoptions(**DEFAULT_OPTS)
    assert get_printoptions() == DEFAULT_OPTS
    set_printoptions(profile="short")
    assert get_printoptions() == {**DEFAULT_OPTS, "precision": 2, "edgeitems": 2}
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == float("inf")
    set_printoptions(profile="default")
    assert get_printoptions() == DEFAULT_OPTS


def test_printoptions_context_and_effect():
    arr = np.array([1.12345], np.float32)
    with printoptions(precision=2):
        assert ours(arr) == "tensor([1.12])"
    assert ours(arr) == "tensor([1.1235])"
    set_printoptions(threshold=5)
    assert ours(np.arange(10, dtype=np.int64)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"


# ---------------------------------------------------------------- torch oracle

rng = np.random.default_rng(0)

ORACLE_CASES = {
    # every dtype
    "f16": np.array([0.1, 2.5, -3.0, 65504.0], np.float16),
    "f16_int": np.array([1, 2, -3], np.float16),
    "f32": np.array([0.1, 0.2, 0.3], np.float32),
    "f64": np.array([0.1, 1 / 3, -2.0], np.float64),
    "f64_int": np.array([1.0, 2.0], np.float64),
    "i8": np.array([-128, 0, 127], np.int8),
    "i16": np.array([-300, 7], np.int16),
    "i32": np.array([5, -12345], np.int32),
    "i64": np.array([5, -12345, 0], np.int64),
    "u8": np.array([0, 255, 7], np.uint8),
    "bool": np.array([[True, False], [False, True]]),
    "bool0": np.array(True),
    "i0": np.array(-7, np.int64),
    "i0_i16": np.array(3, np.int16),
    "f0": np.array(2.0, np.float32),
    "f0_fix": np.array(-1.5, np.float64),
    "f0_sci": np.array(1e-7, np.float32),
    "f0_nan": np.array(np.nan, np.float32),
    "f0_negzero": np.array(-0.0, np.float32),
    # format choice
    "int_mode_big": np.array([1e8, 1.0], np.float32),
    "int_mode_sci": np.array([1e9, 1.0], np.float64),
    "int_mode_ratio": np.array([10000.0, 1.0], np.float32),
    "fix_ratio_edge": np.array([1000.0, 1.5], np.float64),
    "sci_ratio": np.array([1000.5, 1.0], np.float64),
    "sci_small": np.array([5e-5, 0.5], np.float32),
    "sci_huge": np.array([1e30, -1e-30, 0.0], np.float64),
    "sci_extreme": np.array([1e300, 1e-300], np.float64),
    "denormal": np.array([5e-324, 1.0], np.float64),
    "nonfinite_mix_fix": np.array([1.5, np.nan, -np.inf, 0.0], np.float32),
    "nonfinite_mix_int": np.array([1.0, np.nan, np.inf, -0.0], np.float32),
    "nonfinite_mix_sci": np.array([1e-8, np.nan, -np.inf, 0.0], np.float32),
    "all_nonfinite": np.array([np.nan, np.inf, 0.0, -0.0], np.float64),
    "neg_align": np.array([-1.25, 100.5, 3.0], np.float32),
    "round_up": np.array([0.99999, 9.99996], np.float32),
    # empties
    "empty_f32": np.zeros((0,), np.float32),
    "empty_2d": np.zeros((2, 0), np.float32),
    "empty_3d_f64": np.zeros((0, 3, 1), np.float64),
    "empty_bool": np.zeros((0,), np.bool_),
    "empty_i64_2d": np.zeros((3, 0), np.int64),
    "empty_i32": np.zeros((0,), np.int32),
    "empty_u8_2d": np.zeros((0, 2), np.uint8),
    # multi-dim
    "mat_f32": rng.standard_normal((3, 4)).astype(np.float32),
    "cube_f64": rng.standard_normal((2, 3, 4)),
    "rank4_i64": np.arange(24, dtype=np.int64).reshape(2, 1, 3, 4) - 10,
    "rank5_f32": rng.standard_normal((2, 1, 2, 1, 2)).astype(np.float32),
    "col": np.arange(4, dtype=np.float32).reshape(4, 1),
    # long rows wrap at 80 columns
    "long_row_f32": rng.standard_normal(40).astype(np.float32),
    "long_row_i64": np.arange(100, dtype=np.int64),
    "long_row_f64_sci": rng.standard_normal(30) * 1e6,
    "long_rows_2d": rng.standard_normal((3, 25)).astype(np.float32),
    "long_rows_3d": np.arange(2 * 2 * 30, dtype=np.int32).reshape(2, 2, 30),
    "long_row_bool": rng.random(50) > 0.5,
    # summarisation (> 1000 elements)
    "sum_1d": np.arange(1001, dtype=np.float32),
    "sum_1d_i64": np.arange(5000, dtype=np.int64),
    "sum_1d_hidden_big": np.concatenate([np.ones(3), np.full(1000, 1e10), np.ones(3)]).astype(np.float32),
    "sum_2d": rng.standard_normal((40, 40)).astype(np.float32),
    "sum_2d_wide": rng.standard_normal((2, 600)),
    "sum_2d_short_rows": np.arange(1002, dtype=np.int64).reshape(501, 2),
    "sum_3d": rng.standard_normal((11, 10, 10)).astype(np.float32),
    "sum_3d_i8": (np.arange(2000) % 100).astype(np.int8).reshape(10, 20, 10),
    "sum_4d": np.arange(7 * 7 * 7 * 7, dtype=np.float64).reshape(7, 7, 7, 7) / 7,
    "sum_f16": (rng.standard_normal(2000) * 100).astype(np.float16),
    "sum_bool": rng.random((30, 40)) > 0.5,
    "threshold_exact": np.arange(1000, dtype=np.int64),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CASES))
def test_matches_torch(name):
    arr = ORACLE_CASES[name]
    assert ours(arr) == torch_repr(arr)


SUFFIX_ARRAYS = [
    np.array([1.5, 2.0], np.float32),
    np.array(3.0, np.float32),
    np.array([1.0, 2.0], np.float64),
    np.array([1e-6, 2.0], np.float16),
    np.arange(90, dtype=np.float32).reshape(3, 30) / 7,
    np.zeros((0, 2), np.float64),
    np.zeros((0,), np.float32),
]


@pytest.mark.parametrize("arr", SUFFIX_ARRAYS, ids=range(len(SUFFIX_ARRAYS)))
def test_requires_grad_and_grad_fn_suffixes(arr):
    torch = pytest.importorskip("torch")
    leaf = torch.tensor(arr, requires_grad=True)
    assert ours(arr, ["requires_grad=True"]) == theirs(leaf)
    out = leaf * 2
    assert ours(out.detach().numpy(), ["grad_fn=<MulBackward0>"]) == theirs(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_suffix_wraps_onto_new_line(dtype):
    torch = pytest.importorskip("torch")
    # Sweep the length of the last line across the 80-column limit, so that
    # the suffixes sometimes fit and sometimes move to a line of their own.
    for n in range(1, 16):
        leaf = torch.tensor((np.arange(n, dtype=dtype) + 0.5) * 1000, requires_grad=True)
        out = leaf.sum(0, keepdim=True) * leaf
        for t, suffix in ((leaf, "requires_grad=True"), (out, "grad_fn=<MulBackward0>")):
            arr = t.detach().numpy()
            assert ours(arr, [suffix]) == theirs(t)


@pytest.mark.parametrize("opts", [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"threshold": 0},
    {"edgeitems": 0},
    {"linewidth": 40},
    {"linewidth": 5},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6, "sci_mode": True},
], ids=str)
def test_printoptions_match_torch(opts):
    torch = pytest.importorskip("torch")
    torch.set_printoptions(**opts)
    set_printoptions(**opts)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for arr in (np.arange(20, dtype=np.float32) / 3, np.arange(20, dtype=np.int64),
                np.array(2.5, np.float32), np.array([1e-5, 1.0]),
                np.arange(60, dtype=np.float32).reshape(3, 4, 5),
                rng.standard_normal(3000).astype(np.float32),
                np.zeros((2, 0), np.float32), np.array([True, False])):
        assert ours(arr) == torch_repr(arr)
        if arr.dtype.kind == "f":
            assert ours(arr, ["requires_grad=True"]) == torch_repr(arr, requires_grad=True)


# ---------------------------------------------------------------- property test

magnitudes = st.sampled_from([1e-12, 1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e8, 1e12, 1e30])
float_elems = st.one_of(
    st.floats(-1e6, 1e6, width=32),
    st.builds(lambda m, x: m * x, magnitudes, st.floats(-10, 10)),
    st.integers(-1000, 1000).map(float),
    st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]),
)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
INTS = {"i8": np.int8, "i32": np.int32, "i64": np.int64, "u8": np.uint8}


@st.composite
def arrays(draw):
    kind = draw(st.sampled_from([*FLOATS, *INTS, "bool"]))
    shape = draw(shapes)
    if kind in FLOATS:
        values = draw(hnp.arrays(np.float64, shape, elements=float_elems))
        with np.errstate(over="ignore"):  # float16 overflow to inf is fine to print
            return values.astype(FLOATS[kind])
    if kind == "bool":
        return draw(hnp.arrays(np.bool_, shape))
    return draw(hnp.arrays(INTS[kind], shape))


@settings(max_examples=300, deadline=None)
@given(arrays())
def test_property_matches_torch(arr):
    pytest.importorskip("torch")
    assert ours(arr) == torch_repr(arr)


@settings(max_examples=150, deadline=None)
@given(arrays(), st.integers(0, 40), st.integers(0, 4), st.integers(10, 100), st.integers(0, 6))
def test_property_options_match_torch(arr, threshold, edgeitems, linewidth, precision):
    # Small thresholds force summarisation on the small random arrays.
    torch = pytest.importorskip("torch")
    opts = dict(threshold=threshold, edgeitems=edgeitems, linewidth=linewidth, precision=precision)
    torch.set_printoptions(**opts)
    set_printoptions(**opts)
    try:
        assert ours(arr) == torch_repr(arr)
    finally:
        torch.set_printoptions(profile="default")
        set_printoptions(profile="default")


def test_default_dtype_float64():
    # With a float64 default the caller names float32 instead; empty int64 stays named.
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for arr in (np.array([1.5], np.float32), np.zeros((0,), np.float32),
                    np.zeros((0,), np.float64), np.array([1.5]), np.zeros((0,), np.int64)):
            name = None if arr.dtype in (np.float64, np.int64) else str(arr.dtype)
            assert format_tensor(arr, dtype_name=name, suffixes=[]) == torch_repr(arr)
    finally:
        torch.set_default_dtype(old)
