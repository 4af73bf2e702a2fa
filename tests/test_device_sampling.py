"""Devices, sampling, torch.testing, torch.special and Variable, checked against torch.

Deterministic behaviour (flags, errors, dtypes, shapes, grad_fn names, assert_close
messages, logit/sinc/entr values and gradients) is compared with torch exactly;
sampled values differ from torch's by design, so their distributions are checked
statistically (a fixed seed, 4-sigma bounds) and seeding must reproduce them.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import npgrad
from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")

N_DRAWS = 20_000


def _env(m):
    return {"torch": m, "T": m.tensor, "P": m.tensor([0.2, 0.3, 0.5]),
            "x": m.tensor([0.5, 0.2], requires_grad=True),
            "f": lambda: m.zeros(3), "i": lambda: m.zeros(3, dtype=m.int64),
            "ac": m.testing.assert_close, "mk": m.testing.make_tensor,
            "Variable": m.autograd.Variable}


def _torch_text(msg: str) -> str:
    """npgrad's message with npgrad's own names spelled as torch's (dtypes, the Tensor class)."""
    return msg.replace("<class 'npgrad._tensor.Tensor'>", "<class 'torch.Tensor'>") \
              .replace("npgrad.", "torch.")


def _outcome(m, expr: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = eval(expr, {}, _env(m))
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return type(exc).__name__, _torch_text(str(exc))
    return "ok", value


# -- devices, backends, threads, determinism ---------------------------------------------

FLAG_EXPRS = [
    "torch.cuda.is_available()", "torch.cuda.device_count()", "torch.cuda.is_initialized()",
    "torch.cuda.manual_seed(1)", "torch.cuda.manual_seed_all(1)", "torch.cuda.is_bf16_supported()",
    "torch.cuda.memory_allocated()", "torch.cuda.empty_cache()",
    "torch.backends.mps.is_available()", "torch.backends.mps.is_built()",
    "torch.backends.cudnn.is_available()", "torch.backends.cudnn.deterministic",
    "torch.backends.cudnn.benchmark", "torch.backends.cudnn.enabled",
    "torch.backends.cudnn.version()", "torch.backends.cuda.is_built()",
    "torch.are_deterministic_algorithms_enabled()",
    "torch.is_deterministic_algorithms_warn_only_enabled()",
]


@pytest.mark.parametrize("expr", FLAG_EXPRS)
def test_flags_match_torch(expr: str) -> None:
    assert _outcome(npgrad, expr) == _outcome(torch, expr)


DEVICE_ERRORS = [
    "torch.cuda.current_device()", "torch.cuda.get_device_name()", "torch.cuda.get_device_name(0)",
    "torch.cuda.synchronize()", "torch.cuda.get_device_capability()", "torch.cuda.init()",
    "torch.cuda.get_device_properties(0)", "torch.cuda.initial_seed()",
    "torch.set_num_threads(0)", "torch.set_num_threads(-2)", "torch.set_num_threads('a')",
    "torch.set_num_threads(2.0)", "torch.set_num_threads(True)",
    "torch.use_deterministic_algorithms(1)",
    "torch.use_deterministic_algorithms(True, warn_only=1)",
]


@pytest.mark.parametrize("expr", DEVICE_ERRORS)
def test_device_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env)


def test_cudnn_flags_are_settable() -> None:
    cudnn = npgrad.backends.cudnn
    saved = (cudnn.deterministic, cudnn.benchmark, cudnn.enabled)
    try:
        cudnn.deterministic, cudnn.benchmark, cudnn.enabled = True, True, False
        assert (npgrad.backends.cudnn.deterministic, npgrad.backends.cudnn.benchmark,
                npgrad.backends.cudnn.enabled) == (True, True, False)
    finally:
        cudnn.deterministic, cudnn.benchmark, cudnn.enabled = saved


def test_num_threads_round_trip() -> None:
    before = npgrad.get_num_threads()
    try:
        assert npgrad.set_num_threads(3) is None
        assert npgrad.get_num_threads() == 3
    finally:
        npgrad.set_num_threads(before)


