"""``python -m npgrad run script.py [args]``: run an unmodified PyTorch script with npgrad as torch.

Note [Running a script as python would]
The script must not be able to tell it was not started as ``python script.py``:
``sys.argv`` is ``[script.py, *args]``, ``sys.path[0]`` is the script's folder,
it runs as the module ``__main__`` (a fresh one in ``sys.modules``, so pickling
a class it defines names ``__main__``), with ``__file__`` set and
``__spec__`` None.  Its code is compiled from its file with that file name, so
tracebacks point into it; the runner's own frames are cut from a traceback
before Python's excepthook prints it, and an uncaught exception exits with
status 1 while ``SystemExit`` keeps its code (both as the interpreter does).
``import torch`` inside it, or in any library it imports, is npgrad (Note
[torch as an alias of npgrad] in npgrad._torch_alias).
"""
from __future__ import annotations

import builtins
import importlib.machinery
import os
import sys
import types
from typing import NoReturn

from ._torch_alias import install_as_torch

USAGE = "usage: python -m npgrad run script.py [args ...]"


_RUNNER_CODE: set = set()  # code objects of the frames to cut (filled below)


def _trim_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """Drop the runner's own frames from the head of a traceback."""
    while tb is not None and tb.tb_frame.f_code in _RUNNER_CODE:
        tb = tb.tb_next
    return tb


def run_script(path: str, args: list[str]) -> int:
    """Run ``path`` as ``__main__`` with npgrad installed as torch; return the exit status."""
    full = os.path.abspath(path)
    with open(full, "rb") as f:
        source = f.read()
    code = compile(source, full, "exec", dont_inherit=True)
    install_as_torch()
    main = types.ModuleType("__main__")
    main.__file__ = full
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__spec__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", full)  # type: ignore
    main.__package__ = None
    main.__cached__ = None  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    sys.argv[:] = [path, *args]
    sys.path[0] = os.path.dirname(full)
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - reported as the interpreter would
        tb = _trim_traceback(exc.__traceback__)
        exc.__traceback__ = tb  # the interpreter's hook prints the exception's own traceback
        sys.excepthook(type(exc), exc, tb)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    return 0


def main(argv: list[str]) -> NoReturn:
    if len(argv) < 2 or argv[0] != "run":
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    path = argv[1]
    if not os.path.exists(path):
        # the interpreter's own words for a missing script
        print(f"{sys.executable}: can't open file {os.path.abspath(path)!r}: "
              f"[Errno 2] No such file or directory", file=sys.stderr)
        raise SystemExit(2)
    status = run_script(path, argv[2:])
    sys.stdout.flush()
    raise SystemExit(status)


_RUNNER_CODE.add(run_script.__code__)

if __name__ == "__main__":
    main(sys.argv[1:])
