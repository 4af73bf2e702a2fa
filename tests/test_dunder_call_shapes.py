"""A Tensor operator called directly with a wrong argument count or a keyword answers
NotImplemented, as torch's do (Note [Operators give NotImplemented])."""
import pytest

import npgrad

BINARY = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
          "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
          "__rpow__", "__matmul__", "__and__", "__or__", "__xor__", "__eq__", "__ne__", "__lt__",
          "__le__", "__gt__", "__ge__", "__iadd__", "__imul__", "__isub__", "__itruediv__"]

CALLS = {
    "missing": lambda f, o: f(),
    "extra_positional": lambda f, o: f(o, o),
    "extra_keyword": lambda f, o: f(o, bogus=1),
}


def _outcome(lib, name, call):
    t = lib.ones(2, 2, dtype=lib.bool if name in ("__and__", "__or__", "__xor__") else None)
    return CALLS[call](getattr(t, name), t)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("name", BINARY)
def test_direct_call_with_wrong_arguments_is_not_implemented(name, call):
    assert _outcome(npgrad, name, call) is NotImplemented


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("name", BINARY)
def test_direct_call_outcome_matches_torch(name, call):
    torch = pytest.importorskip("torch")
    assert _outcome(torch, name, call) is NotImplemented
    assert _outcome(npgrad, name, call) is NotImplemented


def test_a_normal_call_still_computes():
    a = npgrad.tensor([1.0, 2.0])
    assert a.__add__(a).tolist() == [2.0, 4.0]
    assert a.__rsub__(1.0).tolist() == [0.0, -1.0]
