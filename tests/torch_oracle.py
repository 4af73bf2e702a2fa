"""Helpers the torch-oracle test files share: copying a torch module's state into npgrad,
comparing the error an expression raises in both libraries, and a layer's forward-mode AD."""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import pytest

import npgrad


def copy_state(torch_module: Any, np_module: Any) -> None:
    """Load ``torch_module``'s parameters and buffers into ``np_module``; every key must match."""
    sd = OrderedDict((k, npgrad.tensor(v.detach().numpy().copy()))
                     for k, v in torch_module.state_dict().items())
    result = np_module.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []


def assert_same_error(expr: str, error_env: Callable[[Any], dict]) -> None:
    """``expr`` raises in npgrad what it raises in torch: a subclass of torch's exception type
    (or torch's type among npgrad's bases) and the same message text.

    ``error_env(m)`` gives the names ``expr`` is evaluated with, for the library ``m``.
    """
    torch = pytest.importorskip("torch")
    outcomes = []
    for m in (npgrad, torch):
        env = error_env(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                eval(expr, {}, env)
        outcomes.append((type(info.value).__mro__, str(info.value)))
    (mine_mro, mine_msg), (their_mro, their_msg) = outcomes
    assert their_mro[0] in mine_mro or issubclass(mine_mro[0], their_mro[0])
    assert mine_msg == their_msg


def assert_same_forward_ad(torch_module: Any, np_module: Any, call: Callable[[Any, Any], Any],
                           shape: tuple) -> None:
    """A random float64 dual input of ``shape``: ``call(module, dual)`` gives the same primal
    and tangent through npgrad's module as through torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    t = rng.standard_normal(shape)
    outs = []
    for lib, module in ((torch, torch_module), (npgrad, np_module)):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            y = call(module, fwad.make_dual(lib.tensor(x), lib.tensor(t)))
            primal, tangent = fwad.unpack_dual(y)
            outs.append((primal.detach().numpy().copy(), tangent.detach().numpy().copy()))
    (ty, tt), (ny, nt) = outs
    np.testing.assert_allclose(ny, ty, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(nt, tt, rtol=1e-9, atol=1e-10)
