"""optim.LBFGS against torch's: parameter trajectories on the Rosenbrock function (bit for bit
where torch's arithmetic is reproduced), a least-squares fit, state, errors, and closures."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")


def rosenbrock(w):
    return (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2


def trajectory(lib, dtype, line_search, lr=1, history=100, x0=(-1.5, 2.0), steps=5,
               max_iter=20):
    w = lib.tensor(list(x0), dtype=getattr(lib, dtype), requires_grad=True)
    opt = lib.optim.LBFGS([w], lr=lr, history_size=history, max_iter=max_iter,
                          line_search_fn=line_search)
    losses = []

    def closure():
        opt.zero_grad()
        loss = rosenbrock(w)
        loss.backward()
        return loss

    points = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            losses.append(float(opt.step(closure)))
            points.append(w.detach().numpy().copy())
    state = opt.state[w]
    return np.array(points), losses, state["func_evals"], state["n_iter"]


# Configurations whose every operation npgrad rounds as torch's CPU kernels do.
EXACT = [
    ("float64", None, 1, 100, (-1.5, 2.0)), ("float64", None, 0.5, 3, (0.0, 0.0)),
    ("float64", None, 0.1, 5, (2.0, -1.0)), ("float64", "strong_wolfe", 1, 100, (-1.5, 2.0)),
    ("float64", "strong_wolfe", 1, 100, (2.0, -1.0)),
    ("float64", "strong_wolfe", 0.5, 3, (0.0, 0.0)),
    ("float32", None, 1, 100, (-1.5, 2.0)), ("float32", None, 0.5, 3, (2.0, -1.0)),
    ("float32", "strong_wolfe", 1, 100, (0.0, 0.0)),
    ("float32", "strong_wolfe", 0.5, 3, (-1.5, 2.0)),
]


@pytest.mark.parametrize("dtype,line_search,lr,history,x0", EXACT)
def test_rosenbrock_trajectory_bit_for_bit(dtype, line_search, lr, history, x0):
    mine = trajectory(npgrad, dtype, line_search, lr, history, x0)
    theirs = trajectory(torch, dtype, line_search, lr, history, x0)
    np.testing.assert_array_equal(mine[0], theirs[0])
    assert mine[1] == theirs[1]
    assert mine[2:] == theirs[2:]  # function evaluations and iterations


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("max_iter", [1, 2, 3, 7])
def test_short_steps_follow_torch(line_search, max_iter):
    # max_eval = max_iter * 5 // 4 also bounds the line search (max_iter=1 allows none)
    mine = trajectory(npgrad, "float64", line_search, steps=3, max_iter=max_iter)
    theirs = trajectory(torch, "float64", line_search, steps=3, max_iter=max_iter)
    np.testing.assert_array_equal(mine[0], theirs[0])
    assert mine[2:] == theirs[2:]


def test_rosenbrock_reaches_the_minimum():
    points, losses, _, _ = trajectory(npgrad, "float64", "strong_wolfe", steps=6)
    np.testing.assert_allclose(points[-1], [1.0, 1.0], atol=1e-5)
    assert losses[0] == 12.5


def test_least_squares_with_a_model_matches_torch():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.01 * rng.standard_normal(20)
    results = []
    for lib in (npgrad, torch):
        model = lib.nn.Linear(3, 1).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.1, 0.2, 0.3]], dtype=lib.float64))
            model.bias.zero_()
        opt = lib.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe", max_iter=50)
        xs, ys = lib.tensor(X), lib.tensor(y).reshape(-1, 1)

        def closure():
            opt.zero_grad()
            loss = ((model(xs) - ys) ** 2).mean()
            loss.backward()
            return loss

        opt.step(closure)
        results.append(np.concatenate([model.weight.detach().numpy().ravel(),
                                       model.bias.detach().numpy()]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(results[0], [1.0, -2.0, 0.5, 0.3], atol=0.02)


def test_state_keys_and_values():
    states = []
    for lib in (npgrad, torch):
        w = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([w], max_iter=4)

        def closure():
            opt.zero_grad()
            loss = rosenbrock(w)
            loss.backward()
            return loss

        opt.step(closure)
        states.append(opt.state[w])
    mine, theirs = states
    assert sorted(mine) == sorted(theirs)
    for key in ("func_evals", "n_iter", "prev_loss"):
        assert mine[key] == theirs[key]
    def value(v):
        return np.asarray(v.numpy() if hasattr(v, "numpy") else v)

    for key in ("d", "prev_flat_grad", "t", "H_diag"):
        np.testing.assert_array_equal(value(mine[key]), value(theirs[key]))
    assert len(mine["old_dirs"]) == len(theirs["old_dirs"])


def test_converged_start_returns_at_once():
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        opt = lib.optim.LBFGS([w])
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = rosenbrock(w)
            loss.backward()
            return loss

        loss = opt.step(closure)
        assert float(loss) == 0.0 and len(calls) == 1
        assert opt.state[w]["n_iter"] == 0


def test_parameters_without_grad_count_as_zero():
    a = npgrad.tensor([3.0], requires_grad=True)
    b = npgrad.tensor([5.0], requires_grad=True)  # never used: its gradient stays None
    opt = npgrad.optim.LBFGS([a, b], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (a ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert abs(a.item()) < 1e-6 and b.item() == 5.0


def test_errors():
    w = npgrad.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        npgrad.optim.LBFGS([{"params": [w]}, {"params": [npgrad.ones(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        npgrad.optim.LBFGS([w], lr=-1)
    opt = npgrad.optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (w * 3).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    assert npgrad.optim.LBFGS([w]).defaults["max_eval"] == torch.optim.LBFGS(
        [torch.ones(1, requires_grad=True)]).defaults["max_eval"] == 25