def test_deterministic_algorithms_round_trip() -> None:
    try:
        assert npgrad.use_deterministic_algorithms(True, warn_only=True) is None
        assert npgrad.are_deterministic_algorithms_enabled()
        assert npgrad.is_deterministic_algorithms_warn_only_enabled()
    finally:
        npgrad.use_deterministic_algorithms(False)
    assert not npgrad.are_deterministic_algorithms_enabled()
    assert not npgrad.is_deterministic_algorithms_warn_only_enabled()


def test_device_submodules_stay_lazy() -> None:
    import subprocess
    import sys

    code = ("import sys, npgrad; print(sorted(m for m in ('npgrad.cuda', 'npgrad.testing', "
            "'npgrad.special', 'npgrad.backends.cudnn', 'npgrad.backends.mps') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- sampling: errors, dtypes, shapes and grad_fn as torch ---------------------------------

SAMPLING_ERRORS = [
    "torch.multinomial(P, 4)", "torch.multinomial(P, 0)", "torch.multinomial(P, -1)",
    "torch.multinomial(T([-0.2, 1.]), 1)", "torch.multinomial(T([0., 0.]), 1)",
    "torch.multinomial(T([float('nan'), 1.]), 1)", "torch.multinomial(T([float('inf'), 1.]), 1)",
    "torch.multinomial(T([-0.2, 1.]), 2, True)", "torch.multinomial(T([0., 0.]), 2, True)",
    "torch.multinomial(T([float('nan'), 1.]), 2, True)",
    "torch.multinomial(T([float('inf'), 1.]), 2, True)",
    "torch.multinomial(T([[1., 1.], [1., -1.]]), 2)",
    "torch.multinomial(T([[0., 0.], [1., 1.]]), 1)",
    "torch.multinomial(T([1, 2]), 1)", "torch.multinomial(T([True, False]), 1)",
    "torch.multinomial(T(1.), 1)", "torch.multinomial(torch.ones(2, 2, 2), 1)",
    "torch.multinomial(torch.ones(2, 2, 2, dtype=torch.int64), 0)",
    "torch.multinomial(T([]), 1)", "torch.multinomial(T([]), 1, True)",
    "torch.multinomial(torch.zeros(3, 0), 2, True)",
    "torch.multinomial(P, 1.5)", "torch.multinomial(P, True)", "P.multinomial(1.5)",
    "torch.bernoulli(T([1, 0]))", "torch.bernoulli(T([True, False]))",
    "torch.bernoulli(T([1.5, 0.]))", "torch.bernoulli(T([-0.5, 0.]))",
    "torch.bernoulli(T([float('nan'), 0.]))", "torch.bernoulli(1.0)",
    "torch.autograd.grad(torch.bernoulli(x, 0.3).sum(), x)",
    "P.clone().bernoulli_(1.5)", "f().bernoulli_(-0.1)", "P.clone().bernoulli_(T([0.5, 0.5]))",
    "P.clone().bernoulli_(T([1, 0, 1]))", "P.clone().bernoulli_(T([2., 0., 1.]))",
    "torch.tensor([0.5], requires_grad=True).bernoulli_()",
    "torch.normal(T([1, 2]), 1.0)", "torch.normal(0., T([1, 2]))", "torch.normal(x, -1.0)",
    "torch.normal(x, T([-1., 1.]))", "torch.normal(0., -1., (2,))",
    "torch.normal(torch.zeros(3), torch.ones(2))", "torch.normal(0., 1.)",
    "torch.normal(0., 1., 3)", "torch.normal(torch.zeros(2), 1.0, (2,))",
    "torch.poisson(T([1, 2]))", "torch.poisson(T([-1., 2.]))",
    "torch.poisson(T([float('nan'), 2.]))",
    "torch.randint_like(x, 0)", "torch.randint_like(x, 5, 2)",
    "torch.empty_strided((2, 3), (1,))",
    "f().exponential_(0.)", "f().exponential_(-1.)", "i().exponential_()",
    "f().geometric_(0.)", "f().geometric_(1.)", "f().geometric_(1.5)",
    "f().log_normal_(1., 0.)", "f().log_normal_(1., -1.)", "i().log_normal_()",
    "f().cauchy_(median=1., sigma=0.)", "f().cauchy_(0., -1.)", "i().cauchy_()",
    "f().random_(5, 2)", "f().random_(0)", "torch.zeros(3, dtype=torch.uint8).random_(-1, 2)",
    "torch.tensor([1., 2.], requires_grad=True).exponential_()",
]


@pytest.mark.parametrize("expr", SAMPLING_ERRORS)
def test_sampling_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env)


