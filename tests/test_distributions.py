"""npgrad.distributions: values, gradients, samples, reprs and errors (torch as the oracle).

The torch-free tests at the bottom check hand-derived values and sample statistics,
so the file still tests something where torch is not installed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import npgrad

try:
    import torch
except ImportError:  # pragma: no cover - the oracle tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")

RTOL = 1e-10


def t64(lib, data, requires_grad=False):
    return lib.tensor(data, dtype=lib.float64, requires_grad=requires_grad)


# Each case: (params as nested lists, constructor, a value to score).  Parameters are
# float64 leaves that require grad, so log_prob/entropy gradients can be compared.
CASES = {
    "Normal": ({"loc": [0.3, -1.2, 2.0], "scale": [0.5, 1.0, 2.5]},
               lambda D, p: D.Normal(p["loc"], p["scale"]), [0.1, -3.0, 4.0]),
    "Normal-broadcast": ({"loc": [[0.0], [1.0]], "scale": [0.5, 2.0, 3.0]},
                         lambda D, p: D.Normal(p["loc"], p["scale"]), [0.5, 0.0, -1.0]),
    "Bernoulli-probs": ({"probs": [0.1, 0.5, 0.9, 0.3]},
                        lambda D, p: D.Bernoulli(probs=p["probs"]), [0.0, 1.0, 1.0, 0.0]),
    "Bernoulli-logits": ({"logits": [-2.0, 0.0, 3.0]},
                         lambda D, p: D.Bernoulli(logits=p["logits"]), [1.0, 0.0, 1.0]),
    "Categorical-probs": ({"probs": [[0.2, 0.3, 0.5], [1.0, 2.0, 1.0]]},
                          lambda D, p: D.Categorical(probs=p["probs"]), [2, 0]),
    "Categorical-logits": ({"logits": [[0.5, -1.0, 2.0, 0.0]]},
                           lambda D, p: D.Categorical(logits=p["logits"]), [[3], [1]]),
    "OneHotCategorical": ({"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
                          lambda D, p: D.OneHotCategorical(probs=p["probs"]),
                          [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    "Uniform": ({"low": [0.0, -2.0], "high": [1.0, 3.0]},
                lambda D, p: D.Uniform(p["low"], p["high"]), [0.25, 2.5]),
    "Exponential": ({"rate": [0.5, 2.0, 4.0]},
                    lambda D, p: D.Exponential(p["rate"]), [0.3, 0.0, 2.0]),
    "Laplace": ({"loc": [0.0, 1.0], "scale": [1.0, 0.3]},
                lambda D, p: D.Laplace(p["loc"], p["scale"]), [0.7, -1.0]),
    "Independent-Normal": ({"loc": [[0.0, 1.0, 2.0], [1.0, 0.5, -1.0]],
                            "scale": [[1.0, 2.0, 0.5], [0.7, 1.0, 1.5]]},
                           lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                           [[0.1, 0.2, 0.3], [-1.0, 0.0, 1.0]]),
    "MVN-covariance": ({"loc": [[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]],
                        "covariance_matrix": [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2],
                                              [0.1, -0.2, 0.5]]},
                       lambda D, p: D.MultivariateNormal(p["loc"], p["covariance_matrix"]),
                       [[[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]], [[-1.0, 0.5, 0.2],
                                                             [0.3, 0.3, 0.3]]]),
    "MVN-precision": ({"loc": [1.0, -1.0],
                       "precision_matrix": [[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 4.0]]]},
                      lambda D, p: D.MultivariateNormal(p["loc"],
                                                        precision_matrix=p["precision_matrix"]),
                      [[0.0, 0.5], [2.0, -2.0]]),
    "MVN-scale_tril": ({"loc": [0.0, 1.0, 2.0],
                        "scale_tril": [[1.5, 0.0, 0.0], [0.4, 0.8, 0.0], [-0.2, 0.1, 2.0]]},
                       lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]),
                       [0.3, 0.2, 0.1]),
}
# a value tensor's dtype: Categorical scores indices
INT_VALUES = {"Categorical-probs", "Categorical-logits"}


def build(lib, key):
    raw, ctor, value = CASES[key]
    params = {name: t64(lib, data, requires_grad=True) for name, data in raw.items()}
    dist = ctor(lib.distributions, params)
    value = lib.tensor(value) if key in INT_VALUES else t64(lib, value)
    return dist, params, value


def to_np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def assert_close(a, b, rtol=RTOL):
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=rtol, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("key", sorted(CASES))
@pytest.mark.parametrize("quantity", ["log_prob", "entropy", "mean", "variance", "stddev",
                                      "mode", "batch_shape", "event_shape"])
def test_values_match_torch(key, quantity):
    results = []
    for lib in (npgrad, torch):
        dist, _, value = build(lib, key)
        if quantity == "log_prob":
            out = dist.log_prob(value)
        elif quantity == "entropy":
            out = dist.entropy()
        else:
            out = getattr(dist, quantity)
        results.append(out)
    ours, theirs = results
    if quantity.endswith("shape"):
        assert tuple(ours) == tuple(theirs)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert_close(ours, theirs)


@needs_torch
@pytest.mark.parametrize("key", sorted(CASES))
@pytest.mark.parametrize("quantity", ["log_prob", "entropy"])
def test_gradients_match_torch(key, quantity):
    grads = []
    for lib in (npgrad, torch):
        dist, params, value = build(lib, key)
        out = dist.log_prob(value) if quantity == "log_prob" else dist.entropy()
        weights = lib.arange(1, out.numel() + 1, dtype=lib.float64).reshape(out.shape)
        (out * weights).sum().backward()
        grads.append({name: p.grad for name, p in params.items()})
    for name in grads[1]:
        if grads[1][name] is None:
            assert grads[0][name] is None
        else:
            assert_close(grads[0][name], grads[1][name])


KL_CASES = {
    "Normal": (lambda D, p: D.Normal(p["a"], p["b"]), {"a": [0.0, 1.0], "b": [1.0, 0.5]},
               {"a": [0.5, -1.0], "b": [2.0, 0.3]}),
    "Bernoulli": (lambda D, p: D.Bernoulli(probs=p["a"]), {"a": [0.1, 0.5, 0.8]},
                  {"a": [0.3, 0.5, 0.2]}),
    "Bernoulli-logits": (lambda D, p: D.Bernoulli(logits=p["a"]), {"a": [-1.0, 2.0]},
                         {"a": [0.5, 0.0]}),
    "Categorical": (lambda D, p: D.Categorical(probs=p["a"]),
                    {"a": [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]},
                    {"a": [[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]]}),
    "Categorical-logits": (lambda D, p: D.Categorical(logits=p["a"]), {"a": [1.0, 0.0, -2.0]},
                           {"a": [0.0, 0.5, 0.5]}),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(probs=p["a"]), {"a": [0.5, 0.5]},
                          {"a": [0.9, 0.1]}),
    "Exponential": (lambda D, p: D.Exponential(p["a"]), {"a": [1.0, 3.0]}, {"a": [2.0, 0.5]}),
    "Independent": (lambda D, p: D.Independent(D.Normal(p["a"], 1.0), 1), {"a": [0.0, 1.0]},
                    {"a": [1.0, 3.0]}),
    "MultivariateNormal": (lambda D, p: D.MultivariateNormal(p["a"][0], scale_tril=p["a"][1:]),
                           {"a": [[0.5, -1.0], [1.0, 0.0], [0.3, 2.0]]},
                           {"a": [[0.0, 1.0], [2.0, 0.0], [-0.5, 0.7]]}),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(KL_CASES))
def test_kl_divergence_matches_torch(key):
    ctor, raw_p, raw_q = KL_CASES[key]
    results = []
    for lib in (npgrad, torch):
        pp = {k: t64(lib, v, requires_grad=True) for k, v in raw_p.items()}
        qq = {k: t64(lib, v, requires_grad=True) for k, v in raw_q.items()}
        kl = lib.distributions.kl_divergence(ctor(lib.distributions, pp),
                                             ctor(lib.distributions, qq))
        kl.sum().backward()
        results.append((kl, pp["a"].grad, qq["a"].grad))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


@needs_torch
def test_kl_zero_probabilities_match_torch():
    results = []
    for lib in (npgrad, torch):
        D = lib.distributions
        p = D.Categorical(probs=t64(lib, [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]))
        q = D.Categorical(probs=t64(lib, [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]))
        b = D.kl_divergence(D.Bernoulli(t64(lib, [0.0, 1.0, 0.5])),
                            D.Bernoulli(t64(lib, [0.5, 0.5, 1.0])))
        results.append((D.kl_divergence(p, q), b))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


# -- reparameterised samples ----------------------------------------------------------------

def _rsample_grads(make, names):
    params = {n: t64(npgrad, v, requires_grad=True) for n, v in names.items()}
    dist = make(npgrad.distributions, params)
    npgrad.manual_seed(3)
    x = dist.rsample((5,))
    x.sum().backward()
    return dist, params, x.detach()


def test_normal_rsample_gradient_is_the_noise():
    dist, p, x = _rsample_grads(lambda D, p: D.Normal(p["loc"], p["scale"]),
                                {"loc": [0.0, 2.0], "scale": [1.0, 3.0]})
    eps = (x - p["loc"].detach()) / p["scale"].detach()
    assert_close(p["loc"].grad, [5.0, 5.0])
    assert_close(p["scale"].grad, eps.sum(0))


def test_uniform_rsample_gradient():
    dist, p, x = _rsample_grads(lambda D, p: D.Uniform(p["low"], p["high"]),
                                {"low": [0.0, -1.0], "high": [1.0, 3.0]})
    u = (x - p["low"].detach()) / (p["high"] - p["low"]).detach()
    assert_close(p["low"].grad, (1 - u).sum(0))
    assert_close(p["high"].grad, u.sum(0))


def test_exponential_rsample_gradient():
    dist, p, x = _rsample_grads(lambda D, p: D.Exponential(p["rate"]), {"rate": [0.5, 2.0]})
    assert_close(p["rate"].grad, (-x / p["rate"].detach()).sum(0))


def test_laplace_rsample_gradient():
    dist, p, x = _rsample_grads(lambda D, p: D.Laplace(p["loc"], p["scale"]),
                                {"loc": [0.0, 1.0], "scale": [2.0, 0.5]})
    assert_close(p["loc"].grad, [5.0, 5.0])
    assert_close(p["scale"].grad, ((x - p["loc"].detach()) / p["scale"].detach()).sum(0))


@needs_torch
def test_rsample_matches_torch_given_the_same_noise():
    # torch's rsample is loc + eps * scale: feed our draw's noise to that formula in torch
    loc = t64(npgrad, [0.5, -1.0], requires_grad=True)
    scale = t64(npgrad, [2.0, 0.1], requires_grad=True)
    x = npgrad.distributions.Normal(loc, scale).rsample((3,))
    (x ** 2).sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    tl = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    ts = torch.tensor([2.0, 0.1], dtype=torch.float64, requires_grad=True)
    tx = tl + torch.from_numpy(eps.numpy()) * ts
    (tx ** 2).sum().backward()
    assert_close(x, tx)
    assert_close(loc.grad, tl.grad)
    assert_close(scale.grad, ts.grad)


@needs_torch
def test_mvn_rsample_matches_torch_given_the_same_noise():
    # torch's rsample is loc + L @ eps: solve our draw for eps, then compare gradients
    cov = [[2.0, 0.6], [0.6, 1.0]]
    loc = t64(npgrad, [0.5, -1.0], requires_grad=True)
    c = t64(npgrad, cov, requires_grad=True)
    d = npgrad.distributions.MultivariateNormal(loc, c)
    x = d.rsample((4,))
    (x ** 3).sum().backward()
    lower = np.linalg.cholesky(np.asarray(cov))
    eps = np.linalg.solve(lower, (x.detach().numpy() - [0.5, -1.0]).T).T
    tl = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    tc = torch.tensor(cov, dtype=torch.float64, requires_grad=True)
    tx = tl + (torch.linalg.cholesky(tc) @ torch.from_numpy(eps).unsqueeze(-1)).squeeze(-1)
    (tx ** 3).sum().backward()
    assert_close(x, tx, rtol=1e-9)
    assert_close(loc.grad, tl.grad, rtol=1e-9)
    assert_close(c.grad, tc.grad, rtol=1e-9)


@needs_torch
def test_mvn_derived_matrices_match_torch():
    cov = [[[2.0, 0.6], [0.6, 1.0]], [[1.0, -0.2], [-0.2, 0.5]]]
    found = []
    for lib in (npgrad, torch):
        d = lib.distributions.MultivariateNormal(t64(lib, [0.0, 1.0]), t64(lib, cov))
        found.append([d.scale_tril, d.precision_matrix, d.covariance_matrix, d.variance,
                      d.batch_shape, d.event_shape, d.expand((3, 2)).covariance_matrix])
    for ours, theirs in zip(*found):
        if isinstance(theirs, torch.Size):
            assert tuple(ours) == tuple(theirs)
        else:
            assert_close(ours, theirs)


def test_sample_has_no_gradient_and_rsample_has():
    loc = npgrad.zeros(2, requires_grad=True)
    d = npgrad.distributions.Normal(loc, 1.0)
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad


def test_reinforce_gradient():
    # -(log_prob(a) * advantage).sum(): d/dlogits = -(onehot(a) - softmax) * adv
    logits = t64(npgrad, [[0.2, -0.5, 1.0], [0.0, 0.0, 0.0]], requires_grad=True)
    dist = npgrad.distributions.Categorical(logits=logits)
    actions = npgrad.tensor([2, 0])
    adv = t64(npgrad, [1.5, -0.5])
    (-(dist.log_prob(actions) * adv).sum()).backward()
    probs = np.exp(logits.detach().numpy())
    probs /= probs.sum(-1, keepdims=True)
    expected = -(np.eye(3)[[2, 0]] - probs) * np.array([[1.5], [-0.5]])
    assert_close(logits.grad, expected)


# -- sample shapes, dtypes and statistics --------------------------------------------------

SAMPLERS = {
    "Normal": (lambda D, b: D.Normal(npgrad.zeros(b), npgrad.ones(b)), "float32", ()),
    "Bernoulli": (lambda D, b: D.Bernoulli(npgrad.full(b, 0.3)), "float32", ()),
    "Categorical": (lambda D, b: D.Categorical(logits=npgrad.zeros(*b, 4)), "int64", ()),
    "OneHotCategorical": (lambda D, b: D.OneHotCategorical(probs=npgrad.ones(*b, 4)),
                          "float32", (4,)),
    "Uniform": (lambda D, b: D.Uniform(npgrad.zeros(b), 2.0), "float32", ()),
    "Exponential": (lambda D, b: D.Exponential(npgrad.ones(b, dtype=npgrad.float64)),
                    "float64", ()),
    "Laplace": (lambda D, b: D.Laplace(npgrad.zeros(b), 1.0), "float32", ()),
    "Independent": (lambda D, b: D.Independent(D.Normal(npgrad.zeros(*b, 3), 1.0), 1),
                    "float32", (3,)),
    "MultivariateNormal": (lambda D, b: D.MultivariateNormal(npgrad.zeros(*b, 2),
                                                             2 * npgrad.eye(2)),
                           "float32", (2,)),
}


@pytest.mark.parametrize("key", sorted(SAMPLERS))
@pytest.mark.parametrize("batch", [(), (2,), (3, 2)])
@pytest.mark.parametrize("sample_shape", [(), (5,), (4, 1), npgrad.Size([2, 3])])
def test_sample_shapes_and_dtypes(key, batch, sample_shape):
    make, dtype, event = SAMPLERS[key]
    dist = make(npgrad.distributions, batch)
    x = dist.sample(sample_shape)
    assert tuple(x.shape) == tuple(sample_shape) + tuple(dist.batch_shape) + event
    assert str(x.dtype) == f"npgrad.{dtype}"
    assert dist.log_prob(x).shape == x.shape[:x.dim() - len(event)]


def test_expand_batch_shape():
    D = npgrad.distributions
    for dist in [D.Normal(0.0, 1.0), D.Bernoulli(0.3), D.Uniform(0.0, 1.0),
                 D.Exponential(1.0), D.Laplace(0.0, 1.0),
                 D.Categorical(probs=npgrad.tensor([0.5, 0.5])),
                 D.OneHotCategorical(probs=npgrad.tensor([0.5, 0.5]))]:
        expanded = dist.expand((3, 2))
        assert tuple(expanded.batch_shape) == (3, 2)
        assert tuple(expanded.event_shape) == tuple(dist.event_shape)
        assert tuple(expanded.sample().shape) == (3, 2) + tuple(dist.event_shape)
        assert type(expanded) is type(dist)


N = 20000


def _check_mean(samples, mean, var):
    # the sample mean lies within 4 standard errors of the true mean
    sample_mean = samples.double().mean(0)
    bound = 4 * np.sqrt(np.asarray(var) / samples.shape[0])
    assert np.all(np.abs(sample_mean.numpy() - np.asarray(mean)) < bound)


@pytest.mark.parametrize("key,make,mean,var", [
    ("Normal", lambda D: D.Normal(npgrad.tensor([0.0, 3.0]), npgrad.tensor([1.0, 0.5])),
     [0.0, 3.0], [1.0, 0.25]),
    ("Bernoulli", lambda D: D.Bernoulli(npgrad.tensor([0.1, 0.5, 0.9])),
     [0.1, 0.5, 0.9], [0.09, 0.25, 0.09]),
    ("Uniform", lambda D: D.Uniform(-1.0, 3.0), 1.0, 16 / 12),
    ("Exponential", lambda D: D.Exponential(npgrad.tensor([0.5, 4.0])), [2.0, 0.25],
     [4.0, 1 / 16]),
    ("Laplace", lambda D: D.Laplace(1.0, 2.0), 1.0, 8.0),
    ("OneHotCategorical", lambda D: D.OneHotCategorical(probs=npgrad.tensor([0.2, 0.3, 0.5])),
     [0.2, 0.3, 0.5], [0.16, 0.21, 0.25]),
    ("MultivariateNormal", lambda D: D.MultivariateNormal(
        npgrad.tensor([1.0, -2.0]), npgrad.tensor([[2.0, 0.8], [0.8, 1.0]])),
     [1.0, -2.0], [2.0, 1.0]),
])
def test_sample_statistics(key, make, mean, var):
    npgrad.manual_seed(1234)
    dist = make(npgrad.distributions)
    _check_mean(dist.sample((N,)), mean, var)
    if dist.has_rsample:
        _check_mean(dist.rsample((N,)).detach(), mean, var)


def test_categorical_sample_frequencies():
    npgrad.manual_seed(7)
    probs = [0.1, 0.0, 0.6, 0.3]
    draws = npgrad.distributions.Categorical(probs=npgrad.tensor(probs)).sample((N,)).numpy()
    freq = np.bincount(draws, minlength=4) / N
    p = np.asarray(probs)
    assert freq[1] == 0.0  # a zero-probability category is never drawn
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / N) + 1e-12)


def test_samples_repeat_with_the_seed():
    d = npgrad.distributions.Normal(npgrad.zeros(3), 1.0)
    npgrad.manual_seed(5)
    a = d.sample((2,))
    npgrad.manual_seed(5)
    b = d.sample((2,))
    assert np.array_equal(a.numpy(), b.numpy())


# -- reprs and errors ----------------------------------------------------------------------

REPRS = [
    "D.Normal(0., 1.)",
    "D.Normal(lib.zeros(2), 1.)",
    "D.Normal(lib.tensor([0.5]), lib.tensor([2.0]))",
    "D.Bernoulli(probs=lib.tensor([0.3]))",
    "D.Bernoulli(logits=lib.zeros(2, 3))",
    "D.Bernoulli(0.25)",
    "D.Categorical(probs=lib.ones(3))",
    "D.Categorical(logits=lib.zeros(2, 5))",
    "D.Uniform(0., 2.)",
    "D.Exponential(lib.ones(2))",
    "D.Laplace(0., 1.)",
    "D.Independent(D.Normal(lib.zeros(2, 3), 1.), 1)",
    "D.OneHotCategorical(logits=lib.zeros(4))",
    "D.constraints.independent(D.constraints.positive, 2)",
    "D.constraints.integer_interval(0, 4)",
    "D.Uniform(0., 1.).support",
    "D.Exponential(1.).support",
    "D.MultivariateNormal(lib.zeros(2), lib.eye(2))",
    "D.MultivariateNormal(lib.zeros(3, 2), scale_tril=lib.eye(2))",
    "D.constraints.positive_definite",
    "D.constraints.lower_cholesky",
]


@needs_torch
@pytest.mark.parametrize("expr", REPRS)
def test_reprs_match_torch(expr):
    found = [repr(eval(expr, {"lib": lib, "D": lib.distributions})) for lib in (npgrad, torch)]
    assert found[0] == found[1]


ERRORS = [
    "D.Normal(0., -1.)",
    "D.Normal(lib.zeros(2), lib.tensor([1., 0.]))",
    "D.Normal(0., 1.).log_prob(lib.tensor(float('nan')))",
    "D.Normal(0., 1.).log_prob(3)",
    "D.Normal(lib.zeros(3), 1.).log_prob(lib.zeros(2))",
    "D.Normal('a', 1.)",
    "D.Bernoulli(probs=lib.tensor(1.5))",
    "D.Bernoulli(probs=0.5).log_prob(lib.tensor(0.5))",
    "D.Bernoulli(0.5, logits=0.)",
    "D.Bernoulli()",
    "D.Bernoulli(logits=float('nan'))",
    "D.Categorical(probs=lib.tensor([-1., 2.]))",
    "D.Categorical(probs=lib.tensor([0.2, 0.8])).log_prob(lib.tensor(3))",
    "D.Categorical(probs=lib.tensor(0.5))",
    "D.Categorical(logits=lib.tensor(0.5))",
    "D.Categorical(logits=lib.tensor([float('nan'), 1.]))",
    "D.Categorical()",
    "D.OneHotCategorical(probs=lib.tensor([0.5, 0.5])).log_prob(lib.tensor([1., 1.]))",
    "D.OneHotCategorical(probs=lib.tensor([0.5, 0.5])).log_prob(lib.tensor([1., 0., 0.]))",
    "D.Uniform(1., 0.)",
    "D.Uniform(0., 1.).log_prob(lib.tensor(2.))",
    "D.Exponential(-1.)",
    "D.Exponential(1.).log_prob(lib.tensor(-1.))",
    "D.Laplace(0., lib.tensor([1., 0.]))",
    "D.Independent(D.Normal(0., 1.), 1)",
    "D.kl_divergence(D.Categorical(lib.ones(2)), D.Laplace(0., 1.))",
    "D.Distribution(validate_args=False).mean",
    "D.Distribution.set_default_validate_args(2)",
    "D.MultivariateNormal(lib.tensor(0.), lib.eye(2))",
    "D.MultivariateNormal(lib.zeros(2))",
    "D.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2))",
    "D.MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2))",
    "D.MultivariateNormal(lib.zeros(2), lib.ones(2))",
    "D.MultivariateNormal(lib.zeros(2), precision_matrix=lib.ones(2))",
    "D.MultivariateNormal(lib.zeros(2), lib.tensor([[1., 2.], [2., 1.]]))",
    "D.MultivariateNormal(lib.zeros(2), lib.tensor([[1., 0.5], [0., 1.]]))",
    "D.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1., 0.5], [0., 1.]]))",
    "D.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1., 0.], [0., -1.]]))",
    "D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3))",
    "D.MultivariateNormal(lib.zeros(3, 2), lib.eye(2)).log_prob(lib.zeros(2, 2))",
    "D.kl_divergence(D.MultivariateNormal(lib.zeros(2), lib.eye(2)), "
    "D.MultivariateNormal(lib.zeros(3), lib.eye(3)))",
]


def _error(expr, lib):
    try:
        eval(expr, {"lib": lib, "D": lib.distributions})
    except Exception as exc:  # noqa: BLE001 - the type is compared
        return type(exc).__name__, str(exc)
    return None


@needs_torch
@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    ours, theirs = _error(expr, npgrad), _error(expr, torch)
    assert ours is not None
    assert ours == theirs


@needs_torch
def test_validate_args_false_skips_checks():
    for lib in (npgrad, torch):
        D = lib.distributions
        d = D.Normal(0.0, -1.0, validate_args=False)
        assert math.isnan(float(d.log_prob(lib.tensor(0.0))))
        assert float(D.Uniform(0.0, 1.0, validate_args=False).log_prob(lib.tensor(2.0))) \
            == -math.inf


def test_set_default_validate_args():
    D = npgrad.distributions
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_custom_kl_registration_prefers_the_closest_rule():
    D = npgrad.distributions

    class Narrow(D.Normal):
        pass

    @D.register_kl(Narrow, D.Normal)
    def _kl(p, q):
        return npgrad.tensor(-1.0)

    assert float(D.kl_divergence(Narrow(0.0, 1.0), D.Normal(0.0, 1.0))) == -1.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), Narrow(0.0, 1.0))) == 0.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# -- hand-derived values (no torch needed) -------------------------------------------------

def test_hand_derived_values():
    D = npgrad.distributions
    t = lambda x: npgrad.tensor(x, dtype=npgrad.float64)  # noqa: E731
    half_log_2pi = 0.5 * math.log(2 * math.pi)
    assert float(D.Normal(t(0.0), 1.0).log_prob(t(0.0))) == pytest.approx(-half_log_2pi,
                                                                         rel=1e-15)
    assert float(D.Normal(t(1.0), 2.0).log_prob(t(3.0))) == pytest.approx(
        -0.5 - math.log(2.0) - half_log_2pi, rel=1e-15)
    assert float(D.Normal(t(0.0), 1.0).entropy()) == pytest.approx(0.5 + half_log_2pi)
    assert float(D.Normal(t(0.0), 1.0).cdf(t(0.0))) == pytest.approx(0.5)
    assert float(D.Bernoulli(t(0.25)).log_prob(t(1.0))) == pytest.approx(math.log(0.25))
    assert float(D.Bernoulli(logits=t(0.0)).entropy()) == pytest.approx(math.log(2))
    assert float(D.Categorical(logits=t([0.0, 0.0, 0.0, 0.0])).entropy()) == pytest.approx(
        math.log(4))
    assert float(D.Uniform(t(1.0), t(5.0)).log_prob(t(2.0))) == pytest.approx(-math.log(4))
    assert float(D.Uniform(t(0.0), t(1.0)).log_prob(t(1.0))) == -math.inf  # high is excluded
    assert float(D.Exponential(t(2.0)).log_prob(t(1.0))) == pytest.approx(math.log(2) - 2)
    assert float(D.Exponential(t(2.0)).entropy()) == pytest.approx(1 - math.log(2))
    assert float(D.Laplace(t(0.0), t(1.0)).log_prob(t(-1.0))) == pytest.approx(-math.log(2) - 1)
    assert float(D.kl_divergence(D.Normal(t(0.0), 1.0), D.Normal(t(1.0), 1.0))) \
        == pytest.approx(0.5)
    assert float(D.kl_divergence(D.Bernoulli(t(0.5)), D.Bernoulli(t(0.5)))) == 0.0
    p = D.Categorical(probs=t([0.5, 0.5]))
    q = D.Categorical(probs=t([0.25, 0.75]))
    assert float(D.kl_divergence(p, q)) == pytest.approx(
        0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75))
    assert float(D.Categorical(probs=t([0.5, 0.0])).log_prob(npgrad.tensor(1))) < -30


def test_mvn_hand_derived_values():
    D = npgrad.distributions
    d = D.MultivariateNormal(npgrad.zeros(2, dtype=npgrad.float64),
                             npgrad.eye(2, dtype=npgrad.float64) * 4)
    # independent N(0, 2^2) coordinates: log N(1; 0, 4) + log N(0; 0, 4)
    expected = -math.log(2 * math.pi) - 2 * math.log(2.0) - 1 / 8
    assert float(d.log_prob(npgrad.tensor([1.0, 0.0], dtype=npgrad.float64))) \
        == pytest.approx(expected, rel=1e-14)
    assert float(d.entropy()) == pytest.approx(1 + math.log(2 * math.pi) + 2 * math.log(2.0))
    assert np.allclose(d.precision_matrix.numpy(), np.eye(2) / 4)


def test_mvn_sample_covariance():
    npgrad.manual_seed(11)
    cov = np.array([[2.0, 0.8], [0.8, 1.0]])
    d = npgrad.distributions.MultivariateNormal(npgrad.zeros(2, dtype=npgrad.float64),
                                                npgrad.tensor(cov))
    x = d.sample((N,)).numpy()
    # sample covariance within 4 standard errors: var(x_i x_j) = S_ii S_jj + S_ij^2
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / N)
    assert np.all(np.abs(np.cov(x.T) - cov) < 4 * se)


def test_categorical_normalises_probs_and_logits():
    D = npgrad.distributions
    d = D.Categorical(probs=npgrad.tensor([[2.0, 6.0], [1.0, 1.0]]))
    assert np.allclose(d.probs.numpy(), [[0.25, 0.75], [0.5, 0.5]])
    d = D.Categorical(logits=npgrad.tensor([1.0, 1.0]))
    assert np.allclose(d.logits.numpy(), [-math.log(2)] * 2)
    assert d.mode.item() == 0 and tuple(d.enumerate_support().shape) == (2,)
