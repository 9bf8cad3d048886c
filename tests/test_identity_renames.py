"""Defects found by attacking note identity (renames, deletions, put-backs) with reviews on one
or two devices sharing a vault. Each test fails on the code it was written against."""

from __future__ import annotations

import json
import os
import sqlite3

from history_helpers import cli, make_vault

NEW_AT_B = """---
review_count: 0
last_reviewed: null
next_review: 2026-11-05
---
# Flash attention tiling

Blocks of Q, K, V in SRAM.
"""


def _settled(*paths) -> None:
    """Mtimes a minute old, so a replay does not wait for the notes to settle."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def _count(path) -> str:
    return next(line for line in path.read_text().splitlines() if line.startswith("review_count"))


def _live_card(data, path: str):
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        return conn.execute("SELECT round(c.stability, 3) FROM cards c JOIN notes n"
                            " ON n.key = c.note_key WHERE n.deleted = 0 AND n.path = ?",
                            (path,)).fetchone()


def test_swapping_two_reviewed_notes_names_swaps_their_review_keys(tmp_path, capsys):
    """`mv b.md t; mv c.md b.md; mv t c.md` (two reviewed notes swap names): no path vanished,
    so identity stays with the paths. `due` lists "Causal mask" with the KV-cache card, and the
    next replay writes each note's review keys into the other note's file."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:20")
    cli(capsys, vault, data, "rate", "c.md", "--rating", "again", now="2026-11-02T09:00")
    causal, kv = (vault / "b.md").read_text(), (vault / "c.md").read_text()
    (vault / "b.md").write_text(kv)
    (vault / "c.md").write_text(causal)
    _settled(vault / "b.md", vault / "c.md")
    cli(capsys, vault, data, "due", now="2026-11-03T09:00")
    cli(capsys, vault, data, "sync", "--full", now="2026-11-03T09:00")
    assert (vault / "c.md").read_text() == causal, "Causal mask got the KV cache's review keys"
    assert (vault / "b.md").read_text() == kv, "KV cache got the Causal mask's review keys"
    other = tmp_path / "other"  # a second device replays the swap from the log
    cli(capsys, vault, other, "due", now="2026-11-03T09:10")
    assert (vault / "c.md").read_text() == causal and (vault / "b.md").read_text() == kv
    assert _live_card(other, "b.md") == _live_card(data, "b.md") != _live_card(data, "c.md")


def test_a_new_note_at_a_deleted_notes_path_gets_the_deleted_notes_reviews(tmp_path, capsys):
    """b.md (3 reviews) is deleted and a load notices; later a new, unrelated note is written
    as b.md and reviewed once (review_count 1). The log has no deletions: a second device's
    replay chains the new note's review onto the deleted note's card and writes
    review_count 4 and a two-week interval into the new note."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    for now in ("2026-11-01T09:00", "2026-11-01T09:20", "2026-11-03T09:30"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=now)
    (vault / "b.md").unlink()
    cli(capsys, vault, data, "due", now="2026-11-04T09:00")
    (vault / "b.md").write_text(NEW_AT_B)
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-05T09:05")
    assert _count(vault / "b.md") == "review_count: 1"
    _settled(vault / "b.md")
    cli(capsys, vault, other, "due", now="2026-11-05T09:10")
    assert _count(vault / "b.md") == "review_count: 1", "the deleted note's reviews were added"


def test_a_note_deleted_and_written_anew_before_a_load_is_new(tmp_path, capsys):
    """Delete b.md (3 reviews) and create an unrelated new b.md (never reviewed, another title)
    before studyapp next runs: the new note is never offered as new; it is due as a review on
    the deleted note's schedule."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    for now in ("2026-11-01T09:00", "2026-11-01T09:20", "2026-11-03T09:30"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=now)
    (vault / "b.md").unlink()
    (vault / "b.md").write_text(NEW_AT_B)
    due = json.loads(cli(capsys, vault, data, "due", "--json", now="2026-11-05T09:00"))
    assert {i["path"]: i["new"] for i in due if i["kind"] == "note"}.get("b.md") is True