def _meta(t):
    grad_fn = None if t.grad_fn is None else type(t.grad_fn).__name__
    return tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad, grad_fn


SAMPLING_META = [
    "torch.multinomial(P, 2)", "torch.multinomial(P, 4, True)", "torch.multinomial(P.double(), 1)",
    "torch.multinomial(T([[0.2, 0.8], [0.5, 0.5]]), 3, replacement=True)",
    "torch.multinomial(torch.zeros(0, 3), 1)",
    "torch.multinomial(T([1., 2.], requires_grad=True), 1)",
    "P.multinomial(1, True)", "torch.multinomial(T([1., 2.]), T(1))",
    "torch.multinomial(P.half(), 2)",
    "torch.bernoulli(P)", "torch.bernoulli(P.double())", "torch.bernoulli(x)",
    "torch.bernoulli(x * 1)", "torch.bernoulli(x, 0.3)", "torch.bernoulli(T([1, 0]), 0.5)",
    "torch.bernoulli(T(0.5))", "P.bernoulli()", "P.bernoulli(0.3)", "(x * 1).bernoulli_()",
    "(x * 1).bernoulli_(0.3)", "(x * 1).bernoulli_(x)", "torch.tensor([1, 2]).bernoulli_(0.5)",
    "torch.normal(x, x)", "torch.normal(x, 1.0)", "torch.normal(0.0, x)",
    "torch.normal(0., 1., (2,))", "torch.normal(0., 1., (2,), requires_grad=True)",
    "torch.normal(torch.zeros(3), torch.ones(3, 1))",
    "torch.normal(torch.zeros(3, dtype=torch.float64), torch.ones(3))",
    "torch.normal(0., 1., size=(2, 3), dtype=torch.float64)", "torch.normal(0, 1, (2,))",
    "torch.poisson(T([1., 2.]))", "torch.poisson(T([1., 2.], requires_grad=True))",
    "torch.poisson(T([1., 2.]).double())",
    "torch.randint_like(x, 10)", "torch.randint_like(x, 3, 10)",
    "torch.randint_like(T([1, 2]), 10)",
    "torch.randint_like(x, 10, dtype=torch.int64)", "torch.randint_like(x, 10, requires_grad=True)",
    "torch.randint_like(x, low=1, high=3)",
    "torch.empty_strided((2, 3), (3, 1), dtype=torch.float64)",
    "(x * 1).exponential_()", "(x * 1).geometric_(0.5)", "(x * 1).log_normal_()",
    "(x * 1).cauchy_()", "(x * 1).random_()", "(x * 1).random_(5)", "(x * 1).random_(1, 5)",
    "i().geometric_(0.5)", "i().random_(to=5)", "torch.zeros(3, dtype=torch.uint8).random_()",
    "torch.zeros(2, dtype=torch.float16).random_()", "f().exponential_(lambd=2.)",
]


@pytest.mark.parametrize("expr", SAMPLING_META)
def test_sampling_shapes_dtypes_and_grad_fn_match_torch(expr: str) -> None:
    mine, theirs = _outcome(npgrad, expr), _outcome(torch, expr)
    assert mine[0] == theirs[0] == "ok"
    assert _meta(mine[1]) == _meta(theirs[1])


def test_empty_strided_keeps_strides() -> None:
    for size, stride in (((2, 3), (3, 1)), ((2, 3), (1, 2)), ((4,), (2,))):
        mine = npgrad.empty_strided(size, stride).stride()
        assert mine == torch.empty_strided(size, stride).stride()


def test_sampler_gradients_are_zero() -> None:
    x = npgrad.tensor([0.5, 0.2], requires_grad=True)
    s = npgrad.tensor([1.0, 2.0], requires_grad=True)
    zeros = [0.0, 0.0]
    assert npgrad.autograd.grad(npgrad.bernoulli(x).sum(), x)[0].tolist() == zeros
    gm, gs = npgrad.autograd.grad(npgrad.normal(x, s).sum(), (x, s))
    assert gm.tolist() == gs.tolist() == zeros
    assert npgrad.autograd.grad(npgrad.poisson(s).sum(), s)[0].tolist() == zeros
    assert npgrad.autograd.grad((x * 1).exponential_().sum(), x)[0].tolist() == zeros
    assert npgrad.autograd.grad((x * 1).bernoulli_(x).sum(), x)[0].tolist() == zeros
    assert npgrad.autograd.grad((x * 1).random_(3).sum(), x)[0].tolist() == zeros
    assert npgrad.bernoulli(x, 0.3).grad_fn.name() == "torch::autograd::NotImplemented"


