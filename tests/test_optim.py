"""npgrad.optim against torch.optim: trajectories, state dicts, reprs, errors, grad-mode contract.

Every optimizer runs 20 steps from the same initial values on the same losses in
both libraries; halfway, its state dict is loaded into a *fresh* optimizer
(built with default options, so the options must come back from the state dict).
"""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)
INIT = {
    "W": RNG.standard_normal((3, 4)).astype(np.float32),
    "b": RNG.standard_normal(3).astype(np.float32),
    "v": RNG.standard_normal(3).astype(np.float32),
}
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.standard_normal(6).astype(np.float32)
A = RNG.standard_normal((4, 3)).astype(np.float32)
C = RNG.standard_normal(4).astype(np.float32)


def mlp_loss(lib, params):
    W, b, v = params
    h = lib.tanh(lib.tensor(X, dtype=W.dtype) @ W.t() + b)
    return ((h @ v - lib.tensor(Y, dtype=W.dtype)) ** 2).mean() + 0.01 * (W * W).sum()


def quadratic_loss(lib, params):
    _, b, _ = params
    return ((lib.tensor(A, dtype=b.dtype) @ b - lib.tensor(C, dtype=b.dtype)) ** 2).sum()


def make_params(lib, dtype=np.float32):
    return [lib.tensor(INIT[k].astype(dtype), requires_grad=True) for k in ("W", "b", "v")]


def run_pair(name, kwargs, loss_fn=mlp_loss, shared_grads=True, steps=20, reload_at=10,
             groups=None, dtype=np.float32, rtol=2e-5, atol=2e-6):
    """Run one optimizer in npgrad and in torch side by side; compare after every step.

    With ``shared_grads`` the gradient of each step is torch's, copied into npgrad:
    the comparison then measures the optimizers alone (a tanh network amplifies the
    last-bit differences of two autograd implementations over 20 steps).  Without it
    npgrad's own autograd computes the gradients.  Halfway, each optimizer's state
    dict is loaded into a fresh one built with default options.
    """
    libs = (npgrad, torch)
    params = {lib: make_params(lib, dtype) for lib in libs}

    def build(lib, **kw):
        spec = params[lib] if groups is None else groups(params[lib])
        return getattr(lib.optim, name)(spec, **kw)

    opts = {lib: build(lib, **kwargs) for lib in libs}
    for i in range(steps):
        if i == reload_at:
            for lib in libs:
                state = opts[lib].state_dict()
                opts[lib] = build(lib)
                opts[lib].load_state_dict(state)
        for lib in libs:
            opts[lib].zero_grad()
        loss_fn(torch, params[torch]).backward()
        if shared_grads:
            for p, q in zip(params[npgrad], params[torch]):
                p.grad = npgrad.tensor(q.grad.numpy())
        else:
            loss_fn(npgrad, params[npgrad]).backward()
        for lib in libs:
            opts[lib].step()
        for p, q in zip(params[npgrad], params[torch]):
            a, b = p.detach().numpy(), q.detach().numpy()
            assert a.dtype == b.dtype == dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"step {i}")
    return opts[npgrad], opts[torch]


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.01, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1,
             "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-3}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "maximize": True, "betas": (0.5, 0.9)}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.2, "eps": 1e-4}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "lr_decay": 0.01}),
]


def _case_id(case):
    name, kwargs = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


def assert_state_dicts_close(ours, theirs):
    assert set(ours) == {"state", "param_groups"}
    assert ours["param_groups"] == theirs["param_groups"]
    assert list(ours["state"]) == list(theirs["state"])
    for key, state in ours["state"].items():
        other = theirs["state"][key]
        assert list(state) == list(other)
        for name, value in state.items():
            assert type(value).__name__ == "Tensor"
            assert str(value.dtype).split(".")[-1] == str(other[name].dtype).split(".")[-1]
            np.testing.assert_allclose(value.numpy(), other[name].numpy(), rtol=2e-5,
                                       atol=2e-6, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_mlp_trajectory_matches_torch(case):
    name, kwargs = case
    ours, theirs = run_pair(name, kwargs, mlp_loss, shared_grads=True)
    assert_state_dicts_close(ours.state_dict(), theirs.state_dict())


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_quadratic_trajectory_with_npgrad_autograd(case):
    name, kwargs = case
    ours, theirs = run_pair(name, kwargs, quadratic_loss, shared_grads=False)
    assert_state_dicts_close(ours.state_dict(), theirs.state_dict())


def two_groups(params):
    W, b, v = params
    return [{"params": [W, v], "lr": 0.02}, {"params": [b]}]


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"lr": 0.05, "amsgrad": True}),
                                         ("RMSprop", {"lr": 0.01, "centered": True}),
                                         ("Adagrad", {"lr": 0.1})])