def test_a_rename_undone_on_a_second_device_keeps_the_history(tmp_path, capsys):
    """Two devices; b.md is renamed to B.md (both devices follow it), then renamed back. The
    second device's replay of the first rename left an empty row at b.md, marked deleted; the
    put-back rule revives that empty row instead of moving the history back: no move is
    logged, and b.md is scheduled from its file's keys (stability 10.5, not FSRS's 2.3)."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, other, "rate", "b.md", "--rating", "good", now="2026-11-01T09:20")
    expected = _live_card(other, "b.md")
    (vault / "b.md").rename(vault / "B.md")
    cli(capsys, vault, data, "due", now="2026-11-02T09:00")
    cli(capsys, vault, other, "due", now="2026-11-02T09:01")
    (vault / "B.md").rename(vault / "b.md")
    cli(capsys, vault, other, "due", now="2026-11-03T09:00")
    assert _live_card(other, "b.md") == expected, "b.md lost its history on this device"


def test_renaming_a_folder_keeps_the_history_of_notes_sharing_a_title(tmp_path, capsys):
    """Two reviewed notes titled "Summary" (ml/attention/summary.md, ml/rnn/summary.md), each
    edited since its last review; `mv ml deep-learning`: neither matches by bytes, both titles
    have two candidates, so both are marked deleted and their histories lost (no move)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    for topic in ("attention", "rnn"):
        (vault / "ml" / topic).mkdir(parents=True)
        (vault / "ml" / topic / "summary.md").write_text(
            f"---\nreview_count: 0\nlast_reviewed: null\nnext_review: 2026-11-01\n---\n"
            f"# Summary\n\nKey points of {topic}.\n")
    for path in ("ml/attention/summary.md", "ml/rnn/summary.md"):
        cli(capsys, vault, data, "rate", path, "--rating", "good", now="2026-11-01T09:00")
        with open(vault / path, "a") as f:
            f.write("An edit after the review.\n")
    (vault / "ml").rename(vault / "deep-learning")
    cli(capsys, vault, data, "due", now="2026-11-02T09:00")
    log = "".join(f.read_text() for f in (vault / ".studyapp" / "log").glob("*.jsonl"))
    assert log.count('"kind":"move"') == 2


def test_a_chain_of_renames_moves_each_history_with_its_note(tmp_path, capsys):
    """`mv b.md b-old.md; mv c.md b.md` (a name handed on): c.md vanished and its bytes sit at a
    known path, so it was marked deleted, and b.md's history stayed at b.md with c's note, whose
    keys the next replay overwrote. Each history follows its bytes, on this device and another."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:20")
    cli(capsys, vault, data, "rate", "c.md", "--rating", "again", now="2026-11-02T09:00")
    stabilities = {"b.md": _live_card(data, "b.md"), "c.md": _live_card(data, "c.md")}
    causal, kv = (vault / "b.md").read_text(), (vault / "c.md").read_text()
    (vault / "b.md").rename(vault / "b-old.md")
    (vault / "c.md").rename(vault / "b.md")
    _settled(vault / "b.md", vault / "b-old.md")
    cli(capsys, vault, data, "due", now="2026-11-03T09:00")
    assert _live_card(data, "b-old.md") == stabilities["b.md"]
    assert _live_card(data, "b.md") == stabilities["c.md"]
    cli(capsys, vault, data, "sync", "--full", now="2026-11-03T09:05")
    cli(capsys, vault, other, "due", now="2026-11-03T09:10")  # a second device replays the moves
    assert (vault / "b-old.md").read_text() == causal and (vault / "b.md").read_text() == kv
    for device in (data, other):
        assert _live_card(device, "b-old.md") == stabilities["b.md"], device
        assert _live_card(device, "b.md") == stabilities["c.md"], device