# -- sampling: distributions (values differ from torch's; their laws must not) ------------

def _within_sigmas(observed: float, expected: float, sd_of_mean: float, k: float = 4.0) -> bool:
    return abs(observed - expected) <= k * sd_of_mean


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(replacement: bool) -> None:
    npgrad.manual_seed(1234)
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    weights = npgrad.tensor((probs * 5).tolist())  # unnormalised weights
    if replacement:
        draws = npgrad.multinomial(weights, N_DRAWS, replacement=True).numpy()
    else:  # one draw per row: the first pick of a race follows the probabilities
        draws = npgrad.multinomial(weights.expand(N_DRAWS, 4), 1).numpy().ravel()
    counts = np.bincount(draws, minlength=4)
    for k, p in enumerate(probs):
        assert _within_sigmas(counts[k] / N_DRAWS, p, math.sqrt(p * (1 - p) / N_DRAWS))


def test_multinomial_without_replacement_never_repeats() -> None:
    npgrad.manual_seed(7)
    rows = npgrad.multinomial(npgrad.rand(500, 6) + 0.01, 6).numpy()
    assert all(sorted(r) == list(range(6)) for r in rows)
    # zero weights come last, after every positive one
    picks = npgrad.multinomial(npgrad.tensor([0., 1., 0., 2.]), 4).numpy()
    assert sorted(picks[:2]) == [1, 3] and sorted(picks[2:]) == [0, 2]


def test_multinomial_second_pick_of_a_race() -> None:
    # P(second = j | first = i) = p_j / (1 - p_i): check P(second = 0) overall
    npgrad.manual_seed(99)
    p = np.array([0.5, 0.3, 0.2])
    draws = npgrad.multinomial(npgrad.tensor(p.tolist()).expand(N_DRAWS, 3), 2).numpy()
    expected = sum(p[i] * p[0] / (1 - p[i]) for i in (1, 2))
    observed = (draws[:, 1] == 0).mean()
    assert _within_sigmas(observed, expected, math.sqrt(expected * (1 - expected) / N_DRAWS))


def test_bernoulli_mean() -> None:
    npgrad.manual_seed(3)
    p = 0.3
    sd = math.sqrt(p * (1 - p) / N_DRAWS)
    assert _within_sigmas(npgrad.bernoulli(npgrad.full((N_DRAWS,), p)).mean().item(), p, sd)
    assert _within_sigmas(npgrad.zeros(N_DRAWS).bernoulli_(p).mean().item(), p, sd)
    assert _within_sigmas(npgrad.zeros(N_DRAWS).bernoulli(p).mean().item(), p, sd)
    values = npgrad.bernoulli(npgrad.full((N_DRAWS,), p)).unique().tolist()
    assert set(values) <= {0.0, 1.0}


@pytest.mark.parametrize("expr", [
    "npgrad.normal(npgrad.full((N,), 2.0), npgrad.full((N,), 3.0))",
    "npgrad.normal(npgrad.full((N,), 2.0), 3.0)",
    "npgrad.normal(2.0, npgrad.full((N,), 3.0))",
    "npgrad.normal(2.0, 3.0, (N,))",
])
def test_normal_mean_and_std(expr: str) -> None:
    npgrad.manual_seed(11)
    x = eval(expr, {"npgrad": npgrad, "N": N_DRAWS}).double()
    assert _within_sigmas(x.mean().item(), 2.0, 3.0 / math.sqrt(N_DRAWS))
    # the sample std's standard error is about sigma / sqrt(2 N)
    assert _within_sigmas(x.std().item(), 3.0, 3.0 / math.sqrt(2 * N_DRAWS))


