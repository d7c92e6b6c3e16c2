"""The README's Python examples run as written, its links into docs/ lead somewhere, and the
staging table there is the registry's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def run_python_blocks(path: Path) -> None:
    """Run every Python block of a Markdown page that uses tilecc, as a reader would."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    assert blocks, f"{path.name} has no Python example"
    for code in blocks:
        if "tilecc" in code:
            exec(compile(code, path.name, "exec"), {})


def test_readme_python_examples_run():
    run_python_blocks(Path(__file__).parents[2] / "README.md")


def test_links_into_docs_exist_and_the_staging_table_is_the_registry():
    from tilecc.staging import SCHEDULES

    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text()
    links = re.findall(r"\]\(([^):#]+)\)", readme)  # relative links: docs, benchmarks, ...
    assert any(link.startswith("docs/") for link in links)
    assert all((root / link).is_file() for link in links), links
    staging = (root / "docs" / "out-of-core.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)`(?: \(default\))? \|", staging, re.M)
    assert rows == list(SCHEDULES)


def test_the_results_table_is_made_from_the_results():
    root = Path(__file__).parents[2]
    check = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "results_table.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
