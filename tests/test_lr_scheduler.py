"""npgrad.optim.lr_scheduler against torch's: lr (and momentum) sequences, state dicts, warnings."""
from __future__ import annotations

import math
import warnings

import pytest

import npgrad
from lr_scheduler_helpers import (STEPS, assert_sequences_close, error_of, make_optimizer,
                                   walk_schedule, warning_texts)

torch = pytest.importorskip("torch")

def _constant_half(epoch):
    return 0.5


SCHEDULERS = {
    "StepLR": ("StepLR", {"step_size": 4, "gamma": 0.5}),
    "StepLR-3": ("StepLR", {"step_size": 3}),
    "MultiStepLR": ("MultiStepLR", {"milestones": [3, 7, 7, 15], "gamma": 0.3}),
    "ExponentialLR": ("ExponentialLR", {"gamma": 0.9}),
    "CosineAnnealingLR": ("CosineAnnealingLR", {"T_max": 10}),
    "CosineAnnealingLR-eta": ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    "LambdaLR": ("LambdaLR", {"lr_lambda": lambda e: 0.95 ** e}),
    "LambdaLR-list": ("LambdaLR", {"lr_lambda": [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]}),
    "MultiplicativeLR": ("MultiplicativeLR", {"lr_lambda": lambda e: 0.95}),
    "ConstantLR": ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
    "LinearLR": ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 6}),
    "OneCycleLR": ("OneCycleLR", {"max_lr": 1.0, "total_steps": STEPS + 1}),
    "OneCycleLR-linear": ("OneCycleLR", {"max_lr": [1.0, 2.0], "total_steps": STEPS + 1,
                                         "anneal_strategy": "linear"}),
    "OneCycleLR-three-phase": ("OneCycleLR", {"max_lr": 0.5, "epochs": 4,
                                              "steps_per_epoch": 8, "three_phase": True,
                                              "pct_start": 0.25}),
    "OneCycleLR-no-momentum": ("OneCycleLR", {"max_lr": 0.5, "total_steps": STEPS + 1,
                                              "cycle_momentum": False, "div_factor": 10.0}),
}
GROUPS = {"LambdaLR-list": 2, "OneCycleLR-linear": 2}


def lr_sequence(lib, key, opt_name="SGD", reload_at=None):
    """(lrs, momenta or betas) after construction and after each of STEPS steps."""
    cls_name, kwargs = SCHEDULERS[key]
    cls = getattr(lib.optim.lr_scheduler, cls_name)
    return walk_schedule(lib, lambda lib, opt: cls(opt, **kwargs), GROUPS.get(key, 1), opt_name,
                         reload_at)


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_lr_sequence_matches_torch(key):
    ours, our_sched = lr_sequence(npgrad, key)
    theirs, their_sched = lr_sequence(torch, key)
    assert_sequences_close(ours, theirs)
    assert sorted(our_sched.state_dict()) == sorted(their_sched.state_dict())


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_state_dict_round_trip(key):
    ours, _ = lr_sequence(npgrad, key, reload_at=12)
    theirs, _ = lr_sequence(torch, key, reload_at=12)
    plain, _ = lr_sequence(npgrad, key)
    assert_sequences_close(ours, theirs)
    assert_sequences_close(ours, plain)


@pytest.mark.parametrize("key", ["OneCycleLR", "OneCycleLR-three-phase"])
def test_one_cycle_cycles_adam_beta1(key):
    ours, _ = lr_sequence(npgrad, key, opt_name="Adam")
    theirs, _ = lr_sequence(torch, key, opt_name="Adam")
    assert_sequences_close(ours, theirs)


def test_state_dict_contents_match_torch():
    dicts = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        opt.step()
        sched.step()
        dicts.append((sched.state_dict(), opt.state_dict()["param_groups"]))
    assert dicts[0] == dicts[1]
    assert list(dicts[0][0]) == list(dicts[1][0])


def test_lambda_state_dict_drops_plain_functions():
    class Schedule:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate ** epoch

    states = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib, groups=2)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, Schedule()])
        states.append(sched.state_dict()["lr_lambdas"])
    assert states[0] == states[1] == [None, {"rate": 0.5}]