def test_other_distributions_means() -> None:
    npgrad.manual_seed(5)
    n = N_DRAWS
    pois = npgrad.poisson(npgrad.full((n,), 4.0)).double()
    assert _within_sigmas(pois.mean().item(), 4.0, 2.0 / math.sqrt(n))
    expo = npgrad.zeros(n, dtype=npgrad.float64).exponential_(2.0)
    assert _within_sigmas(expo.mean().item(), 0.5, 0.5 / math.sqrt(n))
    geo = npgrad.zeros(n, dtype=npgrad.float64).geometric_(0.25)
    assert _within_sigmas(geo.mean().item(), 4.0, math.sqrt(0.75) / 0.25 / math.sqrt(n))
    assert geo.min().item() >= 1
    logn = npgrad.zeros(n, dtype=npgrad.float64).log_normal_(1.0, 0.5).log()
    assert _within_sigmas(logn.mean().item(), 1.0, 0.5 / math.sqrt(n))
    cauchy = npgrad.zeros(n, dtype=npgrad.float64).cauchy_(3.0, 2.0)
    # the median of n Cauchy draws has standard error pi * sigma / (2 sqrt(n))
    assert _within_sigmas(float(np.median(cauchy.numpy())), 3.0, math.pi * 2.0 / 2 / math.sqrt(n))


def test_integer_samplers_ranges() -> None:
    npgrad.manual_seed(8)
    r = npgrad.zeros(N_DRAWS).random_(2, 5)
    assert set(r.unique().tolist()) == {2.0, 3.0, 4.0}
    assert set(npgrad.zeros(N_DRAWS, dtype=npgrad.int64).random_(3).unique().tolist()) == {0, 1, 2}
    full = npgrad.zeros(N_DRAWS).random_()
    assert 0 <= full.min().item() and full.max().item() <= 2 ** 24
    assert set(npgrad.zeros(100, dtype=npgrad.bool).random_().unique().tolist()) == {False, True}
    like = npgrad.randint_like(npgrad.zeros(N_DRAWS), 1, 4)
    assert set(like.unique().tolist()) == {1.0, 2.0, 3.0}


SEEDED = [
    lambda: npgrad.multinomial(npgrad.tensor([0.2, 0.3, 0.5]), 50, True),
    lambda: npgrad.multinomial(npgrad.rand(4, 6), 3),
    lambda: npgrad.bernoulli(npgrad.full((50,), 0.5)),
    lambda: npgrad.normal(npgrad.zeros(50), 1.0),
    lambda: npgrad.normal(0.0, 1.0, (50,)),
    lambda: npgrad.poisson(npgrad.full((50,), 3.0)),
    lambda: npgrad.randint_like(npgrad.zeros(50), 100),
    lambda: npgrad.zeros(50).exponential_(),
    lambda: npgrad.zeros(50).geometric_(0.3),
    lambda: npgrad.zeros(50).log_normal_(),
    lambda: npgrad.zeros(50).cauchy_(),
    lambda: npgrad.zeros(50).random_(1000),
    lambda: npgrad.zeros(50).bernoulli_(0.5),
]


@pytest.mark.parametrize("draw", SEEDED)
def test_seeding_reproduces_samples(draw) -> None:
    npgrad.manual_seed(42)
    first = draw().tolist()
    second = draw().tolist()
    npgrad.manual_seed(42)
    assert draw().tolist() == first
    assert second != first  # the stream moves on


def test_generator_argument_is_used() -> None:
    g1 = npgrad.Generator().manual_seed(5)
    g2 = npgrad.Generator().manual_seed(5)
    a = npgrad.multinomial(npgrad.ones(10), 10, generator=g1)
    b = npgrad.multinomial(npgrad.ones(10), 10, generator=g2)
    assert a.tolist() == b.tolist()
    assert npgrad.zeros(5).exponential_(generator=g1).tolist() == \
        npgrad.zeros(5).exponential_(generator=g2).tolist()


# -- npgrad.testing ---------------------------------------------------------------------

