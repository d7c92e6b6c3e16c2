"""MkDocs hooks: the pages' generated parts, made from the code at build time so that they
cannot drift from it. A page asks for one with a marker line ``<!-- generated: NAME -->``:

- ``policies``: the scheduling policies, from the core's registry, in the words each was
  registered with;
- ``cli``: every ``tilecc`` command's options, from the parser itself, defaults included.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def policies_table() -> str:
    from tilecc import _core
    from tilecc.options import RuntimeOptions

    default = RuntimeOptions().policy
    rows = ["| policy | how tasks reach workers |", "|---|---|"]
    for name in _core.policy_names():
        shown = f"`{name}` (default)" if name == default else f"`{name}`"
        rows.append(f"| {shown} | {_core.policy_description(name)} |")
    return "\n".join(rows)


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    names = [f"`{flag}`" for flag in action.option_strings]
    takes = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
    metavar = action.metavar or action.dest.upper()
    return ", ".join(names) + (f" `{metavar}`" if takes else "")


def _default(action: argparse.Action) -> str:
    if isinstance(action, argparse.BooleanOptionalAction) and action.default is not None:
        return "on" if action.default else "off"
    if action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return f"`{action.default}`"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def cli_reference() -> str:
    from tilecc.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, sub in commands.choices.items():
        summary = sub.description or commands_help(commands, name)
        out += [f"### tilecc {name}", "", _cell(summary), ""]
        out += ["| option | default | meaning |", "|---|---|---|"]
        for group in sub._action_groups:
            for action in group._group_actions:
                if isinstance(action, argparse._HelpAction):
                    continue
                out.append(f"| {_flags(action)} | {_default(action)} | {_cell(action.help)} |")
        out.append("")
    return "\n".join(out)


def commands_help(commands: argparse._SubParsersAction, name: str) -> str:
    for choice in commands._choices_actions:
        if choice.dest == name:
            return str(choice.help)
    return ""


GENERATORS = {"policies": policies_table, "cli": cli_reference}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def generate(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: no generated part named {name!r}.")
        return GENERATORS[name]()

    return MARKER.sub(generate, markdown)
