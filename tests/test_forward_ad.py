"""Forward-mode AD: short programs run with npgrad and with torch 2.13, their printed output compared.

Each snippet uses ``T`` for the library, ``fw`` for ``T.autograd.forward_ad``
and ``F`` for ``T.nn.functional`` (see ``PRELUDE``), and runs through
``run_snippet`` of test_torch_snippets: values, reprs (``tangent=...``),
requires_grad / grad_fn and the type and text of any exception are compared
line by line.  Every level is opened with ``with fw.dual_level():`` so that
none outlives its snippet; ``no_level_left_open`` checks that for both
libraries.  Inputs are fixed (no random values: npgrad's generator is not
torch's).  Known differences are listed in ``KNOWN_DIFFS`` as strict xfails.
"""
from __future__ import annotations

import pytest

import npgrad
from npgrad._forward import FW
from test_torch_snippets import run_snippet

PRELUDE = "fw = T.autograd.forward_ad; F = T.nn.functional\n"

# A dual ``x`` (values 1..3, tangent 1, .5, -1) used by many op snippets.
X = "with fw.dual_level():\n    x = fw.make_dual(T.tensor([0.5, 1., 2.]), T.tensor([1., .5, -1.]))\n"
# A 2x3 dual ``m``.
M = ("with fw.dual_level():\n    m = fw.make_dual(T.tensor([[1., 2., 3.], [4., 5., 6.]]), "
     "T.tensor([[1., 0., -1.], [.5, .5, 2.]]))\n")
# Print the tangent of ``y``, rounded (``+ 0.`` turns a -0. left by rounding into 0.).
P = "    print(fw.unpack_dual(y).tangent.round(decimals=4) + 0.)\n"

