"""The composite and cyclic lr schedulers (SequentialLR, ChainedScheduler, CyclicLR,
CosineAnnealingWarmRestarts, PolynomialLR) against torch: sequences, state dicts, errors."""
from __future__ import annotations

import warnings

import pytest

import npgrad
from lr_scheduler_helpers import (assert_sequences_close, error_of, make_optimizer, walk_schedule,
                                   warning_texts)

torch = pytest.importorskip("torch")

def _sequential(lib, opt):
    S = lib.optim.lr_scheduler
    return S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.2, total_iters=4),
                                S.ExponentialLR(opt, gamma=0.9),
                                S.CosineAnnealingLR(opt, T_max=6)], milestones=[5, 14])


def _sequential_const(lib, opt):
    S = lib.optim.lr_scheduler
    return S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=3),
                                S.StepLR(opt, step_size=4, gamma=0.5)], milestones=[3])


def _chained(lib, opt):
    S = lib.optim.lr_scheduler
    return S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=4),
                               S.ExponentialLR(opt, gamma=0.9)])


def _chained_three(lib, opt):
    S = lib.optim.lr_scheduler
    return S.ChainedScheduler([S.LinearLR(opt, start_factor=0.5, total_iters=5),
                               S.MultiStepLR(opt, milestones=[6, 12], gamma=0.5),
                               S.PolynomialLR(opt, total_iters=20, power=0.5)], optimizer=opt)


def _cls(name, **kwargs):
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)


SCHEDULERS = {
    "PolynomialLR": _cls("PolynomialLR"),
    "PolynomialLR-power": _cls("PolynomialLR", total_iters=12, power=2.5),
    "CosineAnnealingWarmRestarts": _cls("CosineAnnealingWarmRestarts", T_0=5),
    "CosineAnnealingWarmRestarts-mult": _cls("CosineAnnealingWarmRestarts", T_0=3, T_mult=2,
                                             eta_min=0.01),
    "CyclicLR": _cls("CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": _cls("CyclicLR", base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                 step_size_up=3, step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": _cls("CyclicLR", base_lr=0.01, max_lr=0.2, step_size_up=5,
                               mode="exp_range", gamma=0.95),
    "CyclicLR-no-momentum": _cls("CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=2,
                                 cycle_momentum=False),
    "CyclicLR-scale_fn": _cls("CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=3,
                              scale_fn=lambda x: 1.0 / (1.0 + x), scale_mode="iterations"),
    "SequentialLR": _sequential,
    "SequentialLR-const": _sequential_const,
    "ChainedScheduler": _chained,
    "ChainedScheduler-three": _chained_three,
}
GROUPS = {"CyclicLR-triangular2": 2}


def lr_sequence(lib, key, opt_name="SGD", reload_at=None):
    """(lrs, momenta or betas) after construction and after each of STEPS steps."""
    return walk_schedule(lib, SCHEDULERS[key], GROUPS.get(key, 1), opt_name, reload_at)


def _keys(state):
    """State-dict keys, nested ones included (composite schedulers hold their children's)."""
    keys = sorted(state)
    if "_schedulers" in state:
        keys += [_keys(s) for s in state["_schedulers"]]
    return keys


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_lr_sequence_matches_torch(key):
    ours, our_sched = lr_sequence(npgrad, key)
    theirs, their_sched = lr_sequence(torch, key)
    assert_sequences_close(ours, theirs)
    assert _keys(our_sched.state_dict()) == _keys(their_sched.state_dict())


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_state_dict_round_trip(key):
    ours, _ = lr_sequence(npgrad, key, reload_at=12)
    theirs, _ = lr_sequence(torch, key, reload_at=12)
    plain, _ = lr_sequence(npgrad, key)
    assert_sequences_close(ours, theirs)
    assert_sequences_close(ours, plain)


@pytest.mark.parametrize("key", ["CyclicLR", "CyclicLR-exp_range"])
def test_cyclic_cycles_adam_beta1(key):
    ours, _ = lr_sequence(npgrad, key, opt_name="Adam")
    theirs, _ = lr_sequence(torch, key, opt_name="Adam")
    assert_sequences_close(ours, theirs)


def test_cyclic_state_dict_drops_plain_scale_fn():
    class Scale:
        def __init__(self):
            self.base = 0.5

        def __call__(self, x):
            return self.base ** x

    states = []
    for lib in (npgrad, torch):
        S = lib.optim.lr_scheduler
        opt = make_optimizer(lib)
        plain = S.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 1.0).state_dict()
        custom = S.CyclicLR(opt, 0.01, 0.1, scale_fn=Scale()).state_dict()
        states.append((plain["_scale_fn_custom"], custom["_scale_fn_custom"],
                       "_scale_fn_ref" in plain))
    assert states[0] == states[1] == (None, {"base": 0.5}, False)


