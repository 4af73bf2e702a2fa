"""Every code example of the five seed documents, run as written with ``import npgrad as torch``.

Each example is a snippet of the user's code.  It runs once with npgrad, and its
printed output is compared with the output written in the seed (hand-checked);
where torch is installed the same snippet also runs with real torch and the two
outputs must be identical.
"""
from __future__ import annotations

import contextlib
import io
import textwrap
import warnings

import pytest

import npgrad


def run_snippet(code: str, module) -> str:
    """Run ``code`` with ``torch`` bound to ``module``; return what it printed (and raised)."""
    out = io.StringIO()
    namespace = {"torch": module}
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(textwrap.dedent(code), namespace)
        except Exception as exc:  # the seeds show some errors on purpose
            print(f"{type(exc).__name__}: {exc}")
    return out.getvalue()


def _reset_global_modes(module) -> None:
    module.set_grad_enabled(True)
    module.set_anomaly_enabled(False)


SEEDS = {
    # seed 000: the four managers, as blocks and decorators
    "000_no_grad_block_and_decorator": ("""
        x = torch.tensor([1.], requires_grad=True)
        print(x)
        with torch.no_grad():
            y = x * 2
        print(y)
        print(y.requires_grad)

        @torch.no_grad()
        def doubler(x):
            return x * 2

        z = doubler(x)
        print(z)
        print(z.requires_grad)
        """, """\
tensor([1.], requires_grad=True)
tensor([2.])
False
tensor([2.])
False
"""),
    "000_enable_grad_block_and_decorator": ("""
        x = torch.tensor([1.], requires_grad=True)
        print(x)
        with torch.no_grad():
            with torch.enable_grad():
                y = x * 2
        print(y)
        print(y.requires_grad)
        y.backward()
        print(x.grad)

        @torch.enable_grad()
        def doubler(x):
            return x * 2

        with torch.no_grad():
            z = doubler(x)
        print(z)
        print(z.requires_grad)
        z.backward()
        print(x.grad)
        """, """\
tensor([1.], requires_grad=True)
tensor([2.], grad_fn=<MulBackward0>)
True
tensor([2.])
tensor([2.], grad_fn=<MulBackward0>)
True
tensor([4.])
"""),
    "000_set_grad_enabled": ("""
        x = torch.tensor([1.], requires_grad=True)
        print(x)
        is_train = False
        with torch.set_grad_enabled(is_train):
            y = x * 2
        print(y)
        print(y.requires_grad)
        torch.set_grad_enabled(True)
        y = x * 2
        print(y)
        print(y.requires_grad)
        """, """\
tensor([1.], requires_grad=True)
tensor([2.])
False
tensor([2.], grad_fn=<MulBackward0>)
True
"""),
    "000_innermost_wins": ("""
        x = torch.tensor([1.], requires_grad=True)
        print(x)
        with torch.enable_grad():
            torch.set_grad_enabled(False)
            y = x * 2
        print(y)
        print(y.requires_grad)
        print(torch.is_grad_enabled())
        """, """\
tensor([1.], requires_grad=True)
tensor([2.])
False
True
"""),
    "000_anomaly_then_no_grad": ("""
        x = torch.tensor([1.], requires_grad=True)
        print(x)
        torch.set_anomaly_enabled(True)
        with torch.no_grad():
            z = x * 2
        print(z)
        print(z.requires_grad)
        print(torch.is_anomaly_enabled())
        """, """\
tensor([1.], requires_grad=True)
tensor([2.])
False
True
"""),
    # seed 001: the SGD update and what goes wrong without no_grad
    "001_sgd_update_under_no_grad": ("""
        params = [torch.tensor([1., 2.], requires_grad=True), torch.tensor([3.], requires_grad=True)]
        loss = (params[0] * params[0]).sum() + (params[1] * 4).sum()
        loss.backward()
        lr, batch_size = 0.1, 2
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()
        for param in params:
            print(param, param.grad, param.is_leaf, param.requires_grad, param._version)
        """, """\
tensor([0.9000, 1.8000], requires_grad=True) tensor([0., 0.]) True True 1
tensor([2.8000], requires_grad=True) tensor([0.]) True True 1
"""),
    "001_inplace_without_no_grad": ("""
        params = [torch.tensor([1., 2.], requires_grad=True)]
        (params[0] * 3).sum().backward()
        lr, batch_size = 0.1, 2
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()
        """, """\
RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.
"""),
    "001_rebinding_without_no_grad": ("""
        params = [torch.tensor([1., 2.], requires_grad=True)]
        (params[0] * 3).sum().backward()
        lr, batch_size = 0.1, 2
        for param in params:
            param = param - lr * param.grad / batch_size
            print(param.is_leaf)
            param.grad.zero_()
        """, """\
False
AttributeError: 'NoneType' object has no attribute 'zero_'
"""),
    "001_rebinding_under_no_grad": ("""
        params = [torch.tensor([1., 2.], requires_grad=True)]
        (params[0] * 3).sum().backward()
        lr, batch_size = 0.1, 2
        with torch.no_grad():
            for param in params:
                print(param.requires_grad)
                param = param - lr * param.grad / batch_size
                print(param.is_leaf)
                print(param.requires_grad)
                param.grad.zero_()
        """, """\
True
True
False
AttributeError: 'NoneType' object has no attribute 'zero_'
"""),
    # seed 002: the docstring example
    "002_docstring": ("""
        x = torch.tensor([1.], requires_grad=True)
        with torch.no_grad():
            y = x * 2
        print(y.requires_grad)

        @torch.no_grad()
        def doubler(x):
            return x * 2

        z = doubler(x)
        print(z.requires_grad)
        """, """\
False
False
"""),
    # seed 003: integer tensors cannot require grad (the article's code raises in torch)
    "003_int_tensor_requires_grad": ("""
        x = torch.tensor([1], requires_grad=True)
        w = torch.tensor([2], requires_grad=True)
        with torch.no_grad():
            y = x * w
        print(y.requires_grad)
        """, """\
RuntimeError: Only Tensors of floating point and complex dtype can require gradients
"""),
    "003_decorated_inference": ("""
        @torch.no_grad()
        def inference(x):
            w = torch.tensor([2], requires_grad=True)
            y = x * w
            return y

        x = torch.tensor([1])
        y = inference(x)
        print(y.requires_grad)
        """, """\
RuntimeError: Only Tensors of floating point and complex dtype can require gradients
"""),
    "003_float_version": ("""
        x = torch.tensor([1.], requires_grad=True)
        w = torch.tensor([2.], requires_grad=True)
        with torch.no_grad():
            y = x * w
        print(y.requires_grad)

        @torch.no_grad()
        def inference(x):
            w = torch.tensor([2.], requires_grad=True)
            return x * w

        print(inference(torch.tensor([1.])).requires_grad)
        """, """\
False
False
"""),
    # seed 004: experiments on a graph cut by no_grad
    "004_expected": ("""
        a = torch.tensor([1.1], requires_grad=True)
        b = a * 2
        print(b)
        c = b + 2
        print(c)
        c.backward()
        print(a.grad)
        """, """\
tensor([2.2000], grad_fn=<MulBackward0>)
tensor([4.2000], grad_fn=<AddBackward0>)
tensor([2.])
"""),
    "004_no_grad_cuts": ("""
        a = torch.tensor([1.1], requires_grad=True)
        b = a * 2
        print(b)
        with torch.no_grad():
            c = b * 2
        print(c)
        print(c.requires_grad)
        c.backward()
        """, """\
tensor([2.2000], grad_fn=<MulBackward0>)
tensor([4.4000])
False
RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
"""),
    "004_cut_then_used": ("""
        a = torch.tensor([1.1], requires_grad=True)
        b = a * 2
        with torch.no_grad():
            c = b + 2
        print(c)
        print(c.requires_grad)
        d = torch.tensor([10.], requires_grad=True)
        e = c * d
        print(e)
        print(e.requires_grad)
        e.backward()
        print(a.grad)
        print(d.grad)
        """, """\
tensor([4.2000])
False
tensor([42.], grad_fn=<MulBackward0>)
True
None
tensor([4.2000])
"""),
    "004_another_path": ("""
        a = torch.tensor([1.1], requires_grad=True)
        b = a * 2
        with torch.no_grad():
            c = b + 2
        d = torch.tensor([10.], requires_grad=True)
        e = c * d
        f = a + e
        print(f)
        f.backward()
        print(a.grad)
        """, """\
tensor([43.1000], grad_fn=<AddBackward0>)
tensor([1.])
"""),
    "004_int_requires_grad": ("""
        a = torch.tensor([1, 2], requires_grad=True)
        """, """\
RuntimeError: Only Tensors of floating point and complex dtype can require gradients
"""),
    "004_inplace_under_no_grad": ("""
        a = torch.tensor([1.1], requires_grad=True)
        b = a * 2
        with torch.no_grad():
            b.mul_(2)
        print(b)
        print(b.requires_grad, b.is_leaf, b._version)
        b.backward()
        print(a.grad)
        """, """\
tensor([4.4000], grad_fn=<MulBackward0>)
True False 1
tensor([2.])
"""),
}


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_prints_what_the_seed_says(name: str) -> None:
    code, expected = SEEDS[name]
    try:
        assert run_snippet(code, npgrad) == expected
    finally:
        _reset_global_modes(npgrad)


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_prints_what_torch_prints(name: str) -> None:
    torch = pytest.importorskip("torch")
    code, _ = SEEDS[name]
    try:
        theirs = run_snippet(code, torch)
    finally:
        _reset_global_modes(torch)
    try:
        ours = run_snippet(code, npgrad)
    finally:
        _reset_global_modes(npgrad)
    assert ours == theirs
