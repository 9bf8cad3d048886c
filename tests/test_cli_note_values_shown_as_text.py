"""A note's metadata values must not reach the terminal as control sequences.

A double-quoted YAML value can hold any control character through its escapes (`"\\e[2J"`,
`"\\x07"`, `"\\r"`). Titles are passed through `textwidth.shown` (ESC shown as ␛), but `due`
prints `difficulty` raw in its DIFF column (`commands/notes.py`) and `stats` prints each tag raw
under "Mastery by tag" (`stats.py`, `fit(tag, width)`): one note recolours the table, clears
the screen (`\\e[2J`), rings the bell or overwrites the line with `\\r`/`\\b`. (An OSC sequence
could set the window title or, in terminals that allow it, the clipboard.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T09:00"
CONTROLS = ("\x1b", "\x07", "\x08", "\r")


def _vault(tmp_path: Path) -> Path:
    reviewed = (USERS_NOTE.replace("review_count: 0", "review_count: 3")
                .replace("last_reviewed: null", "last_reviewed: '2026-06-01'")
                .replace("next_review: '2026-03-02'", "next_review: '2026-06-10'"))
    vault = tmp_path / "vault"
    write(vault / "a.md", reviewed)
    write(vault / "esc.md", reviewed.replace("difficulty: medium", 'difficulty: "\\e[31mRED\\x07"')
          .replace("- 归一化\n", '- "\\e[2Jtag\\r\\bX"\n'))
    return vault


@pytest.mark.parametrize("command,shows", [("due", "esc.md"), ("stats", "Mastery by tag")])
def test_note_values_are_shown_with_control_characters_as_symbols(tmp_path, capsys, command, shows):
    vault = _vault(tmp_path)
    args = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]
    assert main([command, *args]) == 0
    out = capsys.readouterr().out
    assert shows in out
    leaked = [repr(ch) for ch in CONTROLS if ch in out]
    assert not leaked, f"`{command}` wrote {leaked} from a note to the terminal:\n{out!r}"