ASSERT_CLOSE = [
    "ac(T([1., 2., 3.]), T([1., 2., 3.]))", "ac(T([1., 2.]), T([1., 2.000001]))",
    "ac(T([1., 2., 3.]), T([1., 2.5, 3.]))", "ac(T([1., 2., 3.]), T([1., 2.5, 4.]))",
    "ac(T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 5.]]))", "ac(T([1., 2.]), T([1., 2., 3.]))",
    "ac(T([1., 2.]), T([1., 2.], dtype=torch.float64))", "ac(T([1, 2]), T([1, 3]))",
    "ac(T(1.), T(2.))", "ac(1.0, 1.5)", "ac(1, 2)", "ac(1.0, 1)", "ac(T(1.), 1.)",
    "ac([T(1.), T(2.)], [T(1.), T(3.)])", "ac({'a': T(1.), 'b': 2.0}, {'a': T(1.), 'b': 3.0})",
    "ac([1., 2.], [1., 2., 3.])", "ac({'a': 1}, {'b': 1})", "ac((1.0, [2.0]), (1.0, [2.5]))",
    "ac(T([1., 2.]), T([1., 2.]), rtol=0.1)", "ac(T([1., 2.]), T([1., 2.]), atol=0.1)",
    "ac(T([1., float('nan')]), T([1., float('nan')]))",
    "ac(T([1., float('nan')]), T([1., float('nan')]), equal_nan=True)",
    "ac(T([1., 2.]), T([1., 3.]), msg='custom')", "ac(T([True, False]), T([True, True]))",
    "ac(T([1., 2.]), T([1., 2.]).double(), check_dtype=False)",
    "ac(torch.ones(2, 3), torch.ones(3, 2).t(), check_stride=True)",
    "ac(torch.ones(2, 3), torch.ones(3, 2).t())",
    "ac(T([1., 2.]), [1., 2.])", "ac('a', 'a')", "ac(T([1e-6]), T([0.]))",
    "ac(T([1e-4]), T([0.]))", "ac(T([0.]), T([1e-4]))", "ac(T([float('inf')]), T([float('inf')]))",
    "ac(T([float('inf')]), T([1.]))", "ac(True, False)", "ac(None, 1)", "ac(None, None)",
    "ac([T(1.)], [1.])", "ac(T([1.]), T([2.]))",
    "ac(T([1., 2.]), T([1., 3.]), msg=lambda m: m.upper())",
    "ac([T([1.])], [T([2.])], msg='x')", "ac(T([1., 2.]).half(), T([1., 2.1]).half())",
    "ac(1, 2.5, check_dtype=False)", "ac(T([1, 2]), T([1., 2.5]), check_dtype=False)",
    "ac({'a': [1.]}, {'a': [T(1.)]})",
    "ac(T([[1., 2.], [3., 4.]]).double(), T([[1.1, 2.], [3., 4.2]]).double())",
    "ac(T([1., 2.]), T([1.5, 2.]), rtol=0, atol=0)",
    "ac(T([5, 7], dtype=torch.uint8), T([6, 3], dtype=torch.uint8))",
    "ac(T([-3, 7], dtype=torch.int8), T([4, 7], dtype=torch.int8))", "ac(T(0.), T(1e-3))",
    "ac([[1, 2], [3]], [[1, 2], [4]])", "ac({'x': {'y': T([1.])}}, {'x': {'y': T([1.1])}})",
    "ac(T([0., 0.]), T([0., 0.]) + 1e-3, rtol=1e-2, atol=1e-2)", "ac(T([[1, 2]]), T([[1, 2]]).t())",
    "ac(2.0, float('nan'))", "ac(float('nan'), float('nan'), equal_nan=True)",
    "ac(T([1., 2.], requires_grad=True), T([1., 2.]))", "ac(np.float64(1.0), np.float64(1.5))",
    "ac(np.array([1.]), np.array([1.5]))", "ac(np.array([1, 2]), np.array([1, 3]))",
    "ac(np.array([1.], dtype=np.float32), np.array([1.]))", "ac(np.float32(1.0), np.float32(1.5))",
    "ac(np.array(1.), np.array(2.))", "ac(T([1., 2.]), T([1., 2.]).numpy())",
]


@pytest.mark.parametrize("expr", ASSERT_CLOSE)
def test_assert_close_matches_torch(expr: str) -> None:
    """Same outcome, exception type and message text (with npgrad's names spelled as torch's)."""
    def outcome(m):
        env = _env(m)
        env["np"] = np
        try:
            eval(expr, {}, env)
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, _torch_text(str(exc))
        return ("ok",)

    assert outcome(npgrad) == outcome(torch)


