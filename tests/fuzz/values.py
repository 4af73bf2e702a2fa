"""Argument specs built the same way under npgrad and torch, and the bad or edge variants the
fuzzer substitutes for one argument (wrong types, NaN/inf, empty, 0-dim, non-contiguous,
out-of-range dims, negative and huge sizes, mismatched shapes and dtypes)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """A tensor to build in either library: its data, whether it requires grad, its layout."""
    array: np.ndarray
    requires_grad: bool = False
    noncontig: bool = False

    def build(self, mod: Any) -> Any:
        a = self.array
        rg = self.requires_grad and a.dtype.kind == "f"
        if not self.noncontig:
            return mod.tensor(a, requires_grad=rg)
        # Note [Non-contiguous leaves]
        # The data is laid out transposed (or strided) and viewed back to its shape; the view of
        # a base that does not require grad is itself a leaf, so requires_grad_ keeps it one.
        if a.ndim >= 2:
            base = mod.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)))
            t = base.transpose(-1, -2)
        else:
            base = mod.tensor(np.repeat(a.reshape(-1), 2).reshape(a.shape[:1] + (2,)))
            t = base[:, 0]
        return t.requires_grad_(rg) if rg else t

    @property
    def shape(self) -> tuple:
        return self.array.shape


def build(spec: Any, mod: Any) -> Any:
    """Turn a spec (tensor specs inside lists, tuples, dicts or plain values) into arguments."""
    if isinstance(spec, TensorSpec):
        return spec.build(mod)
    if isinstance(spec, DtypeSpec):
        return getattr(mod, spec.name)
    if isinstance(spec, list):
        return [build(s, mod) for s in spec]
    if isinstance(spec, tuple):
        return tuple(build(s, mod) for s in spec)
    if isinstance(spec, dict):
        return {k: build(v, mod) for k, v in spec.items()}
    return spec


@dataclasses.dataclass(frozen=True)
class DtypeSpec:
    name: str  # "float32", "int64", ...


def rng_for(*key: Any) -> np.random.Generator:
    import zlib
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def data(shape: tuple, dtype: Any = np.float32, seed: Any = 0, low: float = 0.1,
         high: float = 0.9) -> np.ndarray:
    return rng_for(shape, seed).uniform(low, high, shape).astype(dtype)


def T(*shape: int, dtype: Any = np.float32, rg: bool = False, seed: Any = 0) -> TensorSpec:
    return TensorSpec(data(shape, dtype, seed), rg)


def I(values: Any) -> TensorSpec:
    return TensorSpec(np.asarray(values, dtype=np.int64))


def B(values: Any) -> TensorSpec:
    return TensorSpec(np.asarray(values, dtype=bool))


# -- mutations ------------------------------------------------------------------------------------
# Each mutation maps the original argument (a spec) to a replacement, or None where it does not
# apply.  ``RISKY`` ones may make npgrad allocate without bound or crash: they only run in a
# separate process with limits (fuzz.isolation).

Mutation = Callable[[Any], Any]


class _NotApplicable:
    def __repr__(self) -> str:
        return "NA"


NA: Any = _NotApplicable()  # a mutation's answer where it does not apply to the value
_NA = NA


def _or(value: Any, default: Any) -> Any:
    return default if value is NA else value


def _t_nan_inf(s: TensorSpec) -> Any:
    a = s.array
    if a.dtype.kind != "f" or a.size == 0:
        return _NA
    b = a.copy().reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0]
    for i in range(min(b.size, len(specials))):
        b[i] = specials[i]
    return dataclasses.replace(s, array=b.reshape(a.shape))


def _t_empty(s: TensorSpec) -> Any:
    shape = (0,) + s.shape[1:] if s.shape else (0,)
    return dataclasses.replace(s, array=np.zeros(shape, s.array.dtype))


def _t_zero_dim(s: TensorSpec) -> Any:
    if s.array.ndim == 0:
        return _NA
    flat = s.array.reshape(-1)
    value = flat[0] if flat.size else s.array.dtype.type(0)
    return dataclasses.replace(s, array=np.asarray(value, s.array.dtype))


def _t_noncontig(s: TensorSpec) -> Any:
    if s.array.ndim == 0 or s.noncontig:
        return _NA
    return dataclasses.replace(s, noncontig=True)


def _t_astype(dtype: Any) -> Mutation:
    def mutate(s: TensorSpec) -> Any:
        if s.array.dtype == np.dtype(dtype):
            return _NA
        a = s.array
        if np.dtype(dtype).kind in "iu" and a.dtype.kind == "f":
            a = np.round(np.nan_to_num(a * 3, posinf=0.0, neginf=0.0))
        if np.dtype(dtype) == np.bool_:
            a = a > (a.mean() if a.size else 0)
        rg = s.requires_grad and np.dtype(dtype).kind == "f"
        return dataclasses.replace(s, array=np.asarray(a).astype(dtype), requires_grad=rg)
    return mutate


def _t_other_float(s: TensorSpec) -> Any:
    if s.array.dtype.kind != "f":
        return _NA
    other = np.float64 if s.array.dtype == np.float32 else np.float32
    return dataclasses.replace(s, array=s.array.astype(other))


def _t_shape_mismatch(s: TensorSpec) -> Any:
    shape = s.shape[:-1] + (s.shape[-1] + 1,) if s.shape else (2,)
    return dataclasses.replace(s, array=data(shape, s.array.dtype, "mismatch"))


def _t_ndim_plus(s: TensorSpec) -> Any:
    return dataclasses.replace(s, array=np.stack([s.array, s.array]))


def _t_ndim_minus(s: TensorSpec) -> Any:
    if s.array.ndim == 0:
        return _NA
    return dataclasses.replace(s, array=s.array[0].copy() if s.shape[0] else
                               np.zeros(s.shape[1:], s.array.dtype))


def _t_requires_grad(s: TensorSpec) -> Any:
    if s.array.dtype.kind != "f":
        return _NA
    return dataclasses.replace(s, requires_grad=not s.requires_grad)


def _t_list(s: TensorSpec) -> Any:
    return s.array.tolist()


TENSOR_MUTATIONS: dict[str, Mutation] = {
    "str": lambda s: "x",
    "none": lambda s: None,
    "float": lambda s: 1.5,
    "int": lambda s: 2,
    "list": _t_list,
    "nan_inf": _t_nan_inf,
    "empty": _t_empty,
    "zero_dim": _t_zero_dim,
    "noncontig": _t_noncontig,
    "int64": _t_astype(np.int64),
    "bool": _t_astype(np.bool_),
    "float16": _t_astype(np.float16),
    "other_float": _t_other_float,
    "shape_mismatch": _t_shape_mismatch,
    "ndim_plus": _t_ndim_plus,
    "ndim_minus": _t_ndim_minus,
    "requires_grad": _t_requires_grad,
}

INT_MUTATIONS: dict[str, Mutation] = {
    "dim_too_big": lambda v: 7,
    "dim_too_small": lambda v: -7,
    "negative": lambda v: -2 if v != -2 else -3,
    "zero": lambda v: 0 if v != 0 else _NA,
    "float": lambda v: 1.5,
    "str": lambda v: "x",
    "none": lambda v: None,
    "bool": lambda v: True,
    "nan": lambda v: float("nan"),
    "tensor_0d": lambda v: I(v),
    "huge": lambda v: 2 ** 62,
    "huge_float": lambda v: 1e308,
}

FLOAT_MUTATIONS: dict[str, Mutation] = {
    "str": lambda v: "x",
    "none": lambda v: None,
    "nan": lambda v: float("nan"),
    "inf": lambda v: float("inf"),
    "negative": lambda v: -v - 1.0,
    "int": lambda v: 2,
    "tensor_0d": lambda v: TensorSpec(np.asarray(v, np.float32)),
    "list": lambda v: [v, v],
    "huge_float": lambda v: 1e308,
}

SIZES_MUTATIONS: dict[str, Mutation] = {
    "negative_size": lambda v: v[:-1] + (-2,) if v else _NA,
    "str_in": lambda v: ("x",) + v[1:] if v else _NA,
    "float_in": lambda v: (2.5,) + v[1:] if v else _NA,
    "none_in": lambda v: (None,) + v[1:] if v else _NA,
    "empty_tuple": lambda v: () if v else _NA,
    "nested": lambda v: (v,) if v else _NA,
    "dup_first": lambda v: (v[0],) + v if v else _NA,
    "tensor_sizes": lambda v: I(list(v)) if v else _NA,
    "huge_sizes": lambda v: (2 ** 62, 4) + v[2:],
    "huge_product": lambda v: (2 ** 31, 2 ** 31, 2 ** 31),
}

TENSOR_LIST_MUTATIONS: dict[str, Mutation] = {
    "empty_list": lambda v: [] if v else _NA,
    "str_in_list": lambda v: v[:1] + ["x"],
    "none_in_list": lambda v: v[:1] + [None],
    "mismatched_shapes": lambda v: v[:1] + [_t_shape_mismatch(v[0])] if v else _NA,
    "mixed_dtype": lambda v: v[:1] + [_or(_t_other_float(v[0]), v[0])] if v else _NA,
    "int_and_float": lambda v: v[:1] + [_or(_t_astype(np.int64)(v[0]), v[0])] if v else _NA,
    "tuple_not_list": lambda v: tuple(v),
    "bare_tensor": lambda v: v[0] if v else _NA,
    "zero_dim_in_list": lambda v: [_or(_t_zero_dim(v[0]), v[0])] * 2 if v else _NA,
}

STR_MUTATIONS: dict[str, Mutation] = {
    "bogus": lambda v: "bogus",
    "none": lambda v: None,
    "int": lambda v: 1,
    "upper": lambda v: v.upper() if v.upper() != v else _NA,
}

BOOL_MUTATIONS: dict[str, Mutation] = {
    "str": lambda v: "x",
    "int": lambda v: 2,
    "none": lambda v: None,
}

NONE_MUTATIONS: dict[str, Mutation] = {
    "str": lambda v: "x",
    "float": lambda v: 1.5,
    "int": lambda v: 1,
}

RISKY = frozenset({"huge", "huge_float", "huge_sizes", "huge_product"})


def mutations_for(value: Any) -> dict[str, Mutation]:
    """The variants that apply to an argument of ``value``'s kind."""
    if isinstance(value, TensorSpec):
        return TENSOR_MUTATIONS
    if isinstance(value, bool):
        return BOOL_MUTATIONS
    if isinstance(value, int):
        return INT_MUTATIONS
    if isinstance(value, float):
        return FLOAT_MUTATIONS
    if isinstance(value, str):
        return STR_MUTATIONS
    if value is None:
        return NONE_MUTATIONS
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool)
                                        for v in value):
        return SIZES_MUTATIONS
    if isinstance(value, list) and value and all(isinstance(v, TensorSpec) for v in value):
        return TENSOR_LIST_MUTATIONS
    return {}


def kind_of(value: Any) -> str:
    """The argument kind a mutation replaced (registry rules select on it)."""
    if isinstance(value, TensorSpec):
        return "tensor"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return "sizes"
    if isinstance(value, list):
        return "tensor_list"
    return type(value).__name__
