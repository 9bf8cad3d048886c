"""The CLI fed odd input (a link in a note's place, a full disk, values that are not text,
malformed OSR comments, a block opened by an odd space): said in the user's words, nothing
written twice or through a link, no block added in front of one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-11-23T09:00:00+00:00"


def _args(vault: Path, data: Path, *command: str, now: str = NOW) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", now]


def _age(vault: Path) -> None:
    old = time.time() - 3600  # old enough for the metadata cache to keep every note
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old), follow_symlinks=False)


def _reviewed(text: str, count: int, last: str, due: str, mastery: str) -> str:
    return (text.replace("review_count: 0", f"review_count: {count}")
            .replace("last_reviewed: null", f"last_reviewed: '{last}'")
            .replace("next_review: '2026-03-02'", f"next_review: '{due}'")
            .replace("mastery_level: 0.0", f"mastery_level: {mastery}"))


def test_undo_never_writes_another_note_through_a_link_left_in_the_reviewed_notes_place(tmp_path, capsys):
    """Rate a.md, then replace a.md by a symbolic link to b.md (another note, with its own
    schedule). `rate a.md` and `suspend a.md` refuse the link ("a.md is b.md reached through a
    symbolic link"), and `sync` will not write through it; but `undo` wrote a.md's pre-review
    keys through the link into b.md, wiping b.md's four reviews."""
    vault = tmp_path / "vault"
    data = tmp_path / "data"
    write(vault / "a.md", USERS_NOTE)
    b_text = _reviewed(USERS_NOTE.replace("# 层归一化", "# B 层归一化"), 4, "2026-11-01", "2026-11-30", "0.6")
    b = write(vault / "b.md", b_text)
    _age(vault)
    assert main(_args(vault, data, "rate", "a.md", "--rating", "good")) == 0
    (vault / "a.md").unlink()
    os.symlink("b.md", vault / "a.md")
    capsys.readouterr()
    main(_args(vault, data, "undo", now="2026-11-23T09:30:00+00:00"))
    capsys.readouterr()
    assert b.read_text(encoding="utf-8") == b_text, "undo rewrote b.md, a note it never reviewed"


@pytest.mark.parametrize("unbuffered", ["1", ""])  # the line fails as printed, or at the last flush
def test_rate_whose_output_cannot_be_written_does_not_ask_for_a_second_review(tmp_path, unbuffered):
    """`studyapp rate NOTE --rating good > /dev/full`: the review is recorded (note written,
    logged), then printing its line fails and the command says "error: no space left on the
    device; free some space and try again" (exit 1). Doing as told records a second review of
    the note. An error that advises a retry must mean nothing was recorded (or say it was)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    vault = tmp_path / "vault"
    data = tmp_path / "data"
    note = write(vault / "a.md", USERS_NOTE)
    _age(vault)
    env = dict(os.environ, STUDYAPP_DATA_DIR=str(data), PYTHONPATH=str(ROOT), PYTHONUNBUFFERED=unbuffered)
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "studyapp", *_args(vault, data, "rate", "a.md",
                                                                        "--rating", "good")],
                              stdout=full, stderr=subprocess.PIPE, env=env, timeout=120, cwd=ROOT)
    err = done.stderr.decode()
    recorded = "review_count: 1" in note.read_text(encoding="utf-8")
    assert "Traceback" not in err
    assert done.returncode != 0 and recorded, (done.returncode, err)  # recorded once, its line lost
    assert "try again" not in err and "recorded" in err, err


@pytest.mark.parametrize("value", ["{level: hard}", "!!set {a, b}", "!!binary aGVsbG8="])
def test_a_difficulty_that_is_not_text_never_becomes_a_python_repr(tmp_path, capsys, value):
    """`tags: {a: 1}` was fixed not to become the tag "{'a': 1}" (test_odd_note_big_vault), but
    `difficulty` is still `str()` of whatever YAML built: `due` shows and `due --json` gives
    "{'level': 'hard'}", "{'b', 'a'}" or "b'hello'", Python's spelling, not the user's."""
    vault = tmp_path / "vault"
    data = tmp_path / "data"
    write(vault / "a.md", USERS_NOTE)
    write(vault / "odd.md", USERS_NOTE.replace("difficulty: medium", f"difficulty: {value}"))
    _age(vault)
    assert main(_args(vault, data, "due", "--json")) == 0
    rows = {row["path"]: row for row in json.loads(capsys.readouterr().out)}
    shown = rows["odd.md"]["difficulty"] if "odd.md" in rows else None  # listed: a new note is due
    assert shown is not None and not any(mark in shown for mark in ("{'", "b'", "'}")), (shown, list(rows))


@pytest.mark.parametrize("value", ["[sdpa, {x: 1}]", "{sdpa: 1}", "[sdpa, null]"])
def test_drills_that_are_not_text_never_become_python_reprs(tmp_path, capsys, value):
    """`drills: [sdpa, {x: 1}]` lists "{'x': 1}" among `drills_unknown`, `drills: {sdpa: 1}`
    lists "{'sdpa': 1}", and `drills: [sdpa, null]` lists "None": Python's reprs, which the
    user never wrote (the same mistake as the tags one fixed before)."""
    vault = tmp_path / "vault"
    data = tmp_path / "data"
    write(vault / "odd.md", USERS_NOTE.replace("related_outlines: []", f"related_outlines: []\ndrills: {value}"))
    _age(vault)
    assert main(_args(vault, data, "due", "--json")) == 0
    rows = {row["path"]: row for row in json.loads(capsys.readouterr().out)}
    unknown = rows["odd.md"]["drills_unknown"]
    assert not any(mark in item for item in unknown for mark in ("{'", "'}", "None")), unknown


OSR_GOOD = "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: 250\n---\n# ok\nbody\n"


def test_an_osr_due_that_is_a_list_is_named_in_the_users_words(tmp_path, capsys):
    """`sr-due: [2026-11-20]` is left out with "sr-due: [datetime.date(2026, 11, 20)] is not a
    date": Python's repr of what YAML built, not what the user wrote."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "good.md", OSR_GOOD)
    write(vault / "odd.md", "---\nsr-due: [2026-11-20]\nsr-interval: 3\nsr-ease: 250\n---\n# odd\nbody\n")
    assert main(_args(vault, data, "import-history", "osr", "--dry-run")) == 0
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "odd.md" in line)
    assert "datetime" not in line, line


