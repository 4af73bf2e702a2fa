"""Shared helpers of the lr-scheduler tests: an optimizer to schedule, the lr/momentum sequence a
scheduler walks (optionally through a checkpoint reload), and the comparison of two sequences."""
from __future__ import annotations

import warnings

import pytest

STEPS = 30


def make_optimizer(lib, opt_name="SGD", groups=1):
    params = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
    spec = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if opt_name == "SGD":
        return lib.optim.SGD(spec, lr=0.1, momentum=0.9)
    return getattr(lib.optim, opt_name)(spec, lr=0.1)


def walk_schedule(lib, build, groups=1, opt_name="SGD", reload_at=None):
    """(lrs, momenta or betas) after construction and after each of STEPS steps, and the scheduler.

    ``build(lib, opt)`` makes the scheduler; at step ``reload_at`` both are rebuilt and reloaded
    from their state dicts, as a resume from a checkpoint does.
    """
    opt = make_optimizer(lib, opt_name, groups)
    sched = build(lib, opt)
    momentum_key = "betas" if opt_name == "Adam" else "momentum"
    seen = [(sched.get_last_lr(), [g[momentum_key] for g in opt.param_groups])]
    for i in range(STEPS):
        if i == reload_at:
            state = sched.state_dict()
            # a resume from a checkpoint: build both, then load the optimizer, then the scheduler
            opt_state = opt.state_dict()
            opt = make_optimizer(lib, opt_name, groups)
            sched = build(lib, opt)
            opt.load_state_dict(opt_state)
            sched.load_state_dict(state)
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), [g[momentum_key] for g in opt.param_groups]))
    return seen, sched


def _flat(values):
    """A flat list of the numbers in ``values`` (momentum entries may be ``(beta1, beta2)``
    tuples; ``pytest.approx`` refuses nested sequences from pytest 9.2 on)."""
    out = []
    for v in values:
        out.extend(_flat(v) if isinstance(v, (list, tuple)) else [v])
    return out


def assert_sequences_close(ours, theirs):
    assert len(ours) == len(theirs)
    for i, ((lr_a, m_a), (lr_b, m_b)) in enumerate(zip(ours, theirs)):
        assert lr_a == pytest.approx(lr_b, rel=1e-12, abs=1e-15), f"step {i}"
        assert [type(v) for v in m_a] == [type(v) for v in m_b], f"step {i}"
        assert _flat(m_a) == pytest.approx(_flat(m_b), rel=1e-12, abs=1e-15), f"step {i}"


def warning_texts(fn):
    """The messages of every warning ``fn()`` raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


def error_of(fn):
    """(exception type name, message) of what ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is compared
        return type(exc).__name__, str(exc)
    return None
