"""A note that `due` lists and `doctor` calls readable must be one `rate` can review.

Each note below loads cleanly (it is listed as due, `doctor` reports no problem), yet every
rating of it is refused with a message that names no fix ("refusing to write: the edit would
change ... unexpectedly", "the review log cannot hold its event ('values_before' is not a
note's review keys)"). The user is shown the note every day and can never review it. Either
the load should report the note with a reason (as it does for `review_count: many`), or the
review should be written. Found hunting odd notes in a big vault; a small vault shows the same.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T09:00"
GOOD = "good.md"
ODD = "odd.md"


def _vault(tmp_path: Path, odd: bytes) -> Path:
    vault = tmp_path / "vault"
    write(vault / GOOD, USERS_NOTE)
    write(vault / ODD, odd)
    old = time.time() - 3600
    for name in (GOOD, ODD):
        os.utime(vault / name, (old, old))
    return vault


def _args(vault: Path, data: Path, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", NOW]


def _listed_then_rated(tmp_path, capsys, odd: bytes) -> tuple[bool, int, str]:
    """(listed by due, rate's exit code, rate's stderr)."""
    vault = _vault(tmp_path, odd)
    data = tmp_path / "data"
    assert main(_args(vault, data, "due", "--json")) == 0
    listed = ODD in {row["path"] for row in json.loads(capsys.readouterr().out)}
    code = main(_args(vault, data, "rate", ODD, "--rating", "good"))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return listed, code, err


def _reviewed(text: str) -> str:
    return (text.replace("review_count: 0", "review_count: 2")
            .replace("last_reviewed: null", "last_reviewed: '2026-06-01'"))


@pytest.mark.parametrize("old,new", [
    # YAML 1.1 reads these as strings (no '.' / a leading 0 that is no octal / an ISO week date);
    # studyapp reads them as the number 0.001, 9 reviews and the date 2026-03-02
    ("mastery_level: 0.0", "mastery_level: 1e-3"),
    ("review_count: 2", "review_count: 09"),
    ("next_review: '2026-03-02'", "next_review: 2026-W10-1"),
], ids=["mastery-1e-3", "review-count-09", "iso-week-date"])
def test_an_unquoted_owned_value_yaml_reads_as_text_is_either_refused_or_rateable(tmp_path, capsys, old, new):
    """The write renders the new value unquoted (a number or date where the note held a plain
    string), then `verify_edit` refuses its own edit because the YAML type changed."""
    listed, code, err = _listed_then_rated(tmp_path, capsys, _reviewed(USERS_NOTE).replace(old, new).encode())
    assert not listed or code == 0, f"listed as due, but rating it fails: {err.strip()}"


@pytest.mark.parametrize("old,new", [
    ("next_review: '2026-03-02'", "next_review: 2026-06-15 08:00:00"),
    ("next_review: '2026-03-02'", "next_review: 2026-06-15T23:30:00+14:00"),
    ("last_reviewed: '2026-06-01'", "last_reviewed: 2026-06-01T10:00:00Z"),
], ids=["naive-timestamp", "timestamp-with-zone", "last-reviewed-utc"])
def test_an_unquoted_timestamp_in_a_review_date_is_either_refused_or_rateable(tmp_path, capsys, old, new):
    """YAML builds a datetime; the load takes its date, but the review event cannot record the
    datetime as `values_before`, and the user reads an internal message about the review log."""
    listed, code, err = _listed_then_rated(tmp_path, capsys, _reviewed(USERS_NOTE).replace(old, new).encode())
    assert not listed or code == 0, f"listed as due, but rating it fails: {err.strip()}"
    assert "values_before" not in err


def test_a_block_with_a_document_end_marker_is_either_refused_or_rateable(tmp_path, capsys):
    """`...` (YAML's document end) inside the block: the load is fine, but a first review
    appends its keys after the marker, which no longer parses, and is refused."""
    odd = b"---\ncreated: '2026-03-02'\nnext_review: '2026-03-02'\n...\n---\n# dots\n\nbody\n"
    listed, code, err = _listed_then_rated(tmp_path, capsys, odd)
    assert not listed or code == 0, f"listed as due, but rating it fails: {err.strip()}"
