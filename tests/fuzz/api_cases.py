"""Cases over the public API: every function npgrad shares with torch (top level,
``nn.functional``, ``linalg``, ``special``) and every Tensor method both have, each from a
valid base call found by trying candidate argument lists on torch, then one argument at a
time replaced by each of its bad or edge variants."""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from fuzz.case import Case
from fuzz.values import (NA, RISKY, B, DtypeSpec, I, T, TensorSpec, build, kind_of,
                         mutations_for)


def _spd(n: int) -> TensorSpec:
    a = np.random.default_rng(3).uniform(-1, 1, (n, n))
    return TensorSpec((a @ a.T + n * np.eye(n)).astype(np.float32))


def data_array() -> np.ndarray:
    return np.arange(6, dtype=np.float32).reshape(2, 3)


T23, T34, T3 = T(2, 3), T(3, 4, seed=1), T(3, seed=2)
I23 = I([[0, 1, 2], [2, 0, 1]])
# Candidate base calls, tried in order: (positional specs, keyword specs).  The first one torch
# accepts is the base; all are small so a bad variant can never make torch allocate much.
CANDIDATES: list[tuple[tuple, dict]] = [
    ((T23,), {}),
    ((T23, T(2, 3, seed=1)), {}),
    ((T23, 1), {}),
    ((T23, 1.5), {}),
    ((T23, T(2, 3, seed=1), T(2, 3, seed=2)), {}),
    ((T23, 1, I23), {}),
    ((T23, 1, I23, T(2, 3, seed=1)), {}),
    ((T23, 1, I([0, 1])), {}),
    ((T23, 1, I([0, 1]), T(2, 2, seed=1)), {}),
    ((T23, B([[True, False, True], [False, True, False]]), 1.5), {}),
    ((T23, B([[True, False, True], [False, True, False]])), {}),
    ((T23, B([[True, False, True], [False, True, False]]), T(2, 3, seed=1)), {}),
    (((2, 3),), {}),
    ((2, 3), {}),
    ((5,), {}),
    (([T23, T(2, 3, seed=1)],), {}),
    ((_spd(3),), {}),
    ((_spd(3), T(3, 3, seed=1)), {}),
    ((T3,), {}),
    ((T3, T(3, seed=3)), {}),
    ((T23, T34), {}),
    ((T23, T3), {}),
    ((T(2, 3, 4), T(2, 4, 5, seed=1)), {}),
    ((T(2, 4), T23, T34), {}),
    ((T(3), T(3, 2, seed=1), T(2, seed=2)), {}),
    ((T(3, 2), T(3, seed=1), T(2, seed=2)), {}),
    ((I([0, 2, 1, 2]),), {}),
    (("ij,jk->ik", T23, T34), {}),
    ((0.0, 1.0, 5), {}),
    ((T23, 1, 0, 2), {}),
    ((T23, (1, 1)), {}),
    ((T23, 2), {}),
    ((T23, 1, 2), {}),
    ((T23, (3, 2)), {}),
    ((T23, I([0, 2])), {}),
    ((I([0, 2]), T(5, 3)), {}),
    ((I([[0, 2, 1]]), 3), {}),
    ((T(1, 2, 6, 6), T(3, 2, 3, 3, seed=1)), {}),
    ((T(1, 2, 8), T(3, 2, 3, seed=1)), {}),
    ((T(1, 2, 6, 6), 2), {}),
    ((T(1, 2, 8), 2), {}),
    ((T(1, 2, 6, 6),), {"scale_factor": 2.0}),
    ((T(2, 3, 4), T(2, 3, 4, seed=1), T(2, 3, 4, seed=2)), {}),
    ((T(2, 4),), {}),
    ((T(2, 4), 1), {}),
    ((T23, T(3, 3, seed=1), T(2, 3, seed=2)), {}),
    ((T(2, 3, 4),), {}),
    ((T(2, 3, 4), 3), {}),
    ((T(4, 3), 2), {}),
    ((T(2, 3), (3,)), {}),
    ((T(2, 4, 3), 2), {}),
    ((T(1, 4, 2, 2), 2), {}),
    ((T(1, 4, 9), (4, 4), 2), {}),
    ((T(2, 3), [3]), {}),
    ((T(2, 3), [3], T(3, seed=1), T(3, seed=2)), {}),
    ((T(3, 4), 2, T(4, seed=1), T(4, seed=2)), {}),
    ((T(2, 3), T(2, 3, seed=1), I([1, -1])), {}),
    ((T(2, 3), I([0, 2])), {}),
    ((T(2, 3), T(2, 3, seed=1), T(2, 3, seed=2), T(2, seed=3)), {}),
    ((T(3, 2), 1, 1), {}),
    ((T23, DtypeSpec("float64")), {}),
    ((T23, "cpu"), {}),
    ((T23, 0.5, 0.5), {}),
    ((T23, T(2, 3, seed=1), 0.5), {}),
    ((T23, T(2, 3, seed=1), T(2, 3, seed=2), 0.5), {}),
    ((T23, 0, T(3, seed=1), 1), {}),
    ((T23, T(3, seed=1), 0, 1), {}),
    ((T23, T(2, 1, seed=1), 1), {}),
    ((T23, 0, I([1]), 1.5), {}),
    ((T23, 1, I23, 1.5), {}),
    ((T23, 1, I23, T(2, 3, seed=1), "sum"), {}),
    ((I([[0, 1], [1, 2]]),), {}),
    ((I([3, 1, 2]), I([2, 1, 1])), {}),
    ((3, 3), {}),
    ((3, 3, 1), {}),
    ((0, 5, I([0, 1])), {}),
    ((T23, T3, T(2, 3, seed=1)), {}),
    (((2, 3), 1.5), {}),
    ((T(4, 2, 6), 3), {}),
    ((T(2, 2, 2, 2), 2), {}),
    (((2, 3), (3, 1)), {}),
    # late: calls the ones above would shadow
    ((), {}),
    ((T(2, 4), T(3, 2, 3, seed=1), T(3, 3, 4, seed=2)), {}),
    ((T(3, 2, 4), T(3, 2, 3, seed=1), T(3, 3, 4, seed=2)), {}),
    ((T23, (2, 2, 3)), {}),
    ((T23, (0,)), {}),
    ((T23, (1, 0)), {}),
    ((T23, 1, 0), {}),
    ((T(3, 1), 3, 4), {}),
    ((data_array(),), {}),
    ((T23, (I([0, 1]), I([1, 2])), T(2, seed=1)), {}),
    ((DtypeSpec("float32"), DtypeSpec("int64")), {}),
    ((0, 5, (2, 3)), {}),
    ((T(2, 4), 1, (2, 2)), {}),
    ((T(4, 3), T(3, seed=1), T(3, seed=2)), {}),
    ((T(5, 3), T(5, 2, seed=1), T(4, 3, 2, seed=2)), {}),
    ((T(1, 2, 8), T(2, 3, 3, seed=1)), {}),
    ((T(1, 2, 6, 6), T(2, 3, 3, 3, seed=1)), {}),
    ((T(1, 2, 6, 6), 2, 2), {}),
    (([T23, T34],), {}),
    ((_spd(3), T(3, 3, seed=1)), {"upper": True}),
    ((T(1),), {}),
    ((I([2]),), {}),
    ((T(rg=True),), {}),
    ((T23, 0.5), {}),
]



