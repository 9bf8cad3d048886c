"""The CLI skeleton, the paths module and settings."""

from __future__ import annotations

import subprocess
import sys
from datetime import timezone

import pytest

from studyapp import __version__
from studyapp.cli import main
from studyapp.config import ConfigError, load_settings
from studyapp.context import build_context, parse_now
from studyapp.paths import cards_dir, kernels_dir, resolve_paths


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for option in ("--vault", "--data-dir", "--now"):
        assert option in out


def test_global_options_work_after_the_subcommand_too():
    from studyapp.cli import build_parser

    parser = build_parser()
    before = parser.parse_args(["--vault", "V", "due"])
    after = parser.parse_args(["due", "--vault", "V"])
    assert before.vault == after.vault == "V"


def _choices(parser) -> dict:
    import argparse

    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_the_command_table_names_each_subcommand_and_the_module_that_registers_it():
    import importlib

    from studyapp.cli import COMMAND_MODULES, COMMANDS, build_parser

    assert sorted(_choices(build_parser())) == sorted(COMMANDS)
    for module in COMMAND_MODULES:
        short = module.rsplit(".", 1)[1]
        built = _choices(build_parser(next(c for c, m in COMMANDS.items() if m == short)))
        assert sorted(built) == sorted(c for c, m in COMMANDS.items() if m == short), module
        assert importlib.import_module(module)


@pytest.mark.parametrize("argv", [
    ["due", "--json"], ["--vault", "due", "due"], ["--vault=V", "--now", "2026-01-02", "stats"],
    ["rate", "a.md", "--rating", "good", "--vault", "V"], ["backup", "list"], ["grade", "sdpa", "x.py"],
    ["--data-dir", "rate", "undo"],
])
def test_a_command_line_parses_the_same_with_only_its_commands_module(argv):
    from studyapp.cli import build_parser, command_named

    assert command_named(argv) is not None
    assert vars(build_parser(command_named(argv)).parse_args(argv)).keys() == vars(build_parser().parse_args(argv)).keys()
    partial, full = build_parser(command_named(argv)).parse_args(argv), build_parser().parse_args(argv)
    assert {k: v for k, v in vars(partial).items() if not callable(v)} == {k: v for k, v in vars(full).items() if not callable(v)}
    assert getattr(partial.handler, "__qualname__", None) == getattr(full.handler, "__qualname__", None)


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["nonsense"], ["--vault"], ["-x", "due"]])
def test_anything_else_gets_the_whole_parser(argv):
    from studyapp.cli import command_named

    assert command_named(argv) is None


@pytest.mark.parametrize("columns", [None, "70", "0", "wide"])
def test_the_help_is_as_wide_as_shutil_says_the_terminal_is(monkeypatch, columns):
    import shutil

    from studyapp.cli import _columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("argv, collecting", [
    (["due"], False),
    (["drills", "--json"], False),
    (["watch", "sdpa"], True),
    ([], True),  # the terminal app
])
def test_the_collector_is_off_only_while_a_short_command_runs(tmp_path, monkeypatch, argv, collecting):
    import gc

    import studyapp.commands
    import studyapp.commands.drills
    import studyapp.commands.notes

    seen = []

    def handler(*args, **kwargs):
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(studyapp.commands.notes, "print_due", handler)
    monkeypatch.setattr(studyapp.commands.drills, "list_drills", handler)
    monkeypatch.setattr(studyapp.commands.drills, "watch_drill", handler)
    monkeypatch.setattr(studyapp.commands, "open_app", handler)
    monkeypatch.setattr(studyapp.commands, "warn_about_history", lambda ctx: None)
    monkeypatch.setattr(studyapp.commands, "remember_history", lambda ctx: None)
    assert gc.isenabled()
    assert main([*argv, "--vault", str(tmp_path), "--data-dir", str(tmp_path / "data")]) == 0
    assert seen == [collecting]
    assert gc.isenabled()  # as it was before: a test process, a caller's process


def test_data_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_DATA_DIR", str(tmp_path / "env"))
    assert resolve_paths().data_dir == (tmp_path / "env").resolve()
    assert resolve_paths(data_dir=tmp_path / "flag").data_dir == (tmp_path / "flag").resolve()


def test_vault_precedence(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    default = resolve_paths(data_dir=data)
    assert default.vault_is_default and default.vault_dir == (data / "vault").resolve()
    (data / "config.toml").write_text(f"vault = '{tmp_path / 'configured'}'\n")
    assert resolve_paths(data_dir=data).vault_dir == (tmp_path / "configured").resolve()
    flagged = resolve_paths(vault=tmp_path / "flag", data_dir=data)
    assert flagged.vault_dir == (tmp_path / "flag").resolve() and not flagged.vault_is_default


def test_default_vault_is_seeded_once_from_the_starter_deck(tmp_path):
    ctx = build_context(data_dir=str(tmp_path))
    vault = ctx.paths.vault_dir
    bundled = sorted(
        p.relative_to(cards_dir())
        for p in cards_dir().rglob("*.md")
        if not p.name.startswith("README")  # the deck's README documents it; not a note
    )
    assert sorted(p.relative_to(vault) for p in vault.rglob("*.md")) == bundled
    (vault / "mine.md").write_text("# my own note\n")
    build_context(data_dir=str(tmp_path))
    assert (vault / "mine.md").exists(), "an existing default vault must never be re-seeded"


def test_configured_vault_is_never_seeded(tmp_path):
    ctx = build_context(vault=str(tmp_path / "v"), data_dir=str(tmp_path / "d"))
    assert not ctx.paths.vault_dir.exists()


def test_bundled_folders_exist():
    assert cards_dir().is_dir()
    assert (kernels_dir() / "__init__.py").is_file()


def test_parse_now():
    assert parse_now("2026-11-22T09:30:00+00:00").tzinfo == timezone.utc
    assert parse_now("2026-11-22").tzinfo is not None
    with pytest.raises(ValueError, match="--now"):
        parse_now("yesterday")


def test_bad_now_is_a_clear_error(capsys):
    assert main(["due", "--now", "yesterday"]) == 2
    assert "--now" in capsys.readouterr().err


def test_settings(tmp_path):
    cfg = tmp_path / "config.toml"
    assert load_settings(cfg).desired_retention == 0.9
    cfg.write_text("desired_retention = 0.85\nnew_per_day = 5\n")
    s = load_settings(cfg)
    assert (s.desired_retention, s.new_per_day) == (0.85, 5)
    cfg.write_text("desired_retention = 'high'\n")
    with pytest.raises(ConfigError, match="desired_retention"):
        load_settings(cfg)
    cfg.write_text("colour = 'red'\n")
    with pytest.raises(ConfigError, match="unknown"):
        load_settings(cfg)
    cfg.write_text("this is not toml")
    with pytest.raises(ConfigError, match="config.toml"):
        load_settings(cfg)


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "studyapp", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and __version__ in out.stdout


def test_kernels_load_under_a_private_name_only():
    import sys

    from studyapp.kernels_loader import load_kernels

    pkg = load_kernels()
    assert pkg.__name__ == "studyapp_kernels"
    assert load_kernels() is pkg
    assert "kernels" not in sys.modules
