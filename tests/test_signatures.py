"""torch's argument signatures as data (npgrad._ops.signature): the TypeErrors of torch's Python
argument parser, raised before an op's body runs, for functions and Tensor methods."""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad._ops.signature import Overloads, method_signature, signature, unchecked

# -- the parser alone, with torch 2.13's texts written out (runs without torch) -----------------

CLAMP = ["clamp(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None)",
         "clamp(Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor out=None)"]
SUM = ["sum(Tensor input, *, ScalarType? dtype=None)",
       "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor out=None)"]
SUM_METHOD = ["sum(*, ScalarType? dtype=None)",
              "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"]
NARROW = ["narrow(Tensor input, int64_t dim, Tensor start, SymInt length)",
          "narrow(Tensor input, int64_t dim, SymInt start, SymInt length)"]
MAX = ["max(Tensor input, *, Tensor out=None)",
       "max(Tensor input, Tensor other, *, Tensor out=None)",
       "max(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)"]
LOG = ["log(Tensor input, *, Tensor out=None)"]
CAT = ["cat(TensorList tensors, int64_t dim=0, *, Tensor out=None)"]
ADD = ["add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)"]
RESHAPE = ["reshape(SymIntArrayRef shape)"]
VIEW = ["view(ScalarType dtype)", "view(SymIntArrayRef size)"]

T = npgrad.ones(2, 3)