def test_warm_restarts_fractional_epochs():
    seqs = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [0.5, 1.25, 3.9, 4.0, 7.5, 12.0, 13.1, 30.0, 2.0]:
                opt.step()
                sched.step(epoch)
                seq.append((sched.get_last_lr(), sched.last_epoch, sched.T_i))
            opt.step()
            sched.step()
            seq.append((sched.get_last_lr(), sched.last_epoch, sched.T_i))
        seqs.append(seq)
    for (a, ea, ta), (b, eb, tb) in zip(*seqs):
        assert a == pytest.approx(b, rel=1e-12)
        assert (ea, ta) == (eb, tb)


def test_polynomial_closed_form_with_epoch():
    seqs = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.PolynomialLR(opt, total_iters=8, power=2.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [3, 5, 10]:
                opt.step()
                sched.step(epoch)
                seqs.append(sched.get_last_lr()[0])
    assert seqs[:3] == pytest.approx(seqs[3:], rel=1e-12)


# -- warnings and errors --------------------------------------------------------------------

@pytest.mark.parametrize("key", ["PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts",
                                 "SequentialLR", "ChainedScheduler"])
def test_order_warnings_match_torch(key):
    texts = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = SCHEDULERS[key](lib, opt)
        texts.append(warning_texts(sched.step))
    assert texts[0] == texts[1]


def _other_optimizer_error(lib):
    S = lib.optim.lr_scheduler
    opt, other = make_optimizer(lib), make_optimizer(lib)
    a, b = S.ExponentialLR(opt, gamma=0.9), S.ExponentialLR(other, gamma=0.9)
    return error_of(lambda: S.SequentialLR(opt, [a, b], milestones=[2]))


ERRORS = {
    "sequential-empty": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], []),
    "sequential-milestones": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)], milestones=[3]),
    "sequential-plateau": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], milestones=[]),
    "sequential-no-optimizer": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [object()], milestones=[]),
    "chained-empty": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([]),
    "chained-plateau": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], optimizer=opt),
    "cyclic-mode": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0,
                                                                    mode="sine"),
    "cyclic-length": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, [0.1, 0.2], 1.0),
    "cyclic-not-optimizer": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(None, 0.1, 1.0),
    "cyclic-no-momentum": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        lib.optim.Adagrad([lib.zeros(1, requires_grad=True)]), 0.1, 1.0),
    "warm-T0": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 0),
    "warm-T0-float": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        opt, 2.0),
    "warm-Tmult": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        opt, 2, T_mult=0),
    "warm-eta": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        opt, 2, eta_min="0"),
    "warm-negative-epoch": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        opt, 2).step(-1),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_errors_match_torch(key):
    found = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found.append(error_of(lambda: ERRORS[key](lib, opt)))
    assert found[0] is not None
    assert found[0] == found[1]


def test_different_optimizer_error_names_both():
    ours, theirs = _other_optimizer_error(npgrad), _other_optimizer_error(torch)
    assert ours[0] == theirs[0] == "ValueError"
    # the message embeds the optimizer's repr, which both libraries print alike
    assert ours[1].startswith("SequentialLR expects all schedulers to belong to the same "
                              "optimizer, but got scheduler ExponentialLR at index 1 has ")
    assert ours[1].endswith(", which is different from SGD.")


def test_hand_computed_cyclic_triangle():
    # base 0.0, max 1.0, 2 steps up then 2 down: 0, .5, 1, .5, 0, .5, ...
    opt = make_optimizer(npgrad)
    sched = npgrad.optim.lr_scheduler.CyclicLR(opt, 0.0, 1.0, step_size_up=2,
                                               cycle_momentum=False)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0, 0.5, 1.0])
