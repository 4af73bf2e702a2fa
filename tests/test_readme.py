"""The README's Python examples run, and print what their comments say."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def expected_output(block: str) -> list:
    """Lines a block promises: the comment after each print(...), plus comment lines under it."""
    lines, after_print = [], False
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("print("):
            if "  # " in line:
                lines.append(line.split("  # ", 1)[1].strip())
            after_print = True
        elif after_print and stripped.startswith("# "):
            lines.append(stripped[2:].rstrip())
        else:
            after_print = False
    return lines


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(block: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(block, {"__name__": "readme"})
    printed = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert printed == expected_output(block)


def test_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].startswith("pip install -e '.[demo]' && python -m npgrad.demo")
    assert first_block[1].startswith("pip install -e '.[test]' && pytest")


def test_ci_runs_the_readme_test_command_as_written() -> None:
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    command = first_block[1].split("#", 1)[0].strip()
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text().splitlines()
    assert command in [line.strip() for line in ci]
    assert "python3 -m venv" in "\n".join(ci)  # CI builds its own environment


def test_numpy_floor_is_the_one_ci_tests() -> None:
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    floor = re.search(r'"numpy>=([0-9.]+)"', pyproject)
    assert floor is not None and f"NumPy ≥ {floor.group(1)}" in README
