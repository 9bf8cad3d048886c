"""The command line as a user runs it, at more of its edges: an ASCII-only terminal, a config
file that is not a plain readable file or names a relative vault or a mistyped theme, output
closed before the command starts, an empty backup name, and Ctrl-C while it starts."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studyapp.cli import main
from studyapp.errors import ExitCode

_SCRIPT = Path(sys.executable).with_name("studyapp")
STUDYAPP = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "studyapp"]
"""The installed `studyapp` command, as a user types it."""
NOW = "2026-04-06T09:00"
TITLE = "Café naïve ☕ 注意力"
NOTE = f"---\ntags: [注意力]\n---\n# {TITLE}\n\nSoftmax over the keys.\n"


def studyapp(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
             cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `studyapp ARGS` with its data dir in `tmp_path/data`, as a user would."""
    full_env = {**os.environ, "STUDYAPP_DATA_DIR": str(tmp_path / "data"), **(env or {})}
    return subprocess.run([*STUDYAPP, *args], env=full_env, cwd=cwd or tmp_path, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault of one note whose title, file name and tag are not ASCII."""
    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "café.md").write_text(NOTE, encoding="utf-8")
    return folder


def test_non_ascii_titles_degrade_on_an_ascii_stdout_and_a_rate_counts_once(tmp_path, vault):
    ascii_out = {"PYTHONIOENCODING": "ascii"}
    common = ["--vault", str(vault), "--now", NOW]

    due = studyapp(tmp_path, "due", *common, env=ascii_out)
    assert due.returncode == 0, due.stderr
    assert "caf" in due.stdout and "Traceback" not in due.stderr

    listed = studyapp(tmp_path, "due", "--json", *common, env=ascii_out)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.isascii()
    assert json.loads(listed.stdout)[0]["title"] == TITLE  # still JSON, the title intact

    rated = studyapp(tmp_path, "rate", "café.md", "--rating", "good", *common, env=ascii_out)
    assert rated.returncode == 0, rated.stderr  # a script that retries on failure rates once
    assert "next review" in rated.stdout

    stats = studyapp(tmp_path, "stats", *common, env=ascii_out)
    assert stats.returncode == 0, stats.stderr
    assert "Mastery by tag" in stats.stdout
    counted = studyapp(tmp_path, "stats", "--json", *common)
    assert json.loads(counted.stdout)["total_reviews"] == 1


def test_a_relative_vault_in_config_is_relative_to_the_config_file(tmp_path):
    data = tmp_path / "data"
    (data / "notes").mkdir(parents=True)
    (data / "notes" / "mine.md").write_text(NOTE, encoding="utf-8")
    (data / "config.toml").write_text('vault = "notes"\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "notes").mkdir(parents=True)
    (elsewhere / "notes" / "not-mine.md").write_text(NOTE, encoding="utf-8")

    due = studyapp(tmp_path, "due", "--json", "--now", NOW, cwd=elsewhere)
    assert due.returncode == 0, due.stderr
    assert [row["path"] for row in json.loads(due.stdout)] == ["mine.md"]

    home = tmp_path / "home"
    (home / "deck").mkdir(parents=True)
    (home / "deck" / "home.md").write_text(NOTE, encoding="utf-8")
    (data / "config.toml").write_text('vault = "~/deck"\n', encoding="utf-8")
    due = studyapp(tmp_path, "due", "--json", "--now", NOW, cwd=elsewhere, env={"HOME": str(home)})
    assert due.returncode == 0, due.stderr
    assert [row["path"] for row in json.loads(due.stdout)] == ["home.md"]


@pytest.mark.parametrize("args", [["due", "--json"], ["due"]])
def test_a_closed_stdout_is_a_clean_failure_not_a_bug(tmp_path, vault, args):
    result = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *STUDYAPP, *args, "--vault", str(vault)],
                            env={**os.environ, "STUDYAPP_DATA_DIR": str(tmp_path / "data")},
                            stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == ExitCode.FAILED, result.stderr  # as into a closed pipe
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "standard output" in lines[0], result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_fifo_named_config_toml_is_refused_at_once(tmp_path, vault):
    (tmp_path / "data").mkdir()
    os.mkfifo(tmp_path / "data" / "config.toml")
    try:
        result = studyapp(tmp_path, "due", "--vault", str(vault), timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("studyapp waited on a FIFO named config.toml")
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "config.toml" in result.stderr and "not a regular file" in result.stderr


def test_a_folder_named_config_toml_is_a_config_error_like_a_malformed_one(tmp_path, vault):
    (tmp_path / "data" / "config.toml").mkdir(parents=True)
    folder = studyapp(tmp_path, "due", "--vault", str(vault))
    (tmp_path / "data" / "config.toml").rmdir()
    (tmp_path / "data" / "config.toml").write_text("vault =\n", encoding="utf-8")
    malformed = studyapp(tmp_path, "due", "--vault", str(vault))
    assert malformed.returncode == ExitCode.USAGE, malformed.stderr
    assert folder.returncode == malformed.returncode, folder.stderr
    assert "config.toml" in folder.stderr and "not a regular file" in folder.stderr
    assert len(folder.stderr.strip().splitlines()) == 1, folder.stderr


def test_an_unreadable_config_says_it_cannot_be_read(tmp_path, vault, monkeypatch, capsys):
    """The reader's own PermissionError (chmod 000 does not stop root, who runs some suites)."""
    config = tmp_path / "data" / "config.toml"
    config.parent.mkdir()
    config.write_text('theme = "nord"\n', encoding="utf-8")
    real_open, real_read_bytes = os.open, Path.read_bytes

    def refuse(path) -> None:
        if os.fspath(path) == str(config):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))

    def refusing_open(path, flags, *args, **kwargs):
        refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def refusing_read_bytes(self):
        refuse(self)
        return real_read_bytes(self)

    monkeypatch.setattr(os, "open", refusing_open)  # however the file is opened
    monkeypatch.setattr(Path, "read_bytes", refusing_read_bytes)
    code = main(["due", "--vault", str(vault), "--data-dir", str(config.parent)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert "config.toml" in err and "cannot be read" in err and "ermission denied" in err, err
    assert "writable" not in err, err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_a_chmod_000_config_says_it_cannot_be_read(tmp_path, vault):
    config = tmp_path / "data" / "config.toml"
    config.parent.mkdir()
    config.write_text('theme = "nord"\n', encoding="utf-8")
    config.chmod(0)
    try:
        result = studyapp(tmp_path, "due", "--vault", str(vault))
    finally:
        config.chmod(0o600)
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "cannot be read" in result.stderr and "writable" not in result.stderr


def test_a_mistyped_theme_is_named_in_a_warning_and_the_command_runs(tmp_path, vault):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text('theme = "nrod"\n', encoding="utf-8")
    result = studyapp(tmp_path, "due", "--vault", str(vault), "--now", NOW)
    assert result.returncode == 0, result.stderr
    assert "café.md" in result.stdout
    warned = [line for line in result.stderr.splitlines() if "nrod" in line]
    assert len(warned) == 1, result.stderr
    assert "warning" in warned[0] and "theme" in warned[0]
    assert "textual-dark" in warned[0] and "nord" in warned[0]  # the allowed ones


def test_the_themes_config_allows_are_textuals():
    from textual.app import App

    from studyapp.config import THEMES

    assert sorted(THEMES) == sorted(App().available_themes)


def test_restoring_an_empty_backup_name_is_a_usage_error_that_restores_nothing(tmp_path, vault):
    common = ["--vault", str(vault), "--now", NOW]
    assert studyapp(tmp_path, "rate", "café.md", "--rating", "good", *common).returncode == 0
    assert studyapp(tmp_path, "backup", "create", *common).returncode == 0
    backups = sorted(p.name for p in (tmp_path / "data" / "backups").iterdir())

    result = studyapp(tmp_path, "backup", "restore", "", *common)
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert "restored" not in result.stdout
    assert sorted(p.name for p in (tmp_path / "data" / "backups").iterdir()) == backups


PACKAGE = str(Path(main.__code__.co_filename).parent)


def _before_studyapp(err: str) -> bool:
    """What Python prints for a Ctrl-C before any line of studyapp runs, which no program can
    silence: in the interpreter's own start-up (`site`, sys.path, "Failed checking if argv[0] is
    an import path entry"), in the launcher pip writes (its `import re`), or while Python finds
    and reads the package's files for the launcher's `from studyapp.cli import main`, up to
    "line 0" of cli.py, the instant before its first statement sets the hooks. None of it names
    another line of the package, nor is it one of studyapp's own `studyapp: ...` lines."""
    ours = re.findall(rf'File "{re.escape(PACKAGE)}{re.escape(os.sep)}([^"]+)", line (\d+)', err)
    return bool(err) and "studyapp:" not in err and all(frame == ("cli.py", "0") for frame in ours)


def test_ctrl_c_while_the_command_starts_prints_no_traceback(tmp_path, vault):
    """Ctrl-C at a range of moments from the start of a real `studyapp due`: while its modules
    import, while it runs. Each run ends as interrupted (130, or by the signal itself, which a
    shell shows as 130) and with no traceback."""
    env = {**os.environ, "STUDYAPP_DATA_DIR": str(tmp_path / "data")}
    assert studyapp(tmp_path, "due", "--vault", str(vault)).returncode == 0  # first run's seeding done
    started = time.perf_counter()
    assert studyapp(tmp_path, "due", "--vault", str(vault)).returncode == 0
    whole = time.perf_counter() - started  # the moments are spread over a whole run, on this machine
    interrupted = 0
    for step in range(24):
        proc = subprocess.Popen([*STUDYAPP, "due", "--vault", str(vault)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(step * whole / 24)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if _before_studyapp(err):
            continue
        assert "Traceback" not in err, f"after {step * whole / 24 * 1000:.0f} ms:\n{err}"
        assert proc.returncode in (0, ExitCode.INTERRUPTED, -signal.SIGINT), (proc.returncode, err)
        interrupted += proc.returncode != 0
    assert interrupted >= 12


_INTERRUPT_AT_IMPORT = """
import os, runpy, signal, sys
nth, loads = int(sys.argv[1]), 0
def interrupt_at(event, args):
    global loads
    if event == "import":
        loads += 1
        if loads == nth:
            os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(interrupt_at)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.skipif(not _SCRIPT.exists(), reason="no `studyapp` launcher installed")
def test_ctrl_c_at_any_import_of_the_start_prints_no_traceback(tmp_path, vault):
    """The same without timing: the launcher run with Ctrl-C at its first, fifth, ninth, ...
    module load, through every import `due` makes (about 170)."""
    env = {**os.environ, "STUDYAPP_DATA_DIR": str(tmp_path / "data")}
    assert studyapp(tmp_path, "due", "--vault", str(vault)).returncode == 0
    ours = 0
    for nth in range(1, 200, 4):
        result = subprocess.run([sys.executable, "-c", _INTERRUPT_AT_IMPORT, str(nth), str(_SCRIPT),
                                 "due", "--vault", str(vault)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, timeout=60)
        if _before_studyapp(result.stderr):
            continue
        assert "Traceback" not in result.stderr, f"at load {nth}:\n{result.stderr}"
        assert result.returncode in (0, ExitCode.INTERRUPTED, -signal.SIGINT), (nth, result.stderr)
        ours += result.returncode != 0
    assert ours >= 25  # most loads are studyapp's or made for it