SNIPPETS = [
    # --- reprs -----------------------------------------------------------------------
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.tensor([3., 4.])); print(x); print(repr(x))',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([[1., 2.], [3., 4.]]), T.ones(2, 2)); print(x)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor(1.5), T.tensor(2.)); print(x); print(x * 2)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.], dtype=T.float64), T.tensor([.5, 1.], dtype=T.float64)); print(x, x.dtype)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.tensor([1., 0.]))\n    print(x); print(x.requires_grad, x.is_leaf, x._base is p, x._is_view())',
    'with fw.dual_level():\n    x = fw.make_dual(T.arange(30.), T.arange(30.) / 10); print(x)',
    'with fw.dual_level():\n    x = fw.make_dual(T.arange(40.).reshape(2, 20), T.ones(2, 20)); print(x)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.tensor([1e-5, 1e5])); print(x)',
    'print(fw.unpack_dual(T.tensor([1., 2.])))',
    'with fw.dual_level():\n    print(fw.unpack_dual(T.tensor([1., 2.])))',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.tensor([3., 4.]))\nprint(x); print(fw.unpack_dual(x))',
    'with fw.dual_level():\n    t = T.tensor([3., 4.]); x = fw.make_dual(T.tensor([1., 2.]), t); u = fw.unpack_dual(x)\n    print(type(u).__name__, u._fields, u.primal, u.tangent, u[1] is u.tangent, len(u))\n    print(u.primal is x, u.primal._base is x, fw.unpack_dual(u.primal).tangent)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.tensor([3., 4.])); p, t = fw.unpack_dual(x); print(p, t, t.requires_grad, p.requires_grad)',
    'print(fw.UnpackedDualTensor(1, 2), fw.UnpackedDualTensor._fields)',
    'l = fw.enter_dual_level(); print(l); x = fw.make_dual(T.ones(1), T.ones(1)); print(x); fw.exit_dual_level(level=l); print(x)',
    'with fw.dual_level() as l:\n    print(l)',
    # --- errors ----------------------------------------------------------------------
    'fw.make_dual(T.ones(2), T.ones(2))',
    'with fw.dual_level():\n    fw.make_dual(T.ones(2), T.ones(3))',
    'with fw.dual_level():\n    fw.make_dual(T.tensor([1, 2]), T.ones(2))',
    'with fw.dual_level():\n    fw.make_dual(T.ones(2), T.tensor([1, 2]))',
    'with fw.dual_level():\n    with fw.dual_level():\n        pass',
    'with fw.dual_level():\n    fw.enter_dual_level()',
    'fw.exit_dual_level()',
    'with fw.dual_level():\n    fw.exit_dual_level(level=3)',
    'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); fw.make_dual(x, T.ones(2))',
    'print(fw.unpack_dual(3))',
    'with fw.dual_level():\n    print(fw.unpack_dual(3))',
    'with fw.dual_level():\n    fw.make_dual(T.ones(2), T.ones(2), level=5)',
    'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); fw.unpack_dual(x, level=5)',
    'print(fw.unpack_dual(T.ones(2), level=-1))',
    'fw.make_dual(T.ones(2), T.ones(2), level=-1)',
    'with fw.dual_level():\n    fw.exit_dual_level(0)',
    'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2, dtype=T.float64)); print(x, fw.unpack_dual(x).tangent.dtype)',
    'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(1))',
    'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2, 1))',
    ('class Sz(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        return T.ones(3)\n'
     'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); print(Sz.apply(x))'),
    ('class Two(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        return xt, xt\n'
     'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); print(Two.apply(x))'),
    ('class Same(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        return xt * 2\n'
     'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); print(Same.apply(x))'),
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.ones(2)); x.mul_(2)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.ones(2)); y = x.expand(3, 2); y.add_(1)',
    # --- grad modes --------------------------------------------------------------------
    X + '    with T.no_grad(): y = x * x\n' + '    print(y)',
    X + '    with T.set_grad_enabled(False): y = x.exp()\n' + P,
    X + '    with T.inference_mode(): y = x * x\n' + '    print(y, y.is_inference(), fw.unpack_dual(y).tangent)',
    'with fw.dual_level():\n    with T.inference_mode():\n        x = fw.make_dual(T.ones(2), T.ones(2)); print(x, x.is_inference(), fw.unpack_dual(x).tangent)',
    'with T.inference_mode():\n    with fw.dual_level():\n        x = fw.make_dual(T.ones(2), T.ones(2)); y = x * 3; print(y, fw.unpack_dual(y))',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True)\n    with T.no_grad(): x = fw.make_dual(p, T.ones(2))\n    print(x, x.requires_grad)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.ones(2))\nwith fw.dual_level():\n    print(fw.unpack_dual(x), x * 2)',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.ones(2)); y = x.sum(); print(y.tolist(), float(y), y.item(), x.numpy())',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.ones(2)); x.requires_grad_(); print(x, x.is_leaf, fw.unpack_dual(x).tangent.requires_grad)',
    # --- pointwise ops -----------------------------------------------------------------
    X + '    y = x.sin(); print(y)\n',
    X + '    y = x.exp(); print(y)\n',
    X + '    y = x.log()\n' + P,
    X + '    y = x ** 3\n' + P + '    y = 2 ** x\n' + P + '    y = x.pow(T.tensor([2., 1., .5]))\n' + P,
    X + '    w = fw.make_dual(T.tensor([2., 1., 3.]), T.tensor([0., 1., 1.])); y = x ** w\n' + P + '    y = x / w\n' + P + '    y = 1 / x\n' + P,
    X + '    y = T.where(T.tensor([True, False, True]), x, x * 10)\n' + P + '    y = T.where(x > 0.7, x, 0.)\n' + P,
    X + '    y = x.clamp(0.7, 1.5)\n' + P + '    y = x.clamp(min=1.)\n' + P,
    X + '    for f in (T.relu, T.sigmoid, T.tanh, T.abs, T.sqrt, T.neg, T.reciprocal):\n        y = f(x - 1)' + ' if f is not T.sqrt else f(x)\n    ' + P,
    X + '    y = T.maximum(x, T.tensor([1., 0., 3.]))\n' + P + '    y = T.minimum(x, T.tensor([1., 0., 3.]))\n' + P,
    X + '    y = x * x + 3 * x - x / 2\n' + '    print(y)\n',
    X + '    y = x.sub(T.ones(3), alpha=2)\n' + P + '    y = T.add(x, x, alpha=3)\n' + P,
    X + '    y = (-x).relu(); print(y)\n' + '    y = (x - 1).relu(); print(y)\n' + '    print(x.clamp(0.7, 1.5))\n',
    X + '    for f in (T.expm1, T.log1p, T.rsqrt, T.tan, T.log2, T.log10, T.square):\n        y = f(x)\n    ' + P,
    X + '    y = x.fmod(0.75)\n' + P + '    y = x.remainder(-0.75)\n' + P + '    y = T.lerp(x, T.ones(3), 0.25)\n' + P,
    X + '    w = T.tensor([2., 3., 1.], requires_grad=True)\n    for y in (x * w, x / w, T.maximum(x, w), x ** w, T.where(x > 1.5, x, w), T.stack([x, w]), x.exp() + w): print(fw.unpack_dual(y).tangent.requires_grad, end=" ")',
    'with fw.dual_level():\n    w = T.tensor([[2., 3.], [1., -1.]], requires_grad=True); x = fw.make_dual(T.tensor([1., 2.]), T.ones(2))\n    for y in (w.mv(x), T.matmul(x, w), T.mm(x[None], w), F.conv1d(x.view(1, 1, 2), w[:1].view(1, 1, 2)), F.linear(x, w), F.linear(x[None], w, w[0]), T.addmm(T.zeros(1, 2), x[None], w)): print(fw.unpack_dual(y).tangent.requires_grad, end=" ")',
    'with fw.dual_level():\n    w = T.tensor([[2., 3.], [1., -1.]], requires_grad=True); x = fw.make_dual(T.tensor([1., 2.]), T.ones(2)); t = fw.unpack_dual(F.linear(x, w, w[0])).tangent; print(t.detach(), t.requires_grad)',
    # --- reductions --------------------------------------------------------------------
    M + '    print(m.sum(), m.sum(0), m.sum(1, keepdim=True), m.mean(), m.mean(dim=1))',
    M + '    y = m.prod()\n' + P + '    y = m.prod(1)\n' + P,
    M + '    y = m.var()\n' + P + '    y = m.std(1)\n' + P + '    y = m.var(0, unbiased=False)\n' + P,
    M + '    y = m.norm()\n' + P + '    y = m.norm(dim=1)\n' + P,
    M + '    y = m.logsumexp(1)\n' + P,
    M + '    r = m.max(1); print(r.values, r.indices); r = m.min(dim=0); print(r)',
    M + '    print(m.max(), m.amax(1), m.argmax(), m.argmax(1))',
    M + '    y = m.softmax(1)\n' + P + '    y = F.log_softmax(m, dim=0)\n' + P,
    M + '    y = m.cumsum(1)\n' + P,
    M + '    print(m.amin(1), m.amax(0), m.max(1, keepdim=True).values, T.max(m, 0)[0])',
    M + '    y = m.mean((0, 1))\n' + P + '    y = m.sum(-1, keepdim=True).mean()\n' + P + '    print(m.mean(), m.norm(p=1))',
    # --- matmul ------------------------------------------------------------------------
    M + '    w = T.tensor([[1., 0.], [0., 1.], [1., 1.]]); print(m @ w, m.mm(w), T.matmul(m, w[:, 0]))',
    M + '    w = fw.make_dual(T.tensor([[1., 0.], [0., 1.], [1., 1.]]), T.ones(3, 2)); print(m @ w)',
    'with fw.dual_level():\n    a = fw.make_dual(T.arange(12.).reshape(2, 2, 3), T.ones(2, 2, 3)); b = T.arange(6.).reshape(3, 2)\n    print(T.bmm(a, b.expand(2, 3, 2)), a @ b, b.t() @ a.transpose(1, 2))',
    'with fw.dual_level():\n    a = fw.make_dual(T.tensor([1., 2.]), T.tensor([1., -1.])); print(a @ a, T.dot(a, a), T.outer(a, a))',
    # --- views ---------------------------------------------------------------------------
    M + '    print(m.t(), m.transpose(0, 1).shape, m.permute(1, 0))',
    M + '    print(m.view(3, 2), m.reshape(-1), m.view(6)._base is m, fw.unpack_dual(m.view(6)).tangent._base is not None)',
    M + '    print(m.unsqueeze(0), m[None].squeeze(0).shape, m[:1].squeeze())',
    M + '    print(m[0].expand(2, 3), m[:, 1:], m[1, 2], m.select(1, 0))',
    M + '    print(m.unbind(1)); print(m.split(2, dim=1)); print(m.chunk(2))',
    'with fw.dual_level():\n    d = fw.make_dual(T.arange(9.).reshape(3, 3), T.arange(9.).reshape(3, 3) * 10); print(d.diagonal(), T.diagonal(d, 1), d.flatten(), d.T)',
    M + '    print(T.cat([m, T.zeros(1, 3)]), T.stack([m, m * 2], 1))',
    M + '    print(m[[1, 0]], m[:, [0, 2]], m[m > 2.5], m[T.tensor([True, False])])',
    M + '    print(m.gather(1, T.tensor([[2, 0], [1, 1]])), m.index_select(1, T.tensor([2, 0])))',
    M + '    print(m.flip(0), m.repeat(1, 2), m.narrow(1, 1, 2), m.masked_fill(m > 3.5, 0.))',
    # --- nn.functional -----------------------------------------------------------------
    M + '    w = T.tensor([[1., -1., 0.5], [0., 2., 1.]]); b = T.tensor([.1, .2]); y = F.linear(m, w, b)\n' + P,
    'with fw.dual_level():\n    img = fw.make_dual(T.arange(32.).reshape(1, 2, 4, 4) / 10, T.ones(1, 2, 4, 4))\n    w = T.arange(36.).reshape(2, 2, 3, 3) / 50 - .3; y = F.conv2d(img, w, T.tensor([.5, -.5]), padding=1)\n' + P,
    'with fw.dual_level():\n    img = fw.make_dual(T.tensor([[[[1., 5., 2., 0.], [3., 4., 8., 1.], [0., 2., 7., 6.], [1., 1., 9., 3.]]]]), T.arange(16.).reshape(1, 1, 4, 4))\n    print(F.max_pool2d(img, 2)); print(F.avg_pool2d(img, 2))',
    M + '    y = F.layer_norm(m * m, (3,))\n' + P + '    y = F.layer_norm(m * m, (3,), T.tensor([1., 2., 3.]), T.tensor([0., 1., 0.]))\n' + P,
    M + '    rm = T.tensor([1., 2., 3.]); rv = T.tensor([1., 4., 2.]); y = F.batch_norm(m, rm, rv, T.tensor([1., 2., 3.]), T.tensor([0., .5, 0.]))\n' + P,
    M + '    rm = T.zeros(3); rv = T.ones(3); y = F.batch_norm(T.cat([m, m[:1] ** 2]), rm, rv, T.tensor([1., 2., 3.]), None, training=True)\n' + P + '    print(rm, rv)',
    'with fw.dual_level():\n    w = fw.make_dual(T.arange(8.).reshape(4, 2), T.arange(8.).reshape(4, 2) / 8); y = F.embedding(T.tensor([[0, 3], [3, 1]]), w); print(y)',
    M + '    y = F.cross_entropy(m, T.tensor([2, 0]))\n' + P + '    y = F.cross_entropy(m, T.tensor([2, 0]), reduction="none")\n' + P,
    M + '    y = F.mse_loss(m, T.ones(2, 3))\n' + P + '    y = F.nll_loss(F.log_softmax(m, 1), T.tensor([1, 2]))\n' + P,
    X + '    for f in (F.gelu, F.silu, F.leaky_relu):\n        y = f(x - 1)\n    ' + P,
    X + '    y = F.leaky_relu(x - 1, 0.2)\n' + P + '    y = F.dropout(x, 0.5, training=False); print(y)\n',
    'T.manual_seed(0); lin = T.nn.Linear(3, 2)\nwith T.no_grad(): lin.weight.copy_(T.tensor([[1., -1., .5], [0., 2., 1.]])); lin.bias.copy_(T.tensor([.1, .2]))\n' + X + '    y = lin(x); p, t = fw.unpack_dual(y)\n' + '    print(y.grad_fn, p.detach(), t.detach(), t.requires_grad)',
    ('T.manual_seed(0); net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))\n'
     'with T.no_grad():\n    for i, p in enumerate(net.parameters()): p.copy_(T.arange(p.numel(), dtype=T.float32).reshape(p.shape) / 10 - .2 * i)\n'
     + X + '    y = net(x); t = fw.unpack_dual(y).tangent\n' + '    print(t.detach().round(decimals=4), t.requires_grad, y.grad_fn, y.requires_grad)'),
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([[.5, 1., 2., -1.]]), T.tensor([[1., .5, -1., 2.]])); y = F.pad(x, (1, 2))\n' + P + '    y = F.l1_loss(x, T.zeros(1, 4))\n' + P + '    y = F.smooth_l1_loss(x, T.zeros(1, 4))\n' + P,
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([.2, .5, .9]), T.tensor([1., .5, -1.])); y = F.binary_cross_entropy(x, T.tensor([0., 1., 1.]))\n' + P + '    y = F.binary_cross_entropy_with_logits(x, T.tensor([0., 1., 1.]))\n' + P,
    'with fw.dual_level():\n    x = fw.make_dual(T.arange(8.).view(1, 2, 4) / 4, T.ones(1, 2, 4)); y = F.conv1d(x, T.tensor([[[1., -1.], [.5, .5]]]), stride=2)\n' + P + '    print(F.max_pool1d(x, 2), F.adaptive_avg_pool2d(x.view(1, 2, 2, 2), 1))',
    # --- casts, detach, new tensors, non-differentiable ops ---------------------------
    X + '    print(x.double(), x.double().float(), x.to(T.float64).dtype, fw.unpack_dual(x.double()).tangent.dtype)',
    X + '    d = x.detach(); print(d, fw.unpack_dual(d).tangent, fw.unpack_dual(x).tangent)',
    X + '    c = x.clone(); print(c, fw.unpack_dual(x.data).tangent)',
    X + '    print(T.zeros_like(x), T.ones_like(x), T.empty_like(x).shape, fw.unpack_dual(T.zeros_like(x)).tangent)',
    X + '    print(x > 1, x == 1, x.argmax(), fw.unpack_dual(x.argmax()).tangent, x.tolist(), x.item() if False else x[1].item())',
    X + '    print(x.floor(), x.ceil(), (x * 3).round(), (x - 1).sign(), x.trunc())',
    X + '    print(x // 2)',
    X + '    print(T.floor_divide(x, 2))',
    X + '    print(x % 0.75)',
    X + '    print(x.to(T.int64), fw.unpack_dual(x.long()).tangent)',
    # --- views and in-place ------------------------------------------------------------
    M + '    v = m[0]; t = fw.unpack_dual(v).tangent; print(t, t._base is not None, fw.unpack_dual(m.t()).tangent._base is not None)',
    X + '    x.mul_(2); print(x); x.add_(T.tensor([1., 1., 1.])); print(x)',
    X + '    x.add_(fw.make_dual(T.ones(3), T.tensor([10., 20., 30.]))); print(x); x.zero_(); print(x)',
    X + '    a = T.ones(3); a.copy_(x); print(a); x.copy_(T.tensor([7., 8., 9.])); print(x)',
    X + '    x.clamp_(0.7, 1.5); print(x); x.exp_(); print(x)',
    M + '    v = m[:, 1]; v.mul_(3); print(m); m[0].add_(fw.make_dual(T.ones(3), T.ones(3))); print(m)',
    M + '    m.t()[0].zero_(); print(m)',
    'with fw.dual_level():\n    base = T.zeros(2, 3); d = fw.make_dual(T.tensor([1., 2., 3.]), T.tensor([4., 5., 6.])); base[1] = d; print(base)',
    'with fw.dual_level():\n    base = T.zeros(4); d = fw.make_dual(T.tensor(1.), T.tensor(5.)); base[2] = d; print(base); base[0] = 3.; print(base)',
    M + '    m[m > 3.5] = 0.; print(m)',
    M + '    m[m > 3.5] = fw.make_dual(T.tensor(-1.), T.tensor(9.)); print(m)',
    M + '    p = m * 1; p[:, 0] = fw.make_dual(T.tensor([7., 8.]), T.tensor([3., 3.])); print(p, m)',
    'with fw.dual_level():\n    base = T.zeros(3); v = base[1:]; v.copy_(fw.make_dual(T.ones(2), T.tensor([2., 3.]))); print(base, v)',
    'with fw.dual_level():\n    a = T.ones(3); x = fw.make_dual(T.tensor([1., 2., 3.]), T.tensor([1., 0., 1.])); a.mul_(x); print(a)',
    'with fw.dual_level():\n    base = T.arange(6.); v = base[2:4]; x = fw.make_dual(v, T.ones(2)); print(x, base, fw.unpack_dual(base).tangent)',
    'with fw.dual_level():\n    t = T.tensor([1., 3.]); x = fw.make_dual(T.tensor([1., 2.]), t); print(fw.unpack_dual(x).tangent is t)',
    'with fw.dual_level():\n    t = T.ones(3, 2).t(); x = fw.make_dual(T.ones(2, 3), t); tg = fw.unpack_dual(x).tangent; print(tg.stride(), tg is t)\n    x = fw.make_dual(T.ones(3, 2).t(), T.ones(2, 3)); print(x.stride(), fw.unpack_dual(x).tangent.stride())',
    'with fw.dual_level():\n    x = fw.make_dual(T.tensor([1., 2.]), T.ones(2)); print(x._version); x.add_(1); print(x._version, fw.unpack_dual(x).tangent._version)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p * 1, T.ones(2)); x.mul_(2); t = fw.unpack_dual(x).tangent\n    print(x.grad_fn, t.detach(), t.requires_grad); x.sum().backward(); print(p.grad)',
    # --- reverse over forward ----------------------------------------------------------
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.tensor([1., 0.])); y = (x * x).sum()\n    print(x.grad_fn, y); print(fw.unpack_dual(y).tangent)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.tensor([1., 0.])); y = x.sin() * x\n    fw.unpack_dual(y).tangent.sum().backward(); print(p.grad)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.tensor([1., 3.])); y = (x ** 3).sum()\n    y.backward(); print(p.grad)\n    p.grad = None; fw.unpack_dual(y).tangent.backward(); print(p.grad)',
    'with fw.dual_level():\n    t = T.tensor([1., 3.], requires_grad=True); x = fw.make_dual(T.tensor([1., 2.]), t); y = x.exp()\n    tg = fw.unpack_dual(y).tangent; print(tg.requires_grad, y.requires_grad)\n    tg.sum().backward(); print(t.grad)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); t = T.tensor([1., 3.], requires_grad=True); x = fw.make_dual(p, t); y = x * x\n    tg = fw.unpack_dual(y).tangent; tg.sum().backward(); print(p.grad, t.grad)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.tensor([1., 0.])); y = (x * x).sum(); t = fw.unpack_dual(y).tangent\n    print(y.detach(), t.detach(), t.requires_grad, y.grad_fn)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.ones(2)); u = fw.unpack_dual(x).primal; print(u, u._base is x)\n    (u * u).sum().backward(); print(p.grad); print(fw.unpack_dual(p.view(2)).primal, fw.unpack_dual(x * 2).primal)',
    'with fw.dual_level():\n    p = T.tensor([1., 2.], requires_grad=True); x = fw.make_dual(p, T.ones(2)); u = fw.unpack_dual(x * 2).primal; print(u.detach(), u.requires_grad, u._is_view()); u.sum().backward(); print(p.grad)',
    # --- custom Function ---------------------------------------------------------------
    ('class Sq(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x, k):\n        ctx.save_for_forward(x); ctx.k = k; return x * x * k\n'
     '    @staticmethod\n    def jvp(ctx, xt, kt):\n        x, = ctx.saved_tensors; print("kt", kt); return 2 * x * xt * ctx.k\n'
     + X + '    y = Sq.apply(x, 3.)\n' + '    print(y)'),
    ('class Sq(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x * x\n'
     + X + '    y = Sq.apply(x)\n' + '    print(y)'),
    ('class Two(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, a, b):\n        ctx.save_for_forward(a, b); return a + b, a * b\n'
     '    @staticmethod\n    def jvp(ctx, at, bt):\n        a, b = ctx.saved_tensors; print(bt)\n        return at + (0 if bt is None else bt), at * b\n'
     + X + '    s, p = Two.apply(x, T.tensor([2., 2., 2.])); print(s); print(p)'),
    ('class Id(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x.clone()\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        return xt * 10\n'
     '    @staticmethod\n    def backward(ctx, g):\n        return g\n'
     'p = T.tensor([1., 2.], requires_grad=True)\n'
     'with fw.dual_level():\n    x = fw.make_dual(p, T.ones(2)); y = Id.apply(x); print(y, y.grad_fn.name())'),
    ('class M(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x, y):\n        ctx.set_materialize_grads(False); return x * y\n'
     '    @staticmethod\n    def jvp(ctx, xt, yt):\n        print(xt, yt); return xt\n'
     'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); print(M.apply(x, T.ones(2)))'),
    ('class D(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        x.mul_(2); ctx.mark_dirty(x); return x\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        xt.mul_(2); return xt\n'
     'with fw.dual_level():\n    x = fw.make_dual(T.ones(2), T.ones(2)); y = D.apply(x); print(y, x, y is x)'),
    ('class Sq(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_forward(x); ctx.save_for_backward(x); return x * x\n'
     '    @staticmethod\n    def jvp(ctx, xt):\n        x, = ctx.saved_tensors; return 2 * x * xt\n'
     '    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors; return 2 * x * g\n'
     'p = T.tensor([1., 2.], requires_grad=True)\n'
     'with fw.dual_level():\n    x = fw.make_dual(p, T.tensor([1., -1.])); y = Sq.apply(x); print(y.detach(), fw.unpack_dual(y).tangent.detach(), y.grad_fn.name())\n'
     '    y.sum().backward(); print(p.grad)'),
    # --- gradcheck with check_forward_ad -----------------------------------------------
    'print(T.autograd.gradcheck(lambda a: a.sin() * a, (T.tensor([1., 2.], dtype=T.float64, requires_grad=True),), check_forward_ad=True))',
    'print(T.autograd.gradcheck(lambda a, b: (a @ b).relu().softmax(0), (T.tensor([[1., 2.], [3., -4.]], dtype=T.float64, requires_grad=True), T.tensor([[.5, 1.], [1., 2.]], dtype=T.float64, requires_grad=True)), check_forward_ad=True))',
    'print(T.autograd.gradcheck(lambda a: (a.cumsum(0) * a[0], a.var()), (T.tensor([1., 2., 4.], dtype=T.float64, requires_grad=True),), check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False))',
    ('class Bad(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n'
     '    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n'
     '    @staticmethod\n    def jvp(ctx, t):\n        return t * 3\n'
     'try:\n    T.autograd.gradcheck(Bad.apply, (T.tensor([1., 2.], dtype=T.float64, requires_grad=True),), check_forward_ad=True)\n'
     'except Exception as e:\n    print(type(e).__name__, str(e).splitlines()[0])\n'
     'print(T.autograd.gradcheck(Bad.apply, (T.tensor([1., 2.], dtype=T.float64, requires_grad=True),), check_forward_ad=True, raise_exception=False))'),
    ('class NoJ(T.autograd.Function):\n'
     '    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n'
     '    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n'
     'try:\n    T.autograd.gradcheck(NoJ.apply, (T.tensor([1., 2.], dtype=T.float64, requires_grad=True),), check_forward_ad=True)\n'
     'except Exception as e:\n    print(type(e).__name__, str(e).splitlines()[0])'),
    # --- decorator, exceptions ---------------------------------------------------------
    '@fw.dual_level()\ndef f(a):\n    x = fw.make_dual(a, T.ones_like(a)); return fw.unpack_dual(x.exp()).tangent\nprint(f(T.tensor([0., 1.]))); print(fw.unpack_dual(T.ones(1)))',
    'try:\n    with fw.dual_level():\n        x = fw.make_dual(T.ones(2), T.ones(2)); raise ValueError("boom")\nexcept ValueError as e:\n    print("caught", e)\nprint(x)\nwith fw.dual_level():\n    print(fw.make_dual(T.ones(1), T.ones(1)))',
    # --- agreement with autograd.functional.jvp ----------------------------------------
    ('def f(a):\n    return (a.sin() * a.exp()).cumsum(0) / (1 + a * a)\n'
     'p = T.tensor([0.3, -1.2, 2.]); v = T.tensor([1., 2., -.5])\n'
     'with fw.dual_level():\n    t1 = fw.unpack_dual(f(fw.make_dual(p, v))).tangent\n'
     'out, t2 = T.autograd.functional.jvp(f, p, v)\nprint(t1.round(decimals=4)); print(t2.round(decimals=4)); print(out.round(decimals=4))'),
    ('def f(a, b):\n    return (a @ b).tanh().sum(1)\n'
     'a = T.tensor([[1., 2.], [.5, -1.]]); b = T.tensor([[.3, .1], [-.2, .4]]); va = T.ones(2, 2); vb = T.tensor([[1., 0.], [0., 1.]])\n'
     'with fw.dual_level():\n    t1 = fw.unpack_dual(f(fw.make_dual(a, va), fw.make_dual(b, vb))).tangent\n'
     '_, t2 = T.autograd.functional.jvp(f, (a, b), (va, vb))\nprint(t1.round(decimals=4)); print(t2.round(decimals=4))'),
    # --- more corners: detach_, copies, writes into plain tensors -------------------------
    X + '    y = x * 1; y.detach_(); print(fw.unpack_dual(y).tangent, y)',
    X + '    import copy\n    print(fw.unpack_dual(copy.deepcopy(x)).tangent, fw.unpack_dual(x.contiguous()).tangent)',
    X + '    print(fw.unpack_dual(x.to(T.float64)).tangent, fw.unpack_dual(x.type(T.float64)).tangent, fw.unpack_dual(x.cpu()).tangent)',
    X + '    print(fw.unpack_dual(x.flip(0)).tangent, fw.unpack_dual(x.repeat(2)).tangent)',
    X + '    print(fw.unpack_dual(x.expand(2, 3).sum(0)).tangent, fw.unpack_dual(x.unsqueeze(1) * x).tangent)',
    X + '    z = T.zeros(2, 3); z[0] = x; print(fw.unpack_dual(z).tangent)\n    z = T.zeros(3, 2); z[:, 1] = x; print(fw.unpack_dual(z).tangent)',
    X + '    z = T.zeros(3, 2); z.t()[0].copy_(x); print(fw.unpack_dual(z).tangent)',
    'with fw.dual_level():\n    w = fw.make_dual(T.zeros(2, 2), T.ones(2, 2)); w[0] = T.tensor([5., 6.]); print(fw.unpack_dual(w))',
    X + '    print([fw.unpack_dual(p).tangent for p in x.split(1)], [fw.unpack_dual(p).tangent for p in x.unbind()])',
    X + '    print(fw.unpack_dual(x.max()).tangent, fw.unpack_dual(x.norm()).tangent.round(decimals=4), fw.unpack_dual(x.std()).tangent.round(decimals=4))',
    X + '    y = x * 2; y.detach_(); y.add_(x); print(y)',
    # --- a tangent in a graph on a primal that is not C-contiguous (reverse over forward) ---
    ('w = T.ones(3, 2, requires_grad=True)\nwith fw.dual_level():\n    d = fw.make_dual(T.ones(2, 3).t(), w * 2)\n'
     '    print(fw.unpack_dual(d).tangent.stride(), fw.unpack_dual(d).tangent.requires_grad)\n'
     '    ty = fw.unpack_dual((d * T.tensor([[1., 2.], [3., 4.], [5., 6.]])).sum()).tangent\n'
     '    print(ty.detach()); ty.backward(); print(w.grad)'),
    ('v = T.ones(4, 3, requires_grad=True)\nwith fw.dual_level():\n    e = fw.make_dual(T.ones(4, 6)[:, ::2], v * 3)\n'
     '    t = fw.unpack_dual(e[1]).tangent; print(t.detach(), t.requires_grad); t.sum().backward(); print(v.grad)'),
    ('with fw.dual_level():\n    f = fw.make_dual(T.ones(4, 6)[:, ::2], T.arange(12.).reshape(4, 3))\n'
     '    print(fw.unpack_dual(f[1:3, 1]).tangent, fw.unpack_dual(f.t()).tangent.stride())'),
    # random refills leave a zero tangent (the values depend on nothing)
    ('p = T.zeros(3, requires_grad=True)\nwith fw.dual_level():\n'
     '    x = fw.make_dual(T.zeros(3), T.ones(3)); x.normal_(); y = fw.make_dual(T.zeros(3), T.ones(3)); y.uniform_()\n'
     '    z = fw.make_dual(p * 1, T.ones(3)); z.normal_()\n'
     '    print(fw.unpack_dual(x).tangent, fw.unpack_dual(y).tangent, fw.unpack_dual(z).tangent)'),
]

