"""`studyapp import` with no PATH rewrites every block-less note of the vault in place, so a
mistaken `--vault` (a home folder, `/`) would rewrite files across the machine (it once added
blocks to 804 files under /proc/self). Past `MANY_NOTES` block-less notes it first says how many
and where, and asks on a terminal; without one it refuses, pointing at --dry-run and --yes."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vault_fixtures import write

from studyapp.cli import main
from studyapp.vault.importer import MANY_NOTES

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-03-10T08:00"


def plain_notes(vault: Path, count: int) -> dict[str, bytes]:
    """`count` block-less notes (and one with its block, which import leaves alone), by path."""
    for n in range(count):
        write(vault / "sub" / f"n{n:02}.md", f"# Note {n}\nbody\n")
    write(vault / "has-block.md", "---\nreview_count: 0\n---\n# Kept\n")
    return files(vault)


def files(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def run_import(vault: Path, *args: str) -> int:
    return main(["import", *args, "--vault", str(vault), "--now", NOW])


def answering(monkeypatch, answer: str) -> list[str]:
    """A terminal on standard input whose user types `answer`; returns the questions asked."""
    asked: list[str] = []

    def fake_input(prompt: str = "") -> str:
        asked.append(prompt)
        return answer

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(builtins, "input", fake_input)
    return asked


def test_the_limit_is_twenty():
    assert MANY_NOTES == 20


def test_without_a_terminal_more_than_twenty_are_refused_in_one_line(tmp_path, capsys):
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 1)
    assert run_import(vault) == 1
    out, err = capsys.readouterr()
    refusal = [line for line in err.splitlines() if line.startswith("studyapp: error:")]
    assert len(refusal) == 1 and out == "", (out, err)
    assert f"21 notes in {vault}" in refusal[0], refusal
    assert "studyapp import --dry-run" in refusal[0] and "--yes" in refusal[0], refusal
    assert files(vault) == before


def test_yes_adds_them_without_asking(tmp_path, capsys, monkeypatch):
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 1)
    asked = answering(monkeypatch, "n")
    assert run_import(vault, "--yes") == 0
    assert asked == []
    after = files(vault)
    assert after["has-block.md"] == before["has-block.md"]
    assert all(after[p].startswith(b"---\ncreated: '2026-03-10'\n") for p in after if p.startswith("sub/"))
    assert "import 21 note(s)" in capsys.readouterr().out


def test_twenty_or_fewer_are_added_as_before(tmp_path, capsys, monkeypatch):
    """Notes with a block already, and notes the vault cannot read, do not count."""
    vault = tmp_path / "vault"
    plain_notes(vault, MANY_NOTES)
    for n in range(5):
        write(vault / "done" / f"d{n}.md", "---\nreview_count: 1\n---\n# Done\n")
    write(vault / "bad.md", b"\xff\xfe not utf-8")
    asked = answering(monkeypatch, "n")
    assert run_import(vault) == 1  # bad.md is reported, as before
    assert asked == []
    assert "import 20 note(s)" in capsys.readouterr().out


def test_a_dry_run_never_asks(tmp_path, capsys, monkeypatch):
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 5)
    asked = answering(monkeypatch, "n")
    assert run_import(vault, "--dry-run") == 0
    assert asked == []
    assert "would import 25 note(s)" in capsys.readouterr().out
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    assert run_import(vault, "--dry-run") == 0  # nor refuses without a terminal
    assert files(vault) == before


def test_on_a_terminal_it_says_how_many_and_where_then_asks(tmp_path, capsys, monkeypatch):
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 3)
    asked = answering(monkeypatch, "n")
    assert run_import(vault) == 1
    out = capsys.readouterr().out
    assert len(asked) == 1 and asked[0].endswith("[y/N] "), asked
    assert f"23 notes in {vault}" in out, out
    assert "sub/n00.md" in out and "sub/n04.md" in out and "sub/n05.md" not in out, out
    assert "and 18 more" in out and "not imported" in out, out
    assert files(vault) == before

    asked = answering(monkeypatch, "y")
    assert run_import(vault) == 0
    assert len(asked) == 1
    assert all(raw.startswith(b"---\n") for raw in files(vault).values())


def test_a_real_terminal_is_asked_and_no_is_the_default(tmp_path):
    """Through a pseudo-terminal, as a user at a shell: an empty answer (Enter) is no."""
    import pty

    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 1)
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDYAPP_DATA_DIR=str(tmp_path / "data"))
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "studyapp", "import", "--vault", str(vault), "--now", NOW],
                            stdin=follower, stdout=follower, stderr=follower, env=env, cwd=ROOT)
    os.close(follower)
    seen = ""
    try:
        deadline = time.monotonic() + 60
        while "[y/N]" not in seen and time.monotonic() < deadline:
            seen += os.read(leader, 4096).decode("utf-8", "replace")
        assert "[y/N]" in seen, seen
        os.write(leader, b"\n")
        assert proc.wait(timeout=60) == 1
        try:
            while chunk := os.read(leader, 4096):
                seen += chunk.decode("utf-8", "replace")
        except OSError:  # EIO once the process has gone
            pass
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
    assert f"21 notes in {vault}" in seen and "not imported" in seen, seen
    assert files(vault) == before


@pytest.mark.parametrize("answer", ["", "no", "maybe"])
def test_anything_but_yes_is_no(tmp_path, capsys, monkeypatch, answer):
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 1)
    answering(monkeypatch, answer)
    assert run_import(vault) == 1
    assert files(vault) == before


@pytest.mark.parametrize("stdin", ["piped", "closed"])
def test_a_script_without_a_terminal_is_refused_and_nothing_written(tmp_path, stdin):
    """A cron job or a script (`studyapp import --vault "$DIR"` with DIR unset...): standard
    input piped, or closed altogether (`<&-`), is no terminal: refused in one line, exit 1."""
    vault = tmp_path / "vault"
    before = plain_notes(vault, MANY_NOTES + 1)
    command = [sys.executable, "-m", "studyapp", "import", "--vault", str(vault), "--now", NOW]
    if stdin == "closed":
        command = ["sh", "-c", 'exec "$0" "$@" <&-', *command]
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDYAPP_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run(command, input="y\n" if stdin == "piped" else None, capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=60)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "--dry-run" in result.stderr and "--yes" in result.stderr and "Traceback" not in result.stderr
    assert files(vault) == before
