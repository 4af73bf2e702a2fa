"""npgrad.nn: neural-network building blocks: Parameter, Module, layers, losses, init, functional."""
from __future__ import annotations

from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter  # noqa: F401
from . import parallel  # noqa: F401,E402
from .parallel import DataParallel  # noqa: F401,E402

__all__ = ["Parameter", "Buffer", "DataParallel", "functional", "init", "parallel", "utils"] + list(_modules_all)
