"""One odd note in a big vault: it gets one clear line (its path and what is wrong, in words a user
understands) from `due`, `doctor` and `import`, is never written, and the rest of the vault is
listed, rated and imported as usual. A few hundred generated notes stand for the users' thousands."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-11-23T09:00:00+00:00"
NOTES = 300
FIRST = "topic0/note000.md"


def _big_vault(root: Path) -> Path:
    vault = root / "vault"
    body = "\n\n".join(["在实际训练中，我们需要关注数值稳定性与显存占用。" * 8] * 10)
    for i in range(NOTES):
        write(vault / f"topic{i % 6}" / f"note{i:03d}.md",
              USERS_NOTE.replace("# 层归一化", f"# {i} 层归一化") + body + "\n")
    return vault


def _add(vault: Path, name: str, raw: bytes) -> Path:
    path = vault / name
    path.write_bytes(raw)
    old = time.time() - 3600  # old enough for the metadata cache to keep every note
    for folder, _dirs, files in os.walk(vault):
        for file in files:
            os.utime(os.path.join(folder, file), (old, old))
    return path


def _args(vault: Path, data: Path, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", NOW]


def _lines_naming(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if name in line]


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")


def _check_one_odd_note(tmp_path, capsys, name: str, raw: bytes, words: list[str]) -> list[str]:
    """Run due (cold, warm), doctor, import and a rating on a normal note; returns the lines
    naming the odd note. Each must hold every word in `words`."""
    vault = _big_vault(tmp_path)
    odd = _add(vault, name, raw)
    data = tmp_path / "data"
    said = []
    for _ in range(2):
        assert main(_args(vault, data, "due", "--json")) == 0
        out, err = capsys.readouterr()
        listed = {row["path"] for row in json.loads(out)}
        assert FIRST in listed and name not in listed
        said += _lines_naming(err, name)
        assert len(_lines_naming(err, name)) == 1, err
    assert main(_args(vault, data, "doctor")) == 1
    out, _err = capsys.readouterr()
    assert f"{NOTES} readable" in out and "1 with problems" in out
    said += _lines_naming(out, name)
    assert main(_args(vault, data, "import")) == 1
    out, err = capsys.readouterr()
    said += _lines_naming(err, name)
    assert main(_args(vault, data, "rate", FIRST, "--rating", "good")) == 0
    capsys.readouterr()
    assert "review_count: 1" in (vault / FIRST).read_text(encoding="utf-8")
    assert odd.read_bytes() == raw, "the odd note was written"
    assert len(said) == 4
    for line in said:
        assert "Traceback" not in line
        for word in words:
            assert word in line, line
    return said


@pytest.mark.parametrize("raw", [
    b"---\n\nSome text under a rule\n\n---\n\n# Title\n\nbody\n",
    b"---\nJust a sentence.\n---\n# Title\n",
])
def test_a_note_opening_with_a_horizontal_rule_is_explained(tmp_path, capsys, no_torch, raw):
    """`---`, text, `---` on top is read as a metadata block holding a string; the reason was
    "metadata block must be a mapping of keys to values, not a str" (Python's type name)."""
    said = _check_one_odd_note(tmp_path, capsys, "rule.md", raw, ["rule.md", "horizontal rule", "key: value"])
    assert not any(" str" in line for line in said)


def test_a_block_that_is_a_list_is_explained(tmp_path, capsys, no_torch):
    _check_one_odd_note(tmp_path, capsys, "list.md", b"---\n- a\n- b\n---\n# T\n",
                        ["list.md", "list ('- item' lines)", "key: value"])


@pytest.mark.parametrize("line,value", [("next_review: '2026-03-02'", "next_review: 2026-02-30"),
                                        ("created: '2026-03-02'", "created: 2026-13-01  # typo")])
def test_an_impossible_unquoted_date_names_its_key_and_line(tmp_path, capsys, no_torch, line, value):
    """YAML builds a date from `2026-02-30` itself and fails; the reason was "metadata block is
    not valid YAML: day is out of range for month", naming neither the key nor the line."""
    raw = USERS_NOTE.replace(line, value).encode()
    key = value.split(":")[0]
    _check_one_odd_note(tmp_path, capsys, "date.md", raw,
                        ["date.md", value.split("#")[0].strip(), "not a real date", "line "])
    assert key in raw.decode()


@pytest.mark.parametrize("char", ["\x00", "\x07", "\ufffe"])
def test_a_control_character_in_the_block_names_its_line(tmp_path, capsys, no_torch, char):
    """The reason was YAML's reader error: '... control characters are not allowed in
    "<unicode string>", position 96', with no line."""
    raw = USERS_NOTE.replace("difficulty: medium", f"difficulty: med{char}ium").encode()
    said = _check_one_odd_note(tmp_path, capsys, "ctrl.md", raw, ["ctrl.md", "line 6", f"U+{ord(char):04X}"])
    assert not any("<unicode string>" in line or "position" in line for line in said)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_device_named_like_a_note_is_reported(tmp_path, capsys, no_torch, kind):
    """It was skipped without a word: `due` and `doctor` listed every other note and said nothing
    of it, so the user never learned why their "note" was missing."""
    vault = _big_vault(tmp_path)
    odd = vault / "odd.md"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    data = tmp_path / "data"
    for _ in range(2):
        assert main(_args(vault, data, "due", "--json")) == 0
        out, err = capsys.readouterr()
        assert FIRST in {row["path"] for row in json.loads(out)}
        said = _lines_naming(err, "odd.md")
        assert len(said) == 1 and "not a regular file" in said[0], err
    assert main(_args(vault, data, "doctor")) == 1
    out, _err = capsys.readouterr()
    assert any("odd.md" in line and "not a regular file" in line for line in out.splitlines())
    assert main(_args(vault, data, "import")) == 1
    assert "odd.md" in capsys.readouterr().err


def test_import_does_not_claim_a_block_it_did_not_add(tmp_path, capsys, monkeypatch):
    """A note read while another program rewrote it (empty for an instant) looked block-less;
    by the write it had its block again, so import rightly wrote nothing, but still printed
    "add metadata block: hot.md" and counted it as imported."""
    from studyapp.vault import Vault

    vault = _big_vault(tmp_path)
    hot = _add(vault, "hot.md", b"")
    full = USERS_NOTE.encode()
    load = Vault.load

    def load_then_editor_saves(self, *args, **kwargs):
        snapshot = load(self, *args, **kwargs)
        hot.write_bytes(full)  # the editor's save lands between the read and the write
        return snapshot

    monkeypatch.setattr(Vault, "load", load_then_editor_saves)
    assert main(_args(vault, tmp_path / "data", "import")) == 0
    out = capsys.readouterr().out
    assert "hot.md" not in out and "import 0 note(s)" in out, out
    assert hot.read_bytes() == full


@pytest.mark.parametrize("tags", ["{a: 1, b: [2]}", "[x, {y: 1}, [z]]"])
def test_tags_that_are_not_text_never_become_python_reprs(tmp_path, tags):
    """`tags: {a: 1}` became the tag "{'a': 1}" (Python's repr), shown in `stats` by tag."""
    from studyapp.vault import Vault

    vault = _big_vault(tmp_path)
    _add(vault, "tags.md", USERS_NOTE.replace("tags:\n", f"tags: {tags}\nold_tags:\n").encode())
    note = next(n for n in Vault(vault).load().notes if n.path == "tags.md")
    assert not any(ch in tag for tag in note.tags for ch in "{}[]'"), note.tags


def test_a_cached_reason_from_an_older_parser_is_not_shown(tmp_path, capsys):
    """The cache keeps each unchanged file's problem; the reasons above changed, so rows written
    by an older parser (schema "6") must be discarded, not shown again."""
    import sqlite3

    vault = _big_vault(tmp_path)
    _add(vault, "rule.md", b"---\nJust a sentence.\n---\n# Title\n")
    data = tmp_path / "data"
    assert main(_args(vault, data, "due")) == 0
    capsys.readouterr()
    cache = next(p for p in data.rglob("*") if p.is_file() and "cache" in p.name and p.suffix != ".lock")
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE notes SET problem = 'metadata block must be a mapping of keys to values, not a str' "
                   "WHERE problem IS NOT NULL")
        db.execute("DELETE FROM snapshots")  # the rows, not a snapshot of them, are read next
        db.execute("PRAGMA user_version = 6")
    assert main(_args(vault, data, "due")) == 0
    err = capsys.readouterr().err
    assert "not a str" not in err and "horizontal rule" in err, err


def test_a_note_nobody_may_read_is_not_called_only_read_only(tmp_path, capsys, no_torch):
    """Mode 000 was reported as "read-only (no write permission) ... make it writable", a fix
    that left it unreadable."""
    vault = _big_vault(tmp_path)
    locked = _add(vault, "locked.md", USERS_NOTE.encode())
    locked.chmod(0o000)
    try:
        assert main(_args(vault, tmp_path / "data", "due")) == 0
        said = _lines_naming(capsys.readouterr().err, "locked.md")
        assert len(said) == 1 and "read permission" in said[0] and "readable" in said[0], said
    finally:
        locked.chmod(0o644)
