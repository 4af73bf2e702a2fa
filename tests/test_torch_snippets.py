"""Short programs run with npgrad and with torch 2.13: their printed output must be identical.

Each snippet uses ``T`` for the library.  What it prints (values, reprs,
requires_grad / is_leaf / grad_fn, versions) and the type and text of any
exception it raises are compared line by line; object addresses are masked.
The snippets cover the autograd core: backward and autograd.grad, .grad
accumulation, retain_grad, hooks, version counters and their errors,
requires_grad rules, dtype promotion, inference tensors, views made under
no_grad and in-place writes through views (CopySlices / AsStridedBackward0).
"""
from __future__ import annotations

import contextlib
import io
import re
import warnings

import pytest

import npgrad

SNIPPETS = [
    'x = T.tensor([1., 2.], requires_grad=True); y = x * 2; y.retain_grad(); y.sum().backward(); print(x.grad, y.grad, y.retains_grad)',
    'x = T.tensor([1., 2.], requires_grad=True); print(x.grad); y = x*2; print(y.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.exp(); z = y.sum(); z.backward(); z.backward()',
    'x = T.tensor([1., 2.], requires_grad=True); y = (x + 1).sum(); y.backward(); y.backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); y = (x*x).sum(); y.backward(retain_graph=True); y.backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); b = x*1; c = b*b; b.add_(1); c.sum().backward()',
    'x = T.tensor([1., 2.], requires_grad=True); e = x.exp(); e.mul_(2); e.sum().backward()',
    'x = T.tensor([1., 2.], requires_grad=True); e = x.exp(); f = e*1; e.mul_(2); e.mul_(2); f.sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*x; \nwith T.no_grad(): x.add_(1)\ny.sum().backward()',
    'x = T.tensor([[1., 2.],[3,4]], requires_grad=True); y = x*x; print(y._version); x.grad; print(x._version)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.detach(); y.add_(1); print(x, x._version)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.data; y.add_(1); print(x, x._version, y._version)',
    'print(T.tensor([1,2]) + T.tensor([1.5]), (T.tensor([1,2],dtype=T.int32)+1).dtype, (T.tensor([1.], dtype=T.float16)+1.0).dtype, (T.tensor([250],dtype=T.uint8)+10))',
    'print(T.tensor([1,2]) / T.tensor([2,2]), T.tensor([-7]) // 2, T.tensor([-7]) % 2, T.tensor([-7.]) % 2)',
    'print((T.tensor([1.,2.]) + T.tensor(1., dtype=T.float64)).dtype, (T.tensor(1.,dtype=T.float64)+T.tensor(1.)).dtype, (T.tensor([1])+T.tensor(1.)).dtype)',
    'print(T.tensor([1,2])**2, T.tensor([1,2])**2.5, 2**T.tensor([1,2]), T.tensor([2.])**T.tensor([3.]))',
    'print(T.tensor([1,2])**-1)',
    'x = T.tensor([1., 2.], requires_grad=True); print(x.numpy())',
    'x = T.tensor([1., 2.], requires_grad=True); print(float(x[0]), int(x[1]), x.tolist(), x[0].item())',
    'print(T.ones(2,3).shape, T.ones(2,3).size(), T.ones(2,3).size(1), T.ones(2,3).size(-1), T.ones(2,3).dim(), T.ones(2,3).numel())',
    'print(T.ones(2,3).size(2))',
    'x = T.tensor([1., 2.], requires_grad=True); x.requires_grad_(1)',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.requires_grad = False',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.requires_grad = True',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.requires_grad_(False)',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; print(y.requires_grad_(True))',
    'x = T.tensor([1, 2]); x.requires_grad = True',
    'x = T.tensor([1, 2]); x.requires_grad_()',
    'x = T.tensor([1, 2]); print(x.requires_grad_(False))',
    'x = T.tensor([1., 2.], requires_grad=True); x.grad = T.ones(3)',
    'x = T.tensor([1., 2.], requires_grad=True); x.grad = T.ones(2, dtype=T.float64)',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.backward()',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.backward(T.ones(3))',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.backward(T.tensor([1,1])); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); T.autograd.backward([(x*2).sum(), (x*3).sum()]); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); z = T.tensor([1.], requires_grad=True); print(T.autograd.grad((x*2).sum(), [x, z], allow_unused=True))',
    'x = T.tensor([1., 2.], requires_grad=True); z = T.tensor([1.], requires_grad=True); print(T.autograd.grad((x*2).sum(), [x, z], allow_unused=True, materialize_grads=True))',
    'x = T.tensor([1., 2.], requires_grad=True); w = T.tensor([3., 4.], requires_grad=True); l = (x*w).sum(); l.backward(inputs=[x]); print(x.grad, w.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; g, = T.autograd.grad(y.sum(), y); print(g)',
    'x = T.tensor([1., 2.], requires_grad=True); y = (x*x*x).sum(); g, = T.autograd.grad(y, x, create_graph=True); print(g); g2, = T.autograd.grad(g.sum(), x, create_graph=True); print(g2); g3, = T.autograd.grad(g2.sum(), x); print(g3)',
    'x = T.tensor([1., 2.], requires_grad=True); y = (x*x).sum(); y.backward(create_graph=True); print(x.grad, x.grad.requires_grad, x.grad.is_leaf)',
    'x = T.tensor([1., 2.], requires_grad=True); h = x.register_hook(lambda g: g*10); (x*2).sum().backward(); print(x.grad); h.remove(); (x*2).sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; y.register_hook(lambda g: g*10); y.register_hook(print); y.sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2.]); x.register_hook(print)',
    'x = T.tensor([1., 2.], requires_grad=True); y=x*2; y.register_post_accumulate_grad_hook(print)',
    "x = T.tensor([1., 2.], requires_grad=True); x.register_post_accumulate_grad_hook(lambda t: print('post', t.grad)); (x*2).sum().backward()",
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; print(y.grad_fn.next_functions[0][0].variable is x, y.grad_fn.next_functions)',
    'x = T.tensor([1., 2.], requires_grad=True); print((x*2).grad_fn.name(), type((x*2).grad_fn).__name__, (x*2).grad_fn.next_functions[0][0].name())',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.sqrt(); print((y*0 + x.clone()).sum())',
    'print(T.tensor([[1., 2.],[3., 4.]]).mean(), T.tensor([1,2]).sum().dtype, T.tensor([True, True]).sum())',
    'T.tensor([1,2]).mean()',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.float(); print(y is x); z = x.double(); print(z)',
    'x = T.tensor([1., 2.], requires_grad=True); z = x.double(); z.sum().backward(); print(x.grad, x.grad.dtype)',
    'x = T.tensor([1., 2.], requires_grad=True); z = x * T.tensor(2., dtype=T.float64); print(z.dtype); z.sum().backward(); print(x.grad)',
    'x = T.tensor(2., requires_grad=True); y = T.tensor([1., 2., 3.], dtype=T.float64); z = (x*y).sum(); z.backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); print(bool(T.tensor([1.])), len(x), list(T.tensor([[1,2],[3,4]])))',
    'bool(T.tensor([1., 2.]))',
    'T.tensor([1., 2.]).item()',
    'x = T.ones(2, requires_grad=True); print(x.is_leaf, x.grad_fn, (x+1).is_leaf)',
    'print(T.zeros(2, dtype=T.long).type(), T.tensor([1.]).type(), T.tensor(3.), T.tensor([]), T.zeros(2,0), T.tensor([1.5, 2.]).half())',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.detach_() if False else x.detach(); print(y.requires_grad, y.is_leaf)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; y.detach_(); print(y.requires_grad, y.is_leaf, y.grad_fn)',
    'with T.inference_mode(): a = T.ones(2); b = T.ones(2, requires_grad=True)\nprint(a.is_inference(), b.is_inference(), b.requires_grad, T.is_inference(a))',
    'with T.inference_mode(): a = T.ones(2)\nprint(a._version)',
    'with T.inference_mode(): a = T.ones(2)\na.add_(1)',
    'with T.inference_mode(): a = T.ones(2)\nwith T.no_grad(): a.add_(1)',
    'with T.inference_mode(): a = T.ones(2)\na.requires_grad_()',
    'with T.inference_mode(): a = T.ones(2); a.add_(1); print(a)',
    'x = T.ones(2, requires_grad=True)\nwith T.inference_mode(): a = T.ones(2)\nprint((x*a))',
    'x = T.ones(2, requires_grad=True)\nwith T.inference_mode(): a = T.ones(2)\ny = x + a; print(y, y.is_inference())',
    'with T.inference_mode(): a = T.ones(2)\ny = a * 2; print(y.is_inference(), y._version, a.clone().is_inference(), a.detach().is_inference())',
    'x = T.ones(2, requires_grad=True)\nwith T.inference_mode(): v = x[:1]; w = x * 2\nprint(v.is_inference(), v.requires_grad, w.is_inference(), w.requires_grad)',
    'with T.inference_mode():\n    with T.enable_grad():\n        x = T.ones(2, requires_grad=True); y = x*2\n        print(T.is_grad_enabled(), y.requires_grad, y.grad_fn, y.is_inference())',
    'with T.no_grad():\n    with T.inference_mode(False):\n        x = T.ones(2, requires_grad=True); y = x*2; print(y)',
    'x = T.ones(2, requires_grad=True); y = (x*2).sum()\nwith T.inference_mode(): y.backward()\nprint(x.grad)',
    'with T.inference_mode(): l = (T.ones(2, requires_grad=True)*2).sum()\nl.backward()',
    'x = T.tensor([1., 2.], requires_grad=True)\nwith T.no_grad(): v = x[:1]\nprint(v.requires_grad, v.is_leaf, v.grad_fn, (v*2).grad_fn)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x * 1\nwith T.no_grad(): v = y[:1]\nv.add_(1)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x * 1\nwith T.no_grad(): v = y[:1]; v.add_(1)\nprint(y, v.detach(), y._version)',
    'x = T.tensor([1., 2.], requires_grad=True)\nx[0] = 5.',
    'x = T.tensor([1., 2.], requires_grad=True)\nwith T.no_grad(): x[0] = 5.\nprint(x, x._version, x.is_leaf)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x * 1; y[0] = 10.; print(y, y.grad_fn); y.sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); w = T.tensor(5., requires_grad=True); y = x * 1; y[1] = w; y.sum().backward(); print(x.grad, w.grad)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x * 1; v = y[:2]; v.mul_(2); print(y, v, y.grad_fn, v.grad_fn); y.sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x * 1; v = y[1:]; v.exp_(); print(y); (y*T.tensor([1.,2.,3.])).sum().backward(); print(x.grad)',
    'x = T.tensor([[1., 2.],[3., 4.]], requires_grad=True); y = x * 1; v = y.t(); v[0].mul_(3); print(y); y.sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x*1; a, b, c = y.unbind(); a.add_(1)',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x*1; v = y[:2]; z = v * v; y.add_(1); z.sum().backward()',
    'x = T.tensor([1., 2., 3.], requires_grad=True); y = x*1; v = y[:2]; z = y * y; v.add_(1); z.sum().backward()',
    'x = T.tensor([1., 2.], requires_grad=True); e = x.exp(); e.mul_(2); e.sum().backward()',
    'x = T.tensor([1., 2.], requires_grad=True); y = x.sigmoid(); z = y*1;\nwith T.no_grad(): y.mul_(2)\nz.sum().backward()',
    'x = T.tensor([[1., 2.]], requires_grad=True); y = x.tanh(); y.add_(1); (y*y).sum().backward(); print(x.grad)',
    'x = T.tensor([1., 2.], requires_grad=True); print(x.view(2,1)._base is x, x.view(2,1)._is_view(), x[0]._base is x, x.view(2,1).view(2)._base is x, x.detach()._is_view())',
    'x = T.tensor([1., 2.], requires_grad=True); print(x.data._is_view(), (x*2)._is_view(), x.reshape(2)._is_view())',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; y.detach_(); print(y.requires_grad, y.is_leaf, y.grad_fn)',
    'x = T.tensor([1., 2.], requires_grad=True); y = x*2; y[0].detach_()',
    'x = T.tensor([1., 2.], requires_grad=True); v = x.view(2); print(v._version); \nwith T.no_grad(): x.add_(1)\nprint(v._version, x._version)',
    'T.set_grad_enabled(False); x = T.ones(2, requires_grad=True); y = x * 2; print(y.requires_grad, x.requires_grad); T.set_grad_enabled(True)',
    'x = T.ones(2, requires_grad=True)\n@T.no_grad\ndef f(x): return x*2\nprint(f(x).requires_grad)',
    'x = T.ones(2, requires_grad=True)\n@T.inference_mode\ndef f(x): return x*2\nprint(f(x).is_inference())',
    'print(T.set_grad_enabled(False)); T.set_grad_enabled(True)',
    'x = T.ones(2, requires_grad=True); y = (x*2).sum()\nwith T.no_grad(): y.backward()\nprint(x.grad)',
    'x = T.ones(2, requires_grad=True)\nwith T.no_grad(): y = x.clone()\nprint(y.requires_grad, y.grad_fn, x.clone().grad_fn)',
    't = T.tensor([1., -2., 3.], requires_grad=True); w = T.tensor([-1., 1., -1.], requires_grad=True); x = t*1; x.mul_(w); x.sum().backward(); print(t.grad, w.grad)',
    't = T.tensor([1., -2., 3.], requires_grad=True); w = T.tensor([2., 1., 3.], requires_grad=True); x = t*1; x.div_(w); x.sum().backward(); print(t.grad, w.grad)',
    't = T.tensor([1., 2., 3.], requires_grad=True); x = t*1; x.pow_(2); x.sum().backward(); print(t.grad)',
    't = T.tensor([1., 2., 3.], requires_grad=True); w = T.tensor([2., 1., 3.], requires_grad=True); x = t*1; v = x[:2]; v.mul_(w[:2]); x.sum().backward(); print(t.grad, w.grad)',
    't = T.tensor([1., 2., 3.], requires_grad=True); x = t*1; v = x[1:]; v.pow_(3); (x*x).sum().backward(); print(t.grad)',
    't = T.tensor([1., 2., 3.], requires_grad=True); x = t*1; x.clamp_(1.5, 2.5); x.sum().backward(); print(t.grad)',
    "x = T.tensor([1., 2.], requires_grad=True)\nx.register_hook(lambda g: print('leaf hook', g) or g * 2)\nacc = (x * 1).grad_fn.next_functions[0][0]\nacc.register_prehook(lambda gs: print('acc prehook', gs[0]))\nacc.register_hook(lambda gi, go: print('acc posthook', go[0]))\nx.register_post_accumulate_grad_hook(lambda t: print('post acc', t.grad))\n(x * 3).sum().backward()\nprint(x.grad)",
    'print(T.zeros(2, 0, 3).stride(), T.zeros(0).stride(), T.zeros(3, 0).stride(1), T.zeros(0, 2, 0).stride())',
]


def run_snippet(code: str, module) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"T": module})
        except Exception as exc:
            print("EXC", type(exc).__name__, exc)
        finally:
            module.set_grad_enabled(True)
    text = out.getvalue().replace("torch.", "npgrad.")
    return re.sub(r" at 0x[0-9a-f]+", " at ADDR", text)


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i:03d}" for i in range(len(SNIPPETS))])
def test_snippet_matches_torch(code: str) -> None:
    torch = pytest.importorskip("torch")
    assert run_snippet(code, npgrad) == run_snippet(code, torch)


def test_snippets_run_without_torch() -> None:
    """Without torch the snippets still run: none may fail with an unexpected exception type."""
    for code in SNIPPETS:
        text = run_snippet(code, npgrad)
        assert "EXC AttributeError" not in text and "EXC NameError" not in text, (code, text)
