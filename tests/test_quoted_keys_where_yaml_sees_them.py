"""A block whose keys are quoted is now read and rated (0bd18de), but the check that refuses
a block below blank lines (read as body text by Obsidian and YAML alike) still looks for
unquoted review keys only. A note that opens with a blank line, then a quoted-key block
holding its schedule (review_count 7, next review next year), is listed as a new note whose
title is '---'; a rating puts a second block in front and the note's own schedule is left
behind. The unquoted twin is refused at load with the fix ("remove those lines")."""

from __future__ import annotations

import pytest

from studyapp.vault import Vault

LATE_BLOCK = (
    "\n"
    "---\n"
    "{q}created{q}: '2026-03-02'\n"
    "{q}last_reviewed{q}: '2026-11-01'\n"
    "{q}next_review{q}: '2027-06-01'\n"
    "{q}review_count{q}: 7\n"
    "{q}mastery_level{q}: 0.8\n"
    "tags: [attention]\n"
    "---\n"
    "# Why scale by sqrt(d_k)\n\nKeeps the softmax out of saturation.\n"
)


@pytest.mark.parametrize("quote", ["", '"', "'"], ids=["plain", "double", "single"])
def test_a_late_block_with_quoted_review_keys_is_refused_like_a_plain_one(tmp_path, quote):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "late.md").write_text(LATE_BLOCK.format(q=quote), encoding="utf-8")
    loaded = Vault(root).load()
    problems = {p.path: p.reason for p in loaded.problems}
    assert "late.md" in problems, (
        "a late block with quoted review keys was taken as body text: the note is listed as new "
        f"(title {[n.title for n in loaded.notes]}) and a review would put a second block in front")
    assert "does not start on the first line" in problems["late.md"]


MULTI_LINE_SCALAR = (
    "---\n"
    "created: '2026-03-02'\n"
    "summary: \"first line\n"
    "'last_reviewed': null and more\"\n"
    "tags: [a]\n"
    "---\n"
    "# Multi\n\nbody\n"
)
"""No `last_reviewed` key: the second line of `summary` (a double-quoted scalar over two lines)
merely starts like a quoted key. Before 0bd18de a review appended the key; now the owned-line
pattern takes that text for the key's line, and the write is refused."""


def test_a_quoted_key_inside_a_multi_line_value_is_not_taken_for_the_key(tmp_path, capsys):
    from studyapp.cli import main

    root = tmp_path / "vault"
    root.mkdir()
    (root / "m.md").write_text(MULTI_LINE_SCALAR, encoding="utf-8")
    loaded = Vault(root).load()
    if any(p.path == "m.md" for p in loaded.problems):
        return  # refused at load, with its reason: never listed as due
    assert [n.path for n in loaded.notes] == ["m.md"]
    common = ["--vault", str(root), "--data-dir", str(tmp_path / "data"), "--now", "2026-06-15T10:00"]
    rc = main(["rate", "m.md", "--rating", "good", *common])
    err = capsys.readouterr().err
    assert rc == 0, f"listed as due, yet the rating is refused: {err.strip().splitlines()[-1]}"
    text = (root / "m.md").read_text(encoding="utf-8")
    assert "\"first line\n'last_reviewed': null and more\"" in text  # the value untouched