@pytest.mark.parametrize("comment", ["<!--SR:!2026-01-05,12,2.5e308-->", "<!--SR:!2026-01-05,12,250abc-->"])
def test_an_osr_comment_with_trailing_junk_is_said_not_read_as_its_prefix(tmp_path, capsys, comment):
    """The inline pattern (`history/osr.py`, INLINE) is not anchored at `-->`: an ease of
    `2.5e308` is imported as 2.5 and `250abc` as 250, silently, where the README promises that a
    malformed `<!--SR:...-->` comment is named and left out (as `!2026-01-05,twelve,250` is)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "good.md", OSR_GOOD)
    write(vault / "odd.md", f"# odd\n\nanswer {comment}\n")
    assert main(_args(vault, data, "import-history", "osr", "--dry-run")) == 0
    out, err = capsys.readouterr()
    assert "would import 1 note" in out and "odd.md" in err, (out, err)


def test_a_block_opened_by_a_rule_with_a_no_break_space_gets_no_second_block(tmp_path, capsys):
    """A note whose opening `---` is followed by a no-break space (U+00A0, pasted from the web)
    and holding review keys (5 reviews, due next week) is taken for a note with no block: `due`
    and `doctor` say nothing, and `rate` writes a fresh block in front of it, leaving the user's
    block below as text and restarting the schedule at review 1 (`---` + space or tab is read
    as the block). The README refuses exactly this for a block below blank lines: a review must
    never add a second block in front of the user's."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    text = _reviewed(USERS_NOTE, 5, "2026-11-01", "2026-11-30", "0.5").replace("---\n", "---\u00a0\n", 1)
    note = write(vault / "nbsp.md", text)
    write(vault / "a.md", USERS_NOTE)
    _age(vault)
    main(_args(vault, data, "rate", "nbsp.md", "--rating", "good"))
    capsys.readouterr()
    assert note.read_text(encoding="utf-8").count("review_count:") == 1, note.read_text(encoding="utf-8")[:400]


def test_a_block_opened_by_a_rule_with_an_odd_space_is_said_even_when_it_closes_past_the_head(tmp_path, capsys):
    """The load reads a note's head only; a block opened by `---` and an ideographic space
    (U+3000) whose closing `---` lies past that head is still seen, said, and left alone; and a
    `---` rule followed by such a space with no review key below it stays body text."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    tags = "".join(f"- topic/{i:04d}\n" for i in range(600))  # a block of about 8 KB
    text = f"---\u3000\nreview_count: 5\nnext_review: '2026-11-30'\ntags:\n{tags}---\n# 长块\n\n正文\n"
    note = write(vault / "long.md", text)
    rule = write(vault / "rule.md", "---\u3000\n---\n# 分隔线\n")
    _age(vault)
    assert main(_args(vault, data, "due")) == 0
    out, err = capsys.readouterr()
    assert "long.md" in err and "U+3000" in err and "long.md" not in out
    assert "rule.md" in out and "rule.md" not in err
    assert main(_args(vault, data, "rate", "long.md", "--rating", "good")) != 0
    assert note.read_text(encoding="utf-8") == text and rule.read_text(encoding="utf-8") == "---\u3000\n---\n# 分隔线\n"


def test_an_osr_comment_of_a_card_with_siblings_imports_its_first_schedule(tmp_path, capsys):
    """OSR writes a cloze card's siblings in one comment, `!`-separated: the whole comment is
    well formed, and its first schedule is the one imported."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "cards.md", "# cards\n\nanswer <!--SR:!2026-01-05,12,250!2026-01-09,3,230-->\n")
    assert main(_args(vault, data, "import-history", "osr", "--dry-run")) == 0
    out, err = capsys.readouterr()
    assert "cards.md: due 2026-01-05, interval 12d, ease 2.5" in out and "would import 1 note" in out, (out, err)
