"""The README's Python example runs as written."""

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
