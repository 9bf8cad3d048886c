"""One odd note's title or difficulty breaks `due`'s table for the whole listing.

`due` pads each column with `textwidth.fit`, whose `char_width` counts every character that is
not combining, a zero-width space/joiner or a BOM as one column (two when East Asian wide). Bidi
controls (U+200E/U+200F marks, U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates)
take no column in a terminal (rich, which draws the app, counts them 0 too), so a title holding
them is padded short and its PATH starts left of every other row's. And `shown` turns only C0/C1
controls into symbols: a RIGHT-TO-LEFT OVERRIDE reaches the terminal as it is, and, never closed,
reverses the rest of the line in a terminal that does bidi (the path a user copies into `rate`
reads `dm.ddo`).

The DIFF column is cut and padded by characters (`[:6]:<6`), not by display width: a difficulty
written in Chinese (`difficulty: 困难`, in a vault of Chinese notes) is two columns wider per
character than counted, and shifts that row's TITLE and PATH right.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from rich.cells import cell_len
from vault_fixtures import new_note

NOW = "2026-11-23T09:00:00+00:00"


BIDI_CONTROLS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _due_table(tmp_path, odd_title: str = "Odd", odd_difficulty: str = "medium") -> tuple[list[str], str]:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(30):
        (vault / f"note{i:02d}.md").write_text(new_note(f"Question {i}"),
                                               encoding="utf-8")
    (vault / "a-odd.md").write_text(new_note(odd_title, difficulty=odd_difficulty), encoding="utf-8")
    old = time.time() - 3600
    for entry in os.scandir(vault):
        os.utime(entry.path, (old, old))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), COLUMNS="100", LINES="40")
    done = subprocess.run([sys.executable, "-m", "studyapp", "due", "--vault", str(vault),
                           "--data-dir", str(tmp_path / "data"), "--now", NOW],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    odd = next(line for line in lines if line.endswith("a-odd.md"))
    return lines, odd


def _column_of(line: str, text: str) -> int:
    """The terminal column where `text` starts in `line` (cells, as a terminal draws them)."""
    return cell_len(line[:line.rindex(text)])


def test_a_title_with_bidi_marks_keeps_the_path_column_in_line(tmp_path):
    lines, odd = _due_table(tmp_path, odd_title="\u202eevil\u202c \u200f title \u2067x\u2069")
    header = next(line for line in lines if line.startswith("NEXT REVIEW"))
    other = next(line for line in lines if line.endswith("note00.md"))
    column = _column_of(header, "PATH")
    assert _column_of(other, "note00.md") == column
    assert _column_of(odd, "a-odd.md") == column, (
        f"the PATH of the note whose title holds bidi controls starts at column {_column_of(odd, 'a-odd.md')}, "
        f"every other row's at {column}: `fit` counts each zero-width control as a column\n{header}\n{odd!r}\n{other}")


def test_a_right_to_left_override_in_a_title_does_not_reach_the_terminal(tmp_path):
    _lines, odd = _due_table(tmp_path, odd_title="\u202eevil title")
    raw = [f"U+{ord(ch):04X}" for ch in odd if ch in BIDI_CONTROLS]
    assert not raw, (
        f"`due` prints the title's bidi control(s) {raw} to the terminal as they are ({odd!r}): an "
        "unterminated RIGHT-TO-LEFT OVERRIDE reverses the rest of the row, the PATH included, where ESC "
        "and other controls are shown as symbols")


def test_a_difficulty_written_in_chinese_keeps_the_title_column_in_line(tmp_path):
    lines, odd = _due_table(tmp_path, odd_difficulty="困难")
    header = next(line for line in lines if line.startswith("NEXT REVIEW"))
    other = next(line for line in lines if line.endswith("note00.md"))
    assert _column_of(other, "Question 0") == _column_of(header, "TITLE")
    assert _column_of(odd, "Odd") == _column_of(header, "TITLE"), (
        f"the note with `difficulty: 困难` has its TITLE at column {_column_of(odd, 'Odd')}, the header's at "
        f"{_column_of(header, 'TITLE')}: DIFF is padded by characters, not display width\n{header}\n{odd}\n{other}")