MAKE_TENSOR_ERRORS = [
    "mk(3, dtype=torch.float32)", "mk(3, device='cpu')",
    "mk(3, dtype=torch.float32, device='cpu', low=2, high=1)",
    "mk(3, dtype=torch.float32, device='cpu', low=float('nan'))",
    "mk(3, dtype=torch.int64, device='cpu', low=5, high=5)",
]


@pytest.mark.parametrize("expr", MAKE_TENSOR_ERRORS)
def test_make_tensor_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env)


@pytest.mark.parametrize("expr", [
    "mk(3, dtype=torch.uint8, device='cpu', low=-5, high=-1)",
    "mk(3, dtype=torch.int64, device='cpu', requires_grad=True)",
])
def test_make_tensor_dtype_errors_match_torch(expr: str) -> None:
    """Messages naming a dtype: npgrad spells ``npgrad.uint8`` where torch has ``torch.uint8``."""
    assert _outcome(npgrad, expr) == _outcome(torch, expr)
    assert _outcome(npgrad, expr)[0] == "ValueError"


@pytest.mark.parametrize("expr", [
    "mk(2, 3, dtype=torch.float32, device='cpu')", "mk((2, 3), dtype=torch.float64, device='cpu')",
    "mk([4], dtype=torch.int64, device='cpu')", "mk(dtype=torch.uint8, device='cpu')",
    "mk(5, dtype=torch.bool, device='cpu')",
    "mk(2, 2, dtype=torch.float64, device='cpu', requires_grad=True)",
    "mk(3, 4, dtype=torch.float32, device='cpu', noncontiguous=True)",
])
def test_make_tensor_shapes_and_dtypes(expr: str) -> None:
    mine, theirs = _outcome(npgrad, expr), _outcome(torch, expr)
    assert _meta(mine[1]) == _meta(theirs[1])
    assert mine[1].is_contiguous() == theirs[1].is_contiguous()


def test_make_tensor_ranges() -> None:
    npgrad.manual_seed(0)
    mk = npgrad.testing.make_tensor
    f = mk(1000, dtype=npgrad.float32, device="cpu").numpy()
    assert f.min() >= -9 and f.max() < 9
    i = mk(1000, dtype=npgrad.int64, device="cpu", low=-2, high=3).numpy()
    assert set(i.tolist()) == {-2, -1, 0, 1, 2}
    u = mk(1000, dtype=npgrad.uint8, device="cpu").numpy()
    assert u.min() >= 0 and u.max() < 10
    nz = mk(1000, dtype=npgrad.int64, device="cpu", low=0, high=2, exclude_zero=True).numpy()
    assert set(nz.tolist()) == {1}


# -- torch.special, logit, sinc, entr ----------------------------------------------------

SPECIAL_VALUES = np.array([0.0, 0.25, 0.5, 1.0, 1.5, -0.5, 1e-8, 0.999])