def resolver(target: str) -> Callable[[Any, tuple, dict], Any]:
    """How a target name is called: ``torch.add``, ``F.relu``, ``linalg.inv``, ``special.entr``
    (functions) or ``Tensor.add`` (a method of the first argument)."""
    space, _, name = target.partition(".")
    if space == "Tensor":
        # Through the class, as ``t.abs(1)`` runs: CPython calls the method unbound there, and
        # torch's texts then name ``TensorBase.abs()``; a bound method fetched first
        # (``getattr(t, "abs")(1)``) would make torch say ``Tensor.abs()`` instead.
        return lambda mod, args, kwargs: getattr(type(args[0]), name)(*args, **kwargs)
    path = {"torch": (), "F": ("nn", "functional"), "linalg": ("linalg",),
            "special": ("special",)}[space]

    def call(mod: Any, args: tuple, kwargs: dict) -> Any:
        obj = mod
        for p in path:
            obj = getattr(obj, p)
        return getattr(obj, name)(*args, **kwargs)
    return call


# Functions that change or read process state (other tests may have set one library's
# differently: thread counts, determinism, anomaly mode), or whose results cannot be compared.
_SKIP_PREFIXES = ("set_", "get_", "are_", "_")
_SKIP = {"manual_seed", "seed", "use_deterministic_algorithms", "initial_seed", "get_rng_state",
         "set_rng_state", "Tensor.data_ptr", "Tensor.untyped_storage", "Tensor.storage",
         "Tensor.__iter__", "Tensor.__array__", "Tensor.__reduce__", "Tensor.__reduce_ex__",
         "Tensor.__deepcopy__", "Tensor.__getstate__", "Tensor.__setstate__",
         "Tensor.register_hook", "Tensor.register_post_accumulate_grad_hook", "Tensor.type",
         "F.multi_head_attention_forward", "load", "save", "compile", "Tensor.share_memory_"}
# Results drawn at random (or uninitialised): compared by shape, dtype and flags only.
_RANDOM_WORDS = ("rand", "bernoulli", "multinomial", "normal", "poisson", "dropout", "empty",
                 "uniform_", "exponential_", "geometric_", "cauchy_", "random_")

_DUNDERS = ("__abs__ __add__ __and__ __bool__ __eq__ __float__ __floordiv__ __ge__ __getitem__ "
            "__gt__ __index__ __int__ __invert__ __le__ __len__ __lt__ __matmul__ __mod__ "
            "__mul__ __ne__ __neg__ __or__ __pos__ __pow__ __radd__ __rand__ __rfloordiv__ "
            "__rmatmul__ __rmod__ __rmul__ __ror__ __rpow__ __rsub__ __rtruediv__ __rxor__ "
            "__setitem__ __sub__ __truediv__ __xor__ __iadd__ __imul__ __isub__ __itruediv__ "
            "__ipow__").split()


