"""Every ``>>>`` example in npgrad's docstrings runs and prints what it shows."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import npgrad

MODULES = sorted(info.name for info in pkgutil.walk_packages(npgrad.__path__, "npgrad.")
                 if not info.name.startswith("npgrad.demo"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
