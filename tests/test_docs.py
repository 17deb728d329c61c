"""The docs say what the code does: every reconcile setting, every command of cashierctl
and reconcile-service (with its subcommands) and every table of the database of record is
documented, and nothing is documented that the code does not have.

Each check compares both sides, so a setting, a command or a table added (or removed) on
one side only fails here. Needs no server."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS_HEADER = "| setting | flag | environment | default |"


def _read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _table_first_column(text: str, header: str) -> list[str]:
    """The backticked names in the first column of the markdown table under `header`."""
    lines = text.splitlines()
    start = lines.index(header) + 2            # skip the |---| line
    names = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        names.append(re.match(r"\| `([^`]+)` \|", line).group(1))
    return names


def _command_paths(parser: argparse.ArgumentParser, prefix: str = "") -> set[str]:
    """'card', 'card issue', ...: every subcommand of the parser, at every depth."""
    paths = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths.add(prefix + name)
                paths |= _command_paths(sub, prefix + name + " ")
    return paths


# ------------------------------------------------------------------ reconcile settings

def test_settings_tables_are_generated_from_the_declaration():
    from reconcile_service.config import SETTING_NAMES, markdown_table
    for page in ("docs/reconcile.md", "docs/operations.md"):
        text = _read(page)
        assert _table_first_column(text, SETTINGS_HEADER) == list(SETTING_NAMES), (
            f"{page}: its settings table does not list the settings of reconcile_service.config.SETTINGS")
        assert markdown_table() in text, (
            f"{page}: its settings table is not what `python -m reconcile_service.config --doc-table` prints; "
            "paste that output over it")


def test_every_setting_is_a_field_a_toml_key_and_its_flag_comes_from_the_declaration():
    from dataclasses import fields

    from reconcile_service.cli import build_parser
    from reconcile_service.config import FLAG_SETTINGS, SETTING_NAMES, Settings
    assert tuple(f.name for f in fields(Settings)) == SETTING_NAMES
    run = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    group = next(g for g in run._action_groups if g.title.startswith("configuration"))
    flags = {option for action in group._group_actions for option in action.option_strings} - {"--config"}
    declared = {s.flag for s in FLAG_SETTINGS} | {f"--no-{s.flag[2:]}" for s in FLAG_SETTINGS if s.type is bool}
    assert flags == declared, "a configuration flag of reconcile-service is not declared in config.SETTINGS"


# ------------------------------------------------------------------ commands

def _readme_cashierctl_commands() -> dict[str, set[str]]:
    """The README's command list: lines '    cashierctl a | b ARG | c {x,y}   what they do'."""
    documented: dict[str, set[str]] = {}
    for line in _read("README.md").splitlines():
        if not line.startswith("    cashierctl "):
            continue
        usage = re.split(r"\s{2,}", line.strip())[0].removeprefix("cashierctl ")
        for item in usage.split(" | "):
            match = re.fullmatch(r"([a-z][a-z-]*)(?: \{([a-z,-]+)\})?(?: .*)?", item.strip())
            assert match, f"README: cannot read {item!r} of the cashierctl list"
            documented.setdefault(match.group(1), set()).update(
                match.group(2).split(",") if match.group(2) else ())
    return documented


def test_readme_lists_every_cashierctl_command_and_subcommand():
    from admin.cashierctl import build_parser
    paths = _command_paths(build_parser())
    in_code = {path: {p.split(" ", 1)[1] for p in paths if p.startswith(path + " ")}
               for path in paths if " " not in path}
    assert _readme_cashierctl_commands() == in_code


def test_reconcile_md_lists_every_reconcile_service_command():
    from reconcile_service.cli import build_parser
    documented = set()
    for line in _read("docs/reconcile.md").splitlines():
        if line.startswith("    reconcile-service "):
            for item in line.strip().removeprefix("reconcile-service ").split(" / "):
                words = re.match(r"(?:[a-z][a-z-]*(?: |$))*", item.strip() + " ").group(0).split()
                if words:
                    documented.add(" ".join(words))
    assert documented == _command_paths(build_parser())


# ------------------------------------------------------------------ tables

def test_reconcile_md_lists_every_table_of_the_models():
    from reconcile_service.models import Base
    documented = _table_first_column(_read("docs/reconcile.md"), "| table | what |")
    assert sorted(documented) == sorted(Base.metadata.tables)
    assert len(documented) == len(set(documented))