PLATEAU = {
    "min-rel": {"patience": 2},
    "min-abs": {"patience": 1, "threshold": 0.1, "threshold_mode": "abs", "factor": 0.5},
    "max-rel": {"mode": "max", "patience": 2, "factor": 0.2},
    "max-abs": {"mode": "max", "threshold_mode": "abs", "threshold": 0.05, "patience": 0},
    "cooldown": {"patience": 1, "cooldown": 3, "factor": 0.5},
    "min_lr": {"patience": 0, "factor": 0.5, "min_lr": [0.02, 0.05]},
    "eps": {"patience": 0, "factor": 0.9, "eps": 0.01},
}
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.85, 0.86, 0.86, 0.87, 0.9, 0.5, 0.5, 0.49, 0.6,
           0.7, 0.8, 0.8, 0.8, 0.8, 0.85, 0.3, 0.3, 0.31, 0.29, 0.3, 0.3]


@pytest.mark.parametrize("key", sorted(PLATEAU))
def test_reduce_lr_on_plateau_matches_torch(key):
    results = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib, groups=2)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **PLATEAU[key])
        seq = []
        for i, metric in enumerate(METRICS):
            if i == 13:
                state = sched.state_dict()
                sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **PLATEAU[key])
                sched.load_state_dict(state)
            opt.step()
            sched.step(lib.tensor(metric) if i % 2 else metric)
            seq.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
                        sched.best))
        results.append((seq, sorted(sched.state_dict())))
    assert results[0] == results[1]


# -- warnings and errors --------------------------------------------------------------------

def test_warns_when_scheduler_steps_before_optimizer():
    texts = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        texts.append(warning_texts(sched.step))
    assert texts[0] == texts[1]
    assert len(texts[0]) == 1 and "before `optimizer.step()`" in texts[0][0]


def test_no_warning_in_the_right_order():
    opt = make_optimizer(npgrad)
    sched = npgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)

    def run():
        opt.step()
        sched.step()
        opt.step()
        sched.step()

    assert warning_texts(run) == []
    assert sched.get_last_lr() == [0.025]


def test_get_lr_outside_step_warns():
    texts = []
    for lib in (npgrad, torch):
        sched = lib.optim.lr_scheduler.StepLR(make_optimizer(lib), step_size=2)
        texts.append(warning_texts(sched.get_lr))
    assert texts[0] == texts[1] and len(texts[0]) == 1


def test_step_with_epoch_uses_closed_form_and_warns():
    results = []
    for lib in (npgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        opt.step()
        texts = warning_texts(lambda: sched.step(7))
        results.append((texts, sched.get_last_lr()))
    assert results[0] == results[1]
    assert results[0][1][0] == pytest.approx(0.05 * (1 + math.cos(math.pi * 7 / 10)))


ERRORS = {
    "not_an_optimizer": lambda lib: lib.optim.lr_scheduler.StepLR(object(), step_size=1),
    "resume_without_initial_lr": lambda lib: lib.optim.lr_scheduler.StepLR(
        make_optimizer(lib), step_size=1, last_epoch=3),
    "lambda_count": lambda lib: lib.optim.lr_scheduler.LambdaLR(
        make_optimizer(lib), [lambda e: 1.0, lambda e: 1.0]),
    "plateau_factor": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), factor=1.0),
    "plateau_mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), mode="up"),
    "plateau_threshold_mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), threshold_mode="pct"),
    "plateau_min_lrs": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), min_lr=[0.1, 0.2]),
    "one_cycle_no_steps": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib), max_lr=1.0),
    "one_cycle_total_steps": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib), max_lr=1.0, total_steps=0),
    "one_cycle_pct": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib), max_lr=1.0, total_steps=10, pct_start=1),
    "one_cycle_anneal": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib), max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    "one_cycle_no_momentum": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib, "Adagrad"), max_lr=1.0, total_steps=10),
    "one_cycle_max_lr_count": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        make_optimizer(lib), max_lr=[1.0, 2.0], total_steps=10),
    "one_cycle_too_many_steps": lambda lib: [
        s.step() for s in [lib.optim.lr_scheduler.OneCycleLR(make_optimizer(lib), max_lr=1.0,
                                                             total_steps=3)]
        for _ in range(4)],
    "constant_factor": lambda lib: lib.optim.lr_scheduler.ConstantLR(
        make_optimizer(lib), factor=2.0),
    "linear_start": lambda lib: lib.optim.lr_scheduler.LinearLR(
        make_optimizer(lib), start_factor=0),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = error_of(lambda: ERRORS[case](npgrad))
        theirs = error_of(lambda: ERRORS[case](torch))
    assert theirs is not None
    assert ours == theirs
