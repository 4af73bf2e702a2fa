"""Anomaly detection in backward: forward tracebacks, NaN checks and the version-error hint.

Each scenario runs with npgrad and, where installed, with torch; the warnings
(text up to torch's build-specific "(Triggered internally ...)" suffix) and the
error must be the same, and the recorded forward frame must name the user's
file and line.
"""
from __future__ import annotations

import inspect
import re
import warnings

import pytest

import npgrad

TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\.\)")


def _run(scenario, module) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = None
        try:
            scenario(module)
        except RuntimeError as exc:
            error = str(exc).replace("torch.", "npgrad.")
        finally:
            module.autograd.set_detect_anomaly(False)
    messages = [_from_scenario(TRIGGERED.sub("", str(w.message)), scenario.__name__)
                for w in caught]
    return error, messages


def _from_scenario(message: str, name: str) -> str:
    """Drop the frames above the scenario (the test harness differs between runs)."""
    if "Traceback of forward call" not in message:
        return message
    head, trace = message.split("\n", 1)
    lines = trace.split("\n")
    for i, line in enumerate(lines):
        if line.endswith(f"in {name}"):
            return head + "\n" + "\n".join(lines[i:])
    return message


def nan_in_backward(T) -> None:
    with T.autograd.detect_anomaly():
        x = T.tensor([0., 1.], requires_grad=True)
        y = x.sqrt() * 0  # LINE: nan_in_backward
        y.sum().backward()


def nan_without_forward_info(T) -> None:
    x = T.tensor([-1., 1.], requires_grad=True)
    y = x.sqrt()
    with T.autograd.detect_anomaly():
        y.sum().backward()


def version_error_in_anomaly_mode(T) -> None:
    with T.autograd.detect_anomaly():
        x = T.tensor([1., 2.], requires_grad=True)
        b = x * 1
        c = b * b  # LINE: version_error_in_anomaly_mode
        b.add_(1)
        c.sum().backward()


def saved_output_modified_under_no_grad(T) -> None:
    with T.autograd.set_detect_anomaly(True):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()  # LINE: saved_output_modified_under_no_grad
        with T.no_grad():
            y.mul_(2)
        y.sum().backward()


def nan_check_disabled(T) -> None:
    with T.autograd.detect_anomaly(check_nan=False):
        x = T.tensor([-1., 1.], requires_grad=True)
        x.sqrt().sum().backward()
        print(x.grad)


SCENARIOS = [nan_in_backward, nan_without_forward_info, version_error_in_anomaly_mode,
             saved_output_modified_under_no_grad, nan_check_disabled]


def _line_of(scenario) -> int:
    source, start = inspect.getsourcelines(scenario)
    for offset, line in enumerate(source):
        if "# LINE:" in line:
            return start + offset
    raise AssertionError("scenario has no marked line")


def test_nan_error_and_forward_trace() -> None:
    error, messages = _run(nan_in_backward, npgrad)
    assert error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert messages[0] == ("Anomaly Detection has been enabled. This mode will increase the "
                           "runtime and should only be enabled for debugging.")
    head, trace = messages[1].split("\n", 1)
    assert head == "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    # The last recorded frame is the user's line, not npgrad's internals.
    last_frame = trace.rstrip("\n").split("\n")[-2:]
    assert f'File "{__file__}", line {_line_of(nan_in_backward)}, in nan_in_backward' in last_frame[0]
    assert last_frame[1].strip() == "y = x.sqrt() * 0  # LINE: nan_in_backward"


def test_node_created_outside_anomaly_mode_has_no_trace() -> None:
    error, messages = _run(nan_without_forward_info, npgrad)
    assert error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert messages[-1] == ("Error detected in SqrtBackward0. No forward pass information "
                            "available. Enable detect anomaly during forward pass for more "
                            "information.")


def test_version_error_hint_changes_in_anomaly_mode() -> None:
    error, messages = _run(version_error_in_anomaly_mode, npgrad)
    assert error == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [npgrad.FloatTensor [2]], which is output 0 of Add, is at version 1; "
        "expected version 0 instead. Hint: the backtrace further above shows the operation "
        "that failed to compute its gradient. The variable in question was changed in there "
        "or anywhere later. Good luck!")
    assert messages[-1].startswith("Error detected in MulBackward0. Traceback of forward call")
    assert f"line {_line_of(version_error_in_anomaly_mode)}" in messages[-1]


def test_check_nan_false_lets_nan_through(capsys) -> None:
    error, _ = _run(nan_check_disabled, npgrad)
    assert error is None
    assert capsys.readouterr().out == "tensor([   nan, 0.5000])\n"


def test_anomaly_off_costs_no_trace() -> None:
    x = npgrad.tensor([1.], requires_grad=True)
    assert (x * 2).grad_fn._anomaly_trace is None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_torch(scenario, capsys) -> None:
    torch = pytest.importorskip("torch")
    ours = _run(scenario, npgrad)
    ours_out = capsys.readouterr().out
    theirs = _run(scenario, torch)
    theirs_out = capsys.readouterr().out
    assert ours == theirs
    assert ours_out == theirs_out