def test_param_groups_match_torch(name, kwargs):
    ours, theirs = run_pair(name, kwargs, groups=two_groups)
    assert_state_dicts_close(ours.state_dict(), theirs.state_dict())


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_float64_parameters(name):
    kwargs = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05}
    ours, theirs = run_pair(name, kwargs, dtype=np.float64, rtol=1e-12, atol=1e-14)
    assert_state_dicts_close(ours.state_dict(), theirs.state_dict())


def test_params_without_grad_are_skipped():
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        u = lib.tensor([3.0], requires_grad=True)
        opt = lib.optim.Adam([w, u], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        assert u.tolist() == [3.0]
        assert list(opt.state_dict()["state"]) == [0]


# -- reprs and state dict structure -----------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {}), ("Adam", {"betas": (0.8, 0.9), "amsgrad": True}), ("AdamW", {}),
    ("RMSprop", {}), ("RMSprop", {"centered": True, "momentum": 0.1}), ("Adagrad", {}),
])
def test_repr_matches_torch(name, kwargs):
    reprs = []
    for lib in (npgrad, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.5}], **kwargs)
        reprs.append((repr(opt), opt.defaults, [sorted(g) for g in opt.param_groups]))
    assert reprs[0] == reprs[1]


def test_repr_exact_text():
    opt = npgrad.optim.SGD([npgrad.ones(1, requires_grad=True)], lr=0.1)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
                         "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_structure_before_and_after_step(name):
    dicts = []
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        kwargs = {"lr": 0.1, "momentum": 0.5} if name in ("SGD", "RMSprop") else {"lr": 0.1}
        opt = getattr(lib.optim, name)([w], **kwargs)
        before = opt.state_dict()
        (w * w).sum().backward()
        opt.step()
        after = opt.state_dict()
        dicts.append([(d["param_groups"], {k: {n: (tuple(t.shape), str(t.dtype).split(".")[-1],
                                                   t.tolist())
                                               for n, t in s.items()}
                                           for k, s in d["state"].items()})
                      for d in (before, after)])
    assert dicts[0] == dicts[1]


def test_state_dict_shares_state_tensors_like_torch():
    for lib in (npgrad, torch):
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        w.sum().backward()
        opt.step()
        sd = opt.state_dict()
        assert sd["state"][0]["exp_avg"] is opt.state[w]["exp_avg"]
        fresh = lib.optim.Adam([w], lr=0.5)
        fresh.load_state_dict(sd)
        assert fresh.param_groups[0]["lr"] == 0.1
        assert fresh.param_groups[0]["params"][0] is w
        assert fresh.state[w]["exp_avg"] is sd["state"][0]["exp_avg"]
        # the optimizer's own groups are copies: changing the dict does not reach it
        sd["param_groups"][0]["lr"] = 9.0
        assert fresh.param_groups[0]["lr"] == 0.1


def test_load_state_dict_casts_state_to_param_dtype():
    w64 = npgrad.tensor([1.0, 2.0], dtype=npgrad.float64, requires_grad=True)
    w32 = npgrad.tensor([1.0, 2.0], requires_grad=True)
    opt = npgrad.optim.Adam([w32], lr=0.1)
    w32.sum().backward()
    opt.step()
    other = npgrad.optim.Adam([w64], lr=0.1)
    other.load_state_dict(opt.state_dict())
    assert other.state[w64]["exp_avg"].dtype == npgrad.float64
    assert other.state[w64]["step"].dtype == npgrad.float32


# -- zero_grad ----------------------------------------------------------------------------

def test_zero_grad_set_to_none_default():
    w = npgrad.tensor([1.0, 2.0], requires_grad=True)
    opt = npgrad.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad()
    assert w.grad is None


def test_zero_grad_in_place_keeps_the_tensor():
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        (w * w).sum().backward()
        g = w.grad
        opt.zero_grad(set_to_none=False)
        assert w.grad is g
        assert g.tolist() == [0.0, 0.0]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_zero_grad_detaches_a_grad_with_history():
    results = []
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        (w * w).sum().backward(create_graph=True)
        assert w.grad.grad_fn is not None
        opt.zero_grad(set_to_none=False)
        results.append((w.grad.grad_fn, w.grad.requires_grad, w.grad.tolist()))
    assert results[0] == results[1] == (None, False, [0.0, 0.0])


# -- the grad-mode contract of step ---------------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {}), ("Adam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}), ("RMSprop", {"momentum": 0.5}), ("Adagrad", {}),
])
@pytest.mark.parametrize("mode", ["grad", "no_grad"])
def test_step_updates_leaves_in_place(name, kwargs, mode):
    seen = []
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        data_before = w.detach().numpy()
        opt = getattr(lib.optim, name)([w], **kwargs)
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            if mode == "no_grad":
                with lib.no_grad():
                    opt.step()
            else:
                opt.step()
        assert lib.is_grad_enabled()
        assert w.is_leaf and w.requires_grad and w.grad_fn is None
        seen.append((w._version, np.shares_memory(data_before, w.detach().numpy())))
    assert seen[0] == seen[1]
    assert seen[0][0] > 0 and seen[0][1]