# Decompositions whose factors are unique only up to sign: their values are compared by the
# op table (tests/op_rows_linalg.py), here only shapes, dtypes and flags.
_SIGN_AMBIGUOUS = {"svd", "eigh", "qr"}


def is_random(target: str) -> bool:
    name = target.split(".", 1)[1]
    return any(w in name for w in _RANDOM_WORDS) or name in _SIGN_AMBIGUOUS


def targets(npgrad: Any, torch: Any) -> list[str]:
    """Public functions and Tensor methods that both libraries have."""
    out = []
    spaces = (("torch", npgrad, torch), ("F", npgrad.nn.functional, torch.nn.functional),
              ("linalg", npgrad.linalg, torch.linalg), ("special", npgrad.special, torch.special))
    for label, mine, theirs in spaces:
        for name in sorted(set(dir(mine)) & set(dir(theirs))):
            if name.startswith(_SKIP_PREFIXES) or name in _SKIP or (
                    name.startswith("is_") and name.endswith("_enabled")):
                continue
            obj = getattr(mine, name)
            if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
                continue
            if not callable(getattr(theirs, name, None)):
                continue
            out.append(f"{label}.{name}")
    for name in sorted(set(dir(npgrad.Tensor)) & set(dir(torch.Tensor))):
        if (name.startswith("_") and name not in _DUNDERS) or f"Tensor.{name}" in _SKIP:
            continue
        if not callable(getattr(npgrad.Tensor, name, None)):
            continue
        if isinstance(inspect.getattr_static(npgrad.Tensor, name), property):
            continue
        out.append(f"Tensor.{name}")
    return out


def discover_base(target: str, torch: Any) -> int:
    """Index of the first candidate torch accepts for ``target`` (-1 when none)."""
    from fuzz.outcome import capture
    call = resolver(target)
    method = target.startswith("Tensor.")
    for i, (args, kwargs) in enumerate(CANDIDATES):
        if method and not (args and isinstance(args[0], TensorSpec)):
            continue
        outcome = capture(lambda: call(torch, build(args, torch), build(kwargs, torch)),
                          timeout_s=5)
        if outcome.ok and outcome.value != ("object", "NotImplementedType"):
            return i
    return -1


def make_case(target: str, base: int, position: str, mutation: str) -> Case:
    """The case for one argument of one base call replaced by one variant (pure: the isolated
    worker rebuilds cases from these four values).  ``position`` is ``argN``, ``kw:NAME``,
    ``call`` (a whole-call variant) or '' for the base call itself."""
    base_args, base_kwargs = CANDIDATES[max(base, 0)]
    args, kwargs = list(base_args), dict(base_kwargs)
    arg_kind = ""
    if position.startswith("arg"):
        i = int(position[3:])
        arg_kind = kind_of(args[i])
        args[i] = mutations_for(args[i])[mutation](args[i])
    elif position.startswith("kw:"):
        key = position[3:]
        arg_kind = kind_of(kwargs[key])
        kwargs[key] = mutations_for(kwargs[key])[mutation](kwargs[key])
    elif position == "call":
        arg_kind = "call"
        if mutation == "extra_positional":
            args.append("x")
        elif mutation == "extra_keyword":
            kwargs["bogus"] = 1
        elif mutation == "missing_last":
            args = args[:-1]
    call = resolver(target)
    frozen_args, frozen_kwargs = tuple(args), dict(kwargs)

    def run(mod: Any, ctx: dict) -> Any:
        return call(mod, build(frozen_args, mod), build(frozen_kwargs, mod))

    group = "method" if target.startswith("Tensor.") else "function"
    label = mutation if position else "base"
    cid = f"{target}[{base}]" + (f"/{position}:{mutation}" if position else "")
    if base < 0:
        cid = f"{target}[none]"
    return Case(cid, group, target, position, arg_kind, label, run,
                compare_values=not is_random(target), risky=mutation in RISKY,
                key=("api", target, base, position, mutation))


def cases_for(target: str, base: int) -> list[Case]:
    """The base call and every applicable single-argument variant of it."""
    out = [make_case(target, base, "", "")]
    if base < 0:
        return out
    args, kwargs = CANDIDATES[base]
    slots = [(f"arg{i}", a) for i, a in enumerate(args)]
    slots += [(f"kw:{k}", v) for k, v in kwargs.items()]
    for position, value in slots:
        for name, mutate in mutations_for(value).items():
            if mutate(value) is NA:
                continue  # does not apply to this value
            out.append(make_case(target, base, position, name))
    for name in ("extra_positional", "extra_keyword") + (("missing_last",) if args else ()):
        out.append(make_case(target, base, "call", name))
    return out


_BASES: dict[str, int] = {}


def all_cases(npgrad: Any, torch: Any) -> list[Case]:
    out = []
    for target in targets(npgrad, torch):
        if target not in _BASES:
            _BASES[target] = discover_base(target, torch)
        out.extend(cases_for(target, _BASES[target]))
    return out
