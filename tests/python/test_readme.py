"""The README's Python example runs as written, its policy table is the registry's, its links
into docs/ lead somewhere, and the staging table there is the registry's."""

from __future__ import annotations

import re
from pathlib import Path


def test_readme_python_examples_run():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "the README has no Python example"
    for code in blocks:
        if "import tilecc" in code:
            exec(compile(code, "README.md", "exec"), {})


def test_policy_table_is_the_registry():
    # The README's table of policies is the registry's: every registered policy, described in
    # the words it was registered with, and nothing else.
    from tilecc import _core

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)`(?: \(default\))? \| (.*) \|$", readme, re.M)
    assert dict(rows) == {name: _core.policy_description(name) for name in _core.policy_names()}
    assert len(rows) == len(_core.policy_names())


def test_links_into_docs_exist_and_the_staging_table_is_the_registry():
    from tilecc.staging import SCHEDULES

    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)]+)\)", readme)
    assert links and all((root / link).is_file() for link in links)
    staging = (root / "docs" / "out-of-core.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)`(?: \(default\))? \|", staging, re.M)
    assert rows == list(SCHEDULES)
