"""One odd note: a review that must append keys to a block holding a line that starts with `...`
hangs for minutes to hours (catastrophic regex backtracking), holding the writer lock.

`writeback._DOCUMENT_END` (`^\\.\\.\\.[ \\t]*(?:#[^\\n]*)?\\r?\\n?(?:[ \\t]*(?:#[^\\n]*)?\\r?\\n?)*\\Z`,
re.M) is searched in every edited block that gains a key (`edit_block`, when the note lacks one
of the review keys: an Obsidian note whose front matter has only `tags` and a description, say).
Its group `(?:[ \\t]*(?:#[^\\n]*)?\\r?\\n?)*` can split a run of blanks between its iterations in
exponentially many ways, and each way is tried when `\\Z` then fails. A line beginning with `...#`
inside a multi-line quoted value (valid YAML: `...` not followed by a blank is no document end),
followed by a few whitespace-only lines (an editor's auto-indent leaves them) and more text, is
enough: 3 lines of 8 blanks cost ~30 s of CPU, 4 lines hours. Nothing else in the note is odd:
`due`, `doctor` list it as a normal new note.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from vault_fixtures import new_note

NOW = "2026-11-23T09:00:00+00:00"
ODD = "scaled.md"
GOOD = "good.md"

ODD_NOTE = (
    "---\n"
    "tags: [attention]\n"
    "description: 'Why we scale the scores\n"
    "...#1 reason: keep softmax out of saturation\n"
    + "        \n" * 4
    + "  and keep the gradients alive'\n"
    "---\n"
    "# Why scale by sqrt(d_k)\n\n## 面试标准答案\n\nKeeps the softmax out of saturation.\n"
)

GOOD_NOTE = new_note("What does layer norm normalise over?", "The features of each token.")


def _run(vault: Path, data: Path, *args: str, timeout: float) -> subprocess.CompletedProcess | None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    try:
        return subprocess.run([sys.executable, "-m", "studyapp", *args, "--vault", str(vault),
                               "--data-dir", str(data), "--now", NOW],
                              capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return None


def test_rating_a_note_with_a_dotted_line_in_a_quoted_value_takes_seconds(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    raw = ODD_NOTE.encode("utf-8")
    (vault / ODD).write_bytes(raw)
    (vault / GOOD).write_text(GOOD_NOTE, encoding="utf-8")
    data = tmp_path / "data"

    due = _run(vault, data, "due", "--json", timeout=60)
    assert due is not None and due.returncode == 0 and ODD in due.stdout, due

    started = time.monotonic()
    rated = _run(vault, data, "rate", ODD, "--rating", "good", timeout=30)
    assert rated is not None, (
        f"`studyapp rate {ODD}` was still running after {time.monotonic() - started:.0f} s (killed): "
        "writeback._DOCUMENT_END backtracks exponentially over the blank lines after a '...#' line "
        "while the review appends its keys, holding the writer lock")
    assert rated.returncode == 0, rated.stderr
    text = (vault / ODD).read_text(encoding="utf-8")
    assert "review_count: 1" in text and text.endswith(ODD_NOTE.split("---\n", 2)[2])


USERS_NOTE_WITH_THE_LINE = (
    "---\n"
    "created: '2026-03-02'\n"
    "last_reviewed: null\n"
    "next_review: '2026-03-02'\n"
    "review_count: 0\n"
    "difficulty: medium\n"
    "mastery_level: 0.0\n"
    + ODD_NOTE.split("---\n", 2)[1].split("\n", 1)[1]  # the description with its '...#' line
    + "---\n" + ODD_NOTE.split("---\n", 2)[2]
)


def test_due_after_a_review_key_was_deleted_by_hand_takes_seconds(tmp_path):
    """The users' note holds every review key, so its review edits lines in place and is quick.
    The learner then deletes its `last_reviewed` line by hand; the next replay of the log (here:
    the database deleted, which README calls safe; equally another device's log growing) finds
    the note's keys disagree with its history and writes them back, appending `last_reviewed`:
    `due` hangs in the same search."""
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / ODD
    note.write_text(USERS_NOTE_WITH_THE_LINE, encoding="utf-8")
    data = tmp_path / "data"
    rated = _run(vault, data, "rate", ODD, "--rating", "good", timeout=60)
    assert rated is not None and rated.returncode == 0, rated
    text = note.read_text(encoding="utf-8")
    assert "review_count: 1" in text
    note.write_text("".join(line for line in text.splitlines(keepends=True)
                            if not line.startswith("last_reviewed:")), encoding="utf-8")
    (data / "studyapp.sqlite3").unlink()

    started = time.monotonic()
    due = _run(vault, data, "due", timeout=30)
    assert due is not None, (
        f"`studyapp due` was still running after {time.monotonic() - started:.0f} s (killed): the replay "
        "writes the deleted `last_reviewed` back, and writeback._DOCUMENT_END backtracks exponentially "
        "over the blank lines after the note's '...#' line")
    assert due.returncode == 0 and ODD in due.stdout, due.stderr


def test_the_document_end_is_found_as_yaml_ends_a_block():
    """`document_end` (line by line) finds what the pattern it replaces found: a `...` line,
    maybe with a comment, followed by blank or comment lines only."""
    from studyapp.vault.writeback import document_end

    cases = {
        "a: 1\n...\n": 5, "a: 1\n... # end\n\n  # note\n": 5, "a: 1\n...#x\r\n\t\r\n": 5, "a: 1\n...": 5,
        "a: 1\n....\n": None, "a: 1\n x...\n": None, "a: 1\n...\nb: 2\n": None, "a: 1\n": None, "": None,
        "...\n...\n": 4, "a: '\n...\n'\n": None,
    }
    for block, start in cases.items():
        assert document_end(block) == start, block