# index -> reason: npgrad differs from torch 2.13 here (strict xfails, to be fixed in npgrad).
KNOWN_DIFFS: dict[int, str] = {
    135: "in-place op on a dual whose primal requires grad: torch's tangent requires grad (CopyBackwards)",
}


def _params() -> list:
    out = []
    for i, code in enumerate(SNIPPETS):
        marks = ()
        if i in KNOWN_DIFFS:
            marks = (pytest.mark.xfail(strict=True, reason=KNOWN_DIFFS[i]),)
        out.append(pytest.param(code, id=f"fw{i:03d}", marks=marks))
    return out


@pytest.fixture(autouse=True)
def no_level_left_open():
    """Fail a snippet that leaves a dual level open in either library (and close it)."""
    yield
    leaked = []
    if FW.active:
        leaked.append("npgrad")
        npgrad.autograd.forward_ad.exit_dual_level()
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.autograd.forward_ad._current_level >= 0:
        leaked.append("torch")
        torch.autograd.forward_ad.exit_dual_level()
    if leaked:
        pytest.fail("dual level left open: " + ", ".join(leaked), pytrace=False)


@pytest.mark.parametrize("code", _params())
def test_forward_ad_matches_torch(code: str) -> None:
    torch = pytest.importorskip("torch")
    code = PRELUDE + code
    assert run_snippet(code, npgrad) == run_snippet(code, torch)


def test_forward_ad_snippets_run_without_torch() -> None:
    """Without torch the snippets still run: none may fail with AttributeError or NameError."""
    for code in SNIPPETS:
        text = run_snippet(PRELUDE + code, npgrad)
        assert "EXC AttributeError" not in text and "EXC NameError" not in text, (code, text)