def test_closure_runs_with_grad_enabled_and_returns_its_loss():
    w = npgrad.tensor([1.0, 2.0], requires_grad=True)
    opt = npgrad.optim.SGD([w], lr=0.1)
    modes = []

    def closure():
        modes.append(npgrad.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with npgrad.no_grad():
        loss = opt.step(closure)
    assert modes == [True]
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.tolist(), [0.8, 1.6], rtol=1e-6)


def test_step_hooks():
    w = npgrad.tensor([1.0], requires_grad=True)
    opt = npgrad.optim.SGD([w], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    opt.step()
    pre.remove()
    opt.step()
    assert calls == [("pre", True), ("post", True), ("post", True)]


def test_lr_as_tensor():
    results = []
    for lib in (npgrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=lib.tensor(0.1))
        (w * w).sum().backward()
        opt.step()
        results.append(w.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_adagrad_param_group_added_later_gets_state():
    for lib in (npgrad, torch):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        opt = lib.optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.5)
        opt.add_param_group({"params": [b]})
        (a * b).sum().backward()
        opt.step()
        assert opt.state[b]["sum"].tolist() == pytest.approx([1.5])


# -- errors ---------------------------------------------------------------------------------

def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - we compare whatever was raised
            return type(exc).__name__, str(exc)
    return None


ERROR_CASES = {
    "tensor_params": lambda lib: lib.optim.SGD(lib.ones(2, requires_grad=True), lr=0.1),
    "empty": lambda lib: lib.optim.Adam([]),
    "not_a_tensor": lambda lib: lib.optim.SGD([1.0], lr=0.1),
    "non_leaf": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
    "set_of_params": lambda lib: lib.optim.SGD([{"params": {lib.ones(2, requires_grad=True)}}],
                                               lr=0.1),
    "group_not_dict": lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)])
    .add_param_group([lib.ones(1)]),
    "shared_param": lambda lib: (lambda p: lib.optim.SGD([{"params": [p]}, {"params": [p]}]))(
        lib.ones(1, requires_grad=True)),
    "sgd_lr": lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=-1),
    "sgd_momentum": lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], momentum=-1),
    "sgd_wd": lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], weight_decay=-1),
    "sgd_nesterov": lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1,
                                              nesterov=True),
    "adam_lr": lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)], lr=-0.5),
    "adam_eps": lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)], eps=-1.0),
    "adam_beta0": lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)],
                                             betas=(1.0, 0.9)),
    "adam_beta1": lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)],
                                             betas=(0.9, -0.1)),
    "adam_int_betas": lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)],
                                                 betas=(0, 0.9)),
    "adam_wd": lambda lib: lib.optim.AdamW([lib.ones(1, requires_grad=True)],
                                           weight_decay=-0.1),
    "rmsprop_alpha": lambda lib: lib.optim.RMSprop([lib.ones(1, requires_grad=True)],
                                                   alpha=-0.1),
    "rmsprop_momentum": lambda lib: lib.optim.RMSprop([lib.ones(1, requires_grad=True)],
                                                      momentum=-0.1),
    "adagrad_lr_decay": lambda lib: lib.optim.Adagrad([lib.ones(1, requires_grad=True)],
                                                      lr_decay=-1),
    "adagrad_init": lambda lib: lib.optim.Adagrad([lib.ones(1, requires_grad=True)],
                                                  initial_accumulator_value=-1),
    "load_group_count": lambda lib: (lambda p, q: lib.optim.SGD([p], lr=0.1).load_state_dict(
        lib.optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1).state_dict()))(
        lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)),
    "load_group_size": lambda lib: (lambda p, q: lib.optim.SGD([p], lr=0.1).load_state_dict(
        lib.optim.SGD([p, q], lr=0.1).state_dict()))(
        lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)),
    "base_step": lambda lib: lib.optim.Optimizer([lib.ones(1, requires_grad=True)], {}).step(),
    "required": lambda lib: lib.optim.Optimizer(
        [lib.ones(1, requires_grad=True)],
        {"lr": importlib.import_module(lib.__name__ + ".optim.optimizer").required}),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_match_torch(case):
    ours = _error(lambda: ERROR_CASES[case](npgrad))
    theirs = _error(lambda: ERROR_CASES[case](torch))
    assert theirs is not None
    assert ours == theirs


def test_duplicate_parameter_warning():
    for lib in (npgrad, torch):
        p = lib.ones(1, requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


def test_differentiable_is_refused():
    with pytest.raises(NotImplementedError, match="differentiable"):
        npgrad.optim.Adam([npgrad.ones(1, requires_grad=True)], differentiable=True)
