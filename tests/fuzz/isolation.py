"""Running npgrad's side of a risky case (huge sizes) in a child process with a memory limit
and a per-case timeout, so an unbounded allocation, an endless loop or a segfault becomes an
outcome instead of taking the test run down.

Note [One worker, restarted on a crash]
Starting Python per case costs more than the cases, so one child serves many: it reads case
keys (JSON, one per line), rebuilds each case (``rebuild``: no torch needed), runs it with
npgrad and writes the pickled Outcome back (base64, one line).  A child that dies or stops
answering is killed and replaced, and that case's outcome records the crash.
"""
from __future__ import annotations

import base64
import json
import os
import pickle
import select
import signal
import subprocess
import sys
from typing import Any

from fuzz.outcome import Outcome

MEMORY_LIMIT_BYTES = 3 * 2 ** 30
CASE_TIMEOUT_S = 8  # the child's own alarm fires earlier, where Python code is running
CHILD_CALL_TIMEOUT_S = 5
STARTUP_TIMEOUT_S = 180  # importing torch on a loaded machine
_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rebuild(key: tuple) -> Any:
    if key[0] == "api":
        from fuzz import api_cases
        return api_cases.make_case(*key[1:])
    if key[0] == "row":
        from fuzz import row_cases
        from op_table import ROWS_BY_NAME
        return row_cases.make_case(ROWS_BY_NAME[key[1]], key[2], key[3])
    if key[0] == "crash":  # the worker's own test: a case that kills its process
        from fuzz.case import Case
        return Case("crash", "test", "crash", "", "", "crash",
                    lambda mod, ctx: os.kill(os.getpid(), signal.SIGSEGV))
    raise ValueError(f"cannot rebuild a case from {key!r}")


class _Worker:
    def __init__(self, library: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_TESTS_DIR, env.get("PYTHONPATH"))
                                            if p)
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "fuzz.isolation", library],
                                     cwd=_TESTS_DIR, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], STARTUP_TIMEOUT_S)
        self.started = bool(ready) and self.proc.stdout.readline() == b"ready\n"

    def ask(self, key: tuple) -> Outcome:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.started:
            self.close()
            return Outcome(False, crash="no worker", message="the worker did not start")
        try:
            self.proc.stdin.write((json.dumps(key) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._dead()
        ready, _, _ = select.select([self.proc.stdout], [], [], CASE_TIMEOUT_S)
        if not ready:
            self.close()
            return Outcome(False, crash="timeout", message=f"no result after {CASE_TIMEOUT_S} s")
        line = self.proc.stdout.readline()
        if not line:
            return self._dead()
        return pickle.loads(base64.b64decode(line))

    def _dead(self) -> Outcome:
        code = self.proc.wait()
        if code < 0:
            name = signal.Signals(-code).name
            return Outcome(False, crash=name, message=f"killed by {name}")
        return Outcome(False, crash=f"exit {code}", message=f"worker exited with {code}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


_WORKERS: dict[str, _Worker] = {}


def run_isolated(key: tuple, library: str = "npgrad") -> Outcome:
    """The outcome of the case ``key`` under ``library`` ("npgrad" or "torch": torch, too,
    can spin on a huge size), computed in that library's limited child process."""
    worker = _WORKERS.get(library)
    if worker is None or not worker.alive():
        worker = _WORKERS[library] = _Worker(library)
    outcome = worker.ask(key)
    if not worker.alive():
        del _WORKERS[library]
    return outcome


def shutdown() -> None:
    for worker in _WORKERS.values():
        worker.close()
    _WORKERS.clear()


def _serve(library: str) -> None:
    import importlib
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    lib = importlib.import_module(library)
    from fuzz.outcome import capture
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        key = tuple(tuple(k) if isinstance(k, list) else k for k in json.loads(line))
        case = rebuild(key)
        outcome = capture(lambda: case.run(lib, {}), timeout_s=CHILD_CALL_TIMEOUT_S)
        sys.stdout.write(base64.b64encode(pickle.dumps(outcome)).decode() + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve(sys.argv[1])