# (overloads, args, kwargs, torch 2.13's message); each was produced by running torch
CASES: list[tuple[list[str], tuple, dict, str]] = [
    (LOG, (1.5,), {}, "log(): argument 'input' (position 1) must be Tensor, not float"),
    (LOG, (T, 1), {}, "log() takes 1 positional argument but 2 were given"),
    (LOG, (), {}, 'log() missing 1 required positional arguments: "input"'),
    (LOG, (), {"foo": 1}, 'log() missing 1 required positional arguments: "input"'),
    (LOG, (), {"input": "s"}, "log(): argument 'input' must be Tensor, not str"),
    (LOG, (T,), {"input": T}, "log() got multiple values for argument 'input'"),
    (LOG, (T,), {"out": T, "foo": 2}, "log() got an unexpected keyword argument 'foo'"),
    (LOG, (np.ones(2),), {}, "log(): argument 'input' (position 1) must be Tensor, not "
                             "numpy.ndarray"),
    (CAT, ([T, 1],), {}, "expected Tensor as element 1 in argument 0, but got int"),
    (CAT, ((T, None),), {}, "expected Tensor as element 1 in argument 0, but got NoneType"),
    (CAT, (1,), {}, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not int"),
    (CAT, (T,), {}, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
    (CAT, ((T,), "a"), {}, "cat(): argument 'dim' (position 2) must be int, not str"),
    (CAT, ([T, T], 0, 0), {}, "cat() takes from 1 to 2 positional arguments but 3 were given"),
    (CAT, ([T, T],), {"dim": 1.5}, "cat(): argument 'dim' must be int, not float"),
    (ADD, (T, "a"), {}, "add(): argument 'other' (position 2) must be Tensor, not str"),
    (ADD, (T, T), {"alpha": "a"}, "add(): argument 'alpha' must be Number, not str"),
    (ADD, (T, T), {"alpha": None}, "add(): argument 'alpha' must be Number, not NoneType"),
    (ADD, (T, T), {"alpha": npgrad.ones(2)}, "add(): argument 'alpha' must be Number, not Tensor"),
    (ADD, (T, T, T, T), {}, "add() takes 2 positional arguments but 4 were given"),
    (SUM, (T, 0), {"keepdim": 1}, "sum(): argument 'keepdim' must be bool, not int"),
    (SUM, (T, 0), {"foo": 1}, "sum() got an unexpected keyword argument 'foo'"),
    (SUM, (T, 0, True, npgrad.float), {},
     "sum() takes from 2 to 3 positional arguments but 4 were given"),
    (SUM, (T, (0, "a")), {}, "sum(): argument 'dim' failed to unpack the object at pos 2 with "
                             "error \"type must be tuple of ints,but got str\""),
    (SUM, (T,), {"dim": "a", "keepdim": True}, "sum(): argument 'dim' must be tuple of ints, "
                                               "not str"),
    (SUM_METHOD, (0, np.bool_(True)), {},
     "sum(): argument 'keepdim' (position 2) must be bool, not numpy.bool"),
    (RESHAPE, (2.0,), {}, "reshape(): argument 'shape' (position 1) must be tuple of ints, not "
                          "float"),
    (RESHAPE, ("a", 3), {}, "reshape() takes 1 positional argument but 2 were given"),
    (RESHAPE, (3, "a"), {}, "reshape(): argument 'shape' failed to unpack the object at pos 2 "
                            "with error \"type must be tuple of ints,but got str\""),
    (RESHAPE, ([2.0, 3],), {}, "reshape(): argument 'shape' (position 1) must be tuple of ints, "
                               "but found element of type float at pos 0"),
    (RESHAPE, ((2, None),), {}, "reshape(): argument 'shape' failed to unpack the object at pos 2"
                                " with error \"type must be tuple of ints,but got NoneType\""),
    (RESHAPE, (), {}, 'reshape() missing 1 required positional arguments: "shape"'),
    (RESHAPE, (), {"shape": 3.0}, "reshape(): argument 'shape' must be tuple of ints, not float"),
    (VIEW, (2, "a"), {}, "view(): argument 'size' failed to unpack the object at pos 2 with "
                         "error \"type must be tuple of ints,but got str\""),
    (CLAMP, (T, "x"), {},
     "clamp() received an invalid combination of arguments - got (Tensor, str), but expected one"
     " of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
     " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"),
    (CLAMP, (T,), {"foo": 1},
     "clamp() received an invalid combination of arguments - got (Tensor, foo=int), but expected"
     " one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
     " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"),
    (VIEW, ("a",), {},
     "view() received an invalid combination of arguments - got (str), but expected one of:\n"
     " * (torch.dtype dtype)\n"
     "      didn't match because some of the arguments have invalid types: (!str!)\n"
     " * (tuple of ints size)\n"
     "      didn't match because some of the arguments have invalid types: (!str!)\n"),
    (NARROW, (T, 0, 0, "a"), {},
     "narrow() received an invalid combination of arguments - got (Tensor, int, int, str), but "
     "expected one of:\n * (Tensor input, int dim, Tensor start, int length)\n"
     "      didn't match because some of the arguments have invalid types: "
     "(Tensor, int, !int!, !str!)\n * (Tensor input, int dim, int start, int length)\n"
     "      didn't match because some of the arguments have invalid types: "
     "(Tensor, int, int, !str!)\n"),
    (SUM_METHOD, (0, 0, 0, 0), {},
     "sum() received an invalid combination of arguments - got (int, int, int, int), but expected"
     " one of:\n * (*, torch.dtype dtype = None)\n"
     " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n"
     "      didn't match because some of the arguments have invalid types: "
     "(!int!, !int!, !int!, !int!)\n"),
    (SUM_METHOD, (), {"dim": 1.5},
     "sum() received an invalid combination of arguments - got (dim=float, ), but expected one "
     "of:\n * (*, torch.dtype dtype = None)\n"
     " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n"),
    (SUM, (T, ("a", 0)), {},
     "sum() received an invalid combination of arguments - got (Tensor, tuple), but expected one"
     " of:\n * (Tensor input, *, torch.dtype dtype = None)\n"
     " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
     "Tensor out = None)\n"),
    (MAX, (T, 0, "a"), {},
     "max() received an invalid combination of arguments - got (Tensor, int, str), but expected "
     "one of:\n * (Tensor input, *, Tensor out = None)\n"
     "      didn't match because some of the arguments have invalid types: "
     "(Tensor, !int!, !str!)\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
     " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n"),
    (MAX, (T,), {"dim": 0, "keepdim": 1},
     "max() received an invalid combination of arguments - got (Tensor, keepdim=int, dim=int), "
     "but expected one of:\n * (Tensor input, *, Tensor out = None)\n"
     "      didn't match because some of the keywords were incorrect: keepdim, dim\n"
     " * (Tensor input, Tensor other, *, Tensor out = None)\n"
     " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n"),
    (["add(Tensor other, *, Scalar alpha=1)", "add(Scalar alpha, Tensor other)|deprecated"],
     (), {}, "add() received an invalid combination of arguments - got (), but expected "
             "(Tensor other, *, Number alpha = 1)"),
]


@pytest.mark.parametrize("overloads, args, kwargs, message", CASES)
def test_parser_texts(overloads: list[str], args: tuple, kwargs: dict, message: str,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.isatty", lambda fd: False)  # torch colours the marks on a terminal
    with pytest.raises(TypeError) as info:
        Overloads.parse(overloads).check(args, kwargs)
    assert str(info.value) == message


# calls every overload set above accepts (the int rules: NumPy ints, 0-dim integer tensors,
# a single int for a sized list, the numpy-style keyword spellings)
ACCEPTED: list[tuple[list[str], tuple, dict]] = [
    (LOG, (T,), {}), (LOG, (T,), {"out": None}), (LOG, (), {"x": T}),
    (SUM, (T,), {}), (SUM, (T, 0), {}), (SUM, (T, [0, 1], True), {}),
    (SUM, (), {"a": T, "axis": 0, "keepdims": True}), (SUM, (T, np.int64(0)), {}),
    (SUM, (T, npgrad.tensor(0)), {}), (SUM, (T, npgrad.tensor([1])), {}),
    (SUM, (T, None), {"dtype": npgrad.float64}), (SUM, (T, 0), {"dtype": float}),
    (RESHAPE, (2, 3), {}), (RESHAPE, ((2, 3),), {}), (RESHAPE, ([npgrad.tensor(2), 3],), {}),
    (RESHAPE, (2, np.int64(3)), {}), (CAT, ([T, T],), {"axis": 0}),
    (ADD, (T, 2), {}), (ADD, (2, T), {}), (ADD, (T, T), {"alpha": npgrad.tensor(2.)}),
    (ADD, (T, T), {"alpha": np.float32(2)}), (CLAMP, (T, 1, None), {}),
    (CLAMP, (T,), {"min": npgrad.tensor(1.), "max": 2}), (NARROW, (T, 0, npgrad.tensor(0), 1), {}),
    (MAX, (T, 0), {"keepdim": True}),
]


@pytest.mark.parametrize("overloads, args, kwargs", ACCEPTED)
def test_parser_accepts(overloads: list[str], args: tuple, kwargs: dict) -> None:
    Overloads.parse(overloads).check(args, kwargs)


def test_refused_numbers_follow_torchs_rules() -> None:
    transpose = Overloads.parse(["transpose(Tensor input, int64_t dim0, int64_t dim1)"])
    for bad in (True, 1.0, np.float64(1), npgrad.tensor(1.), npgrad.tensor(1, dtype=npgrad.int8)
                .requires_grad_(False).float()):
        with pytest.raises(TypeError, match="must be int, not"):
            transpose.check((T, 0, bad), {})
    add = Overloads.parse(ADD)
    with pytest.raises(TypeError, match="must be Number, not Tensor"):
        add.check((T, T), {"alpha": npgrad.tensor(2., requires_grad=True)})


# -- the decorators ------------------------------------------------------------------------------


@signature("frob(Tensor input, int64_t dim=0, *, bool flag=False)")
def frob(input: Any, dim: int = 0, *, flag: bool = False) -> tuple:
    """Return the arguments (a docstring to keep)."""
    return input, dim, flag


class Holder:
    @method_signature("log()")
    def log(self) -> str:
        return "logged"

    @method_signature("frob(int64_t dim=0)")
    def frob(self, dim: int = 0) -> int:
        return dim


def test_decorator_keeps_the_function() -> None:
    assert frob.__name__ == "frob" and frob.__doc__.startswith("Return the arguments")
    assert frob.__wrapped__(1, 2) == (1, 2, False)
    assert list(inspect.signature(frob).parameters) == ["input", "dim", "flag"]
    assert frob(T, 1, flag=True) == (T, 1, True)
    assert unchecked(frob) is frob.__wrapped__
    with pytest.raises(TypeError, match=r"frob\(\): argument 'dim' \(position 2\) must be int"):
        frob(T, "a")


def test_method_form() -> None:
    h = Holder()
    assert h.log() == "logged" and h.frob(3) == 3
    with pytest.raises(TypeError) as info:
        h.log(1)
    assert str(info.value) == "TensorBase.log() takes no arguments (1 given)"
    with pytest.raises(TypeError) as info:
        h.log(1, foo=2)
    assert str(info.value) == "TensorBase.log() takes no keyword arguments"
    with pytest.raises(TypeError) as info:
        h.frob(1, 2)
    assert str(info.value) == "frob() takes from 0 to 1 positional arguments but 2 were given"


def test_operators_are_not_checked() -> None:
    for name in ("__add__", "__mul__", "__matmul__", "__sub__", "__truediv__", "__getitem__"):
        assert not hasattr(getattr(npgrad.Tensor, name), "__signature_overloads__"), name


def test_fast_path_results_unchanged() -> None:
    a = npgrad.arange(6.).reshape(2, 3)
    b = npgrad.ones(2, 3)
    cases: list[tuple[Callable, tuple, dict]] = [
        (npgrad.sum, (a, 0), {}), (npgrad.sum, (a,), {}), (npgrad.cat, ([a, b],), {}),
        (npgrad.reshape, (a, (3, 2)), {}), (npgrad.transpose, (a, 0, 1), {}),
        (npgrad.logsumexp, (a, 1), {"keepdim": True}), (npgrad.softmax, (a, -1), {}),
        (npgrad.topk, (a, 2), {}), (npgrad.narrow, (a, 1, 0, 2), {}),
    ]
    for fn, args, kwargs in cases:
        assert hasattr(fn, "__signature_overloads__"), fn
        got, want = fn(*args, **kwargs), unchecked(fn)(*args, **kwargs)
        got_t = got if isinstance(got, tuple) else (got,)
        want_t = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got_t, want_t, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert a.sum(0).tolist() == [3.0, 5.0, 7.0] and a.view(3, 2).shape == (3, 2)


# -- against torch 2.13: the same exception type and text ---------------------------------------

# calls written as a user writes them; ``m`` is the library, ``t`` a (2, 3) float tensor
CALLS: list[str] = [
    "m.sum(t, 'a')", "m.sum(t, dim='a')", "m.sum(t, 0, foo=1)", "m.sum(t, (0, 'a'))",
    "m.sum(t, 0, True, m.float)", "t.sum('a')", "t.sum(0, 0, 0, 0)", "t.sum(dim=1.5)",
    "t.sum(True)", "m.cat([t, 1])", "m.cat(1)", "m.cat((t,), 'a')", "m.cat([t, t], 0, 0)",
    "m.cat(t)", "m.stack(t)", "t.reshape(2, 1.5)", "t.reshape((2, 1.5))", "t.reshape('a', 3)",
    "t.reshape(None)", "t.reshape()", "t.permute(0, 1.5)", "t.permute([1.0, 0])", "t.view('a')",
    "t.view(2, 'a')", "t.expand(2, 3.0)", "m.narrow(t, 0, 0, 'a')", "m.transpose(t, 0, 'a')",
    "m.transpose(t, 0, True)", "m.transpose(t, 0, 1.0)", "m.flatten(t, 'a')",
    "t.index_select(0, 'a')", "m.index_select(t, 0, None)", "m.softmax(t, 0, 1)",
    "m.softmax(t, 0, dtype=1)", "m.tensor_split(t, 'a')", "m.max(t, 0, 'a')",
    "m.max(t, dim=0, keepdim=1)", "m.mm(t, None)", "m.mm()", "m.addmm(t, t)",
    "m.logsumexp(t, True)", "m.logsumexp(t, m.tensor(1.))", "m.topk(t, 'a')", "m.roll(t, 'a')",
    "m.gather(t, 'a', t)", "m.unsqueeze(t, 1.5)", "m.squeeze(t, 'a')", "m.flip(t, 1.5)",
    "m.chunk(t, 'a')", "m.movedim(t, 0, 'a')", "m.tile(t, 'a')",
    "m.kthvalue(t, 'a')", "m.cumsum(t, 'a')", "m.argmax(t, 'a')", "m.std(t, 'a')",
    "m.bmm(t, 'a')", "m.matmul(t, 'a')", "m.dot(t, 2)", "m.triu(t, 'a')", "m.diag(t, 'a')",
    "m.randint(3, (2,), dtype='a')", "m.linspace(0, 1, 'a')", "m.eye('a')",
    "m.linalg.solve(1, t)", "m.linalg.inv('a')", "m.nn.functional.conv2d(t, 'a')",
    "m.nn.functional.avg_pool2d(t, 'a')", "t.transpose(0, 'a')", "t.narrow(0, 'a', 1)",
    "t.repeat(2, 3.0)", "t.repeat(1.5, 3)", "t.unsqueeze('a')", "t.flip(1.5)", "t.t(1)",
    "t.exp(1)", "t.numel(1)", "t.sigmoid(x=1)", "t.clone(1)", "t.add(t, t)", "t.add('a')",
    "t.add(other=t, foo=2)", "t.topk(1, 'a')", "t.softmax('a')", "t.masked_fill(1, 1)",
    "t.scatter_add(0, 'a', t)", "t.index_add(0, 'a', t)", "t.cumsum(dim='a')",
    # aliases are checked under their own names
    "m.swapaxes(t, 0, 'a')", "t.swapdims(0, 1.5)", "m.moveaxis(t, 0, 'a')", "t.moveaxis(0, 'a')",
    "m.concat(1)", "t.swapaxes_(0, None)",
]


@pytest.mark.parametrize("call", CALLS)
def test_error_matches_torch(call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr("os.isatty", lambda fd: False)
    outcomes = []
    for m in (npgrad, torch):
        t = m.arange(6.).reshape(2, 3)
        with pytest.raises(Exception) as info:
            eval(call, {"m": m, "t": t})
        outcomes.append(info.value)
    mine, theirs = outcomes
    assert isinstance(mine, type(theirs)), (type(mine), type(theirs), str(mine))
    assert str(mine) == str(theirs)


# calls torch accepts: npgrad's check must let them through with torch's values
GOOD_CALLS: list[str] = [
    "m.sum(t, m.tensor(0))", "m.sum(t, np.int64(1))", "t.sum(axis=0, keepdims=True)",
    "m.sum(a=t, axis=0)", "m.logsumexp(t, m.tensor(1))", "m.roll(t, m.tensor(1))",
    "t.reshape(2, np.int64(3))", "t.reshape([m.tensor(2), 3])", "m.cat([t, t], axis=0)",
    "m.cat(tensors=[t], dim=0)", "m.transpose(t, 0, np.int64(1))", "m.transpose(t, 0, m.tensor(1))",
    "m.softmax(t, 0, dtype=m.float64)", "m.clamp(t, np.float64(1))", "t.view(3, 2)",
    "t.permute(1, 0)", "m.topk(t, 2, 1, True, True)", "m.narrow(t, 1, m.tensor(0), 2)",
]


@pytest.mark.parametrize("call", GOOD_CALLS)
def test_accepted_calls_match_torch(call: str) -> None:
    torch = pytest.importorskip("torch")
    results = []
    for m in (npgrad, torch):
        t = m.arange(6.).reshape(2, 3)
        out = eval(call, {"m": m, "t": t, "np": np})
        results.append(out[0] if isinstance(out, tuple) else out)
    mine, theirs = results
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


# -- factory functions --------------------------------------------------------------------------

FACTORY_CALLS = {  # torch 2.13's texts
    "m.ones()": 'ones() missing 1 required positional arguments: "size"',
    "m.ones('a')": "ones(): argument 'size' (position 1) must be tuple of ints, not str",
    "m.zeros(2, 'a')": ("zeros(): argument 'size' failed to unpack the object at pos 2 with error "
                        '"type must be tuple of ints,but got str"'),
    "m.ones(2, 3, dtype=1)": "ones(): argument 'dtype' must be torch.dtype, not int",
    "m.full((2,), None)": "full(): argument 'fill_value' (position 2) must be Number, not NoneType",
    "m.zeros(None)": "zeros(): argument 'size' (position 1) must be tuple of ints, not NoneType",
    "m.ones_like(1)": "ones_like(): argument 'input' (position 1) must be Tensor, not int",
    "m.zeros(2.5)": "zeros(): argument 'size' (position 1) must be tuple of ints, not float",
    "m.empty_like('x')": "empty_like(): argument 'input' (position 1) must be Tensor, not str",
    "m.full_like(m.ones(2), 'x')": ("full_like(): argument 'fill_value' (position 2) must be "
                                    "Number, not str"),
}


@pytest.mark.parametrize("call", sorted(FACTORY_CALLS))
def test_factories_refuse_as_torch(call: str) -> None:
    with pytest.raises(TypeError) as info:
        eval(call, {"m": npgrad})
    assert str(info.value) == FACTORY_CALLS[call]
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        eval(call, {"m": torch})
    assert str(info.value) == str(theirs.value)


def test_factories_take_what_torch_takes() -> None:
    assert npgrad.zeros(2, 3).shape == (2, 3)
    assert npgrad.zeros((2, 3), dtype=npgrad.int64).dtype == npgrad.int64
    assert npgrad.ones([2]).shape == (2,)
    assert npgrad.zeros(npgrad.Size([2])).shape == (2,)
    assert npgrad.zeros(()).shape == ()
    assert npgrad.empty(2, 3, requires_grad=True).requires_grad
    assert npgrad.full((2,), 1.5).tolist() == [1.5, 1.5]
    assert npgrad.zeros_like(npgrad.ones(2), dtype=npgrad.float64).dtype == npgrad.float64