@pytest.mark.parametrize("call", [
    "torch.logit(x)", "torch.logit(x, eps=0.1)", "torch.logit(x, 0.3)", "torch.logit(x, 0.6)",
    "torch.logit(x, -0.1)", "x.logit(0.2)", "torch.special.logit(x, eps=None)",
    "torch.sinc(x)", "x.sinc()", "torch.special.sinc(x)", "torch.special.entr(x)",
    "torch.special.expit(x)", "torch.special.exp2(x)", "torch.special.expm1(x)",
    "torch.special.log1p(x)", "torch.special.erf(x)", "torch.special.erfc(x)",
    "torch.special.xlogy(x, 2.)", "torch.special.xlogy(2., x)",
    "torch.special.softmax(x, 0)", "torch.special.log_softmax(x, 0)",
    "torch.special.softmax(x, 0, dtype=torch.float64)", "torch.special.logsumexp(x, 0)",
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_gradients_and_grad_fn_match_torch(call: str, dtype: str) -> None:
    results = []
    for m in (npgrad, torch):
        x = m.tensor(SPECIAL_VALUES, dtype=getattr(m, dtype), requires_grad=True)
        with np.errstate(all="ignore"):
            y = eval(call, {"torch": m, "x": x})
            (g,) = m.autograd.grad(y.sum(), x)
        results.append((y.detach().numpy().copy(), str(y.dtype).split(".")[-1],
                        type(y.grad_fn).__name__, g.numpy().copy()))
    (my_y, my_dt, my_fn, my_g), (th_y, th_dt, th_fn, th_g) = results
    assert (my_dt, my_fn) == (th_dt, th_fn)
    tol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(my_y, th_y, rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_allclose(my_g, th_g, rtol=tol * 10, atol=tol, equal_nan=True)


@pytest.mark.parametrize("call", [
    "torch.logit(torch.tensor([0, 1, 2]))", "torch.sinc(torch.tensor([0, 1, 2]))",
    "torch.special.entr(torch.tensor([0, 1, 2]))",
    "torch.special.entr(torch.tensor([math.inf, math.nan, -math.inf]))",
])
def test_special_integer_and_extreme_inputs(call: str) -> None:
    with np.errstate(all="ignore"):
        mine = eval(call, {"torch": npgrad, "math": math})
        theirs = eval(call, {"torch": torch, "math": math})
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("fn", [
    lambda x: npgrad.logit(x),
    lambda x: npgrad.logit(x, eps=0.05),
    lambda x: npgrad.sinc(x),
    lambda x: npgrad.special.entr(x),
])
def test_special_gradcheck(fn) -> None:
    x = npgrad.tensor([0.1, 0.3, 0.45, 0.7, 0.93], dtype=npgrad.float64, requires_grad=True)
    assert npgrad.autograd.gradcheck(fn, (x,))
    assert npgrad.autograd.gradgradcheck(fn, (x,))


# -- Variable -------------------------------------------------------------------------------

VARIABLE = [
    "Variable(T([1., 2.]), requires_grad=True)", "Variable(T([1., 2.]))", "Variable()",
    "Variable(T([1., 2.]), True)", "Variable(T([1., 2.]), requires_grad=1)",
    "Variable(torch.tensor([1.], requires_grad=True) * 2)",
]


@pytest.mark.parametrize("expr", VARIABLE)
def test_variable_returns_a_tensor_like_torch(expr: str) -> None:
    mine, theirs = _outcome(npgrad, expr), _outcome(torch, expr)
    assert type(mine[1]) is npgrad.Tensor
    assert _meta(mine[1]) == _meta(theirs[1])
    assert mine[1].is_leaf and mine[1].tolist() == theirs[1].tolist()


@pytest.mark.parametrize("expr", [
    "Variable([1., 2.])", "Variable(1.0)", "Variable(T([1, 2]), requires_grad=True)",
    "Variable(T([1.]), requires_grad=True, foo=1)",
])
def test_variable_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env)


def test_variable_shares_data_and_isinstance() -> None:
    t = npgrad.tensor([1., 2.])
    v = npgrad.autograd.Variable(t, requires_grad=True)
    assert v is not t and not t.requires_grad
    with npgrad.no_grad():
        v[0] = 5.0
    assert t[0].item() == 5.0
    assert isinstance(t, npgrad.autograd.Variable)
    assert not isinstance(1.0, npgrad.autograd.Variable)
    with pytest.warns(UserWarning, match="volatile was removed"):
        npgrad.autograd.Variable(t, volatile=True)


@pytest.mark.parametrize("call", ["torch.logit(x)", "torch.logit(x, 0.4)", "torch.sinc(x)",
                                  "torch.special.entr(x)", "torch.bernoulli(x)",
                                  "torch.normal(x, 1.0)", "torch.poisson(x)",
                                  "(x * 1).exponential_()", "(x * 1).bernoulli_(x)",
                                  "(x * 1).random_(3)"])
def test_forward_mode_tangents_match_torch(call: str) -> None:
    tangents = []
    for m in (npgrad, torch):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(m.tensor([0.3, 0.6], dtype=m.float64),
                               m.tensor([1., 2.], dtype=m.float64))
            tangents.append(fwad.unpack_dual(eval(call, {"torch": m, "x": x})).tangent.tolist())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-12)


def test_broadcast_normal_gradients_take_input_shapes() -> None:
    mean = npgrad.zeros(3, requires_grad=True)
    std = npgrad.ones(3, 1, requires_grad=True)
    y = npgrad.normal(mean, std)
    assert tuple(y.shape) == (3, 3)
    gm, gs = npgrad.autograd.grad(y.sum(), (mean, std))
    assert (tuple(gm.shape), tuple(gs.shape)) == ((3,), (3, 1))
    assert gm.abs().sum().item() == gs.abs().sum().item() == 0
