"""The documentation site builds with warnings as errors; its generated pages hold every option
of every command and every registered policy; its Python examples run as written."""

from __future__ import annotations

import argparse
import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import run_python_blocks

from tilecc import _core
from tilecc.cli import build_parser

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [str(BIN / "mkdocs"), "build", "--strict", "--quiet", "--site-dir", str(where)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN)},
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return where


def text_of(page: Path) -> str:
    """A built page's text, tags and entities left out."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page.read_text())).split())


def test_every_option_of_every_command_is_in_the_reference(site):
    cli = text_of(site / "cli" / "index.html")
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    for name, sub in commands.choices.items():
        assert f"tilecc {name}" in cli
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in cli, (name, flag)


def test_the_policy_table_is_the_registry(site):
    runtime = text_of(site / "runtime" / "index.html")
    for name in _core.policy_names():
        description = " ".join(_core.policy_description(name).replace("`", "").split())
        assert name in runtime and description in runtime, name


@pytest.mark.parametrize("page", ["index.md", "cc.md", "tensors.md"])
def test_the_pages_python_examples_run(page):
    run_python_blocks(ROOT / "docs" / page)


def test_help_names_every_default():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    for name, sub in commands.choices.items():
        formatter = sub._get_formatter()
        for action in sub._actions:
            shown = action.default not in (None, False, argparse.SUPPRESS) and action.option_strings
            if shown and action.help is not None:
                assert "default" in formatter._get_help_string(action), (name, action.dest)
