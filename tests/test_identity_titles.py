"""Defects found by attacking the replay-time reconcile, `_moved_away`, `_moved_off` and
`related_titles` (short titles, titles one word apart, CJK titles). Each test fails on the code
it was written against."""

from __future__ import annotations

import os
import shutil
import sqlite3

from history_helpers import cli, make_vault


def _settled(*paths) -> None:
    """Mtimes a minute old, so a replay does not wait for the notes to settle."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def _copy_logs(source, target) -> None:
    """A sync tool bringing the other device's log files (only those the target lacks)."""
    for f in (source / ".studyapp" / "log").glob("*.jsonl"):
        if not (target / ".studyapp" / "log" / f.name).exists():
            shutil.copy2(f, target / ".studyapp" / "log" / f.name)


def _note(title: str, body: str, keys: str = "review_count: 0\nlast_reviewed: null\nnext_review: 2026-11-01") -> str:
    return f"---\n{keys}\n---\n# {title}\n\n{body}\n"


def _cards(data) -> dict[str, tuple]:
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        rows = conn.execute("SELECT n.path, c.reps, c.state FROM notes n JOIN cards c"
                            " ON c.note_key = n.key WHERE n.deleted = 0").fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_a_new_notes_first_review_at_a_renamed_notes_old_path_stays_its_own(tmp_path, capsys):
    """`mv rope.md rope-basics.md` (2 reviews, move logged), a new "RoPE scaling" written as
    rope.md and rated again (a new card). Live, each note has its card; `sync --full` and a second
    device give the new note's review to "RoPE" (`_moved_away`: "rope" is inside "rope scaling"),
    write review_count 3 and a relearning due into rope-basics.md and leave rope.md without a card."""
    vault, data, other = tmp_path / "vault", tmp_path / "data", tmp_path / "other"
    vault.mkdir()
    (vault / "rope.md").write_text(_note("RoPE", "Rotate pairs of dims by position."))
    cli(capsys, vault, data, "rate", "rope.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "rope.md", "--rating", "good", now="2026-11-01T09:20")
    (vault / "rope.md").rename(vault / "rope-basics.md")
    _settled(vault / "rope-basics.md")
    cli(capsys, vault, data, "due", now="2026-11-02T08:00")
    (vault / "rope.md").write_text(_note("RoPE scaling", "NTK-aware interpolation, YaRN."))
    _settled(vault / "rope.md")
    cli(capsys, vault, data, "rate", "rope.md", "--rating", "again", now="2026-11-02T09:00")
    basics = (vault / "rope-basics.md").read_text()
    live = _cards(data)
    assert live["rope-basics.md"][0] == 2 and live["rope.md"][0] == 1
    cli(capsys, vault, data, "sync", "--full", now="2026-11-02T10:00")
    assert (vault / "rope-basics.md").read_text() == basics, "RoPE got RoPE scaling's review"
    assert _cards(data) == live
    cli(capsys, vault, other, "due", now="2026-11-02T10:10")
    assert _cards(other) == live


def test_editing_a_heading_does_not_hand_the_history_to_another_note_with_the_old_title(
        tmp_path, capsys):
    """rnn/summary.md ("Summary", reviewed twice here) gets the heading "Recurrent networks";
    attention/summary.md, also "Summary", has the previous tool's keys and no row yet.
    `_moved_off` takes the edit for a swap: it logs rnn/summary.md -> attention/summary.md, the
    attention note shows the rnn note's learning card and its next review chains onto it."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    for topic in ("rnn", "attention"):
        (vault / topic).mkdir(parents=True)
    (vault / "rnn" / "summary.md").write_text(_note("Summary", "Vanishing gradients; LSTM gates."))
    (vault / "attention" / "summary.md").write_text(_note(
        "Summary", "QKV, softmax.", "review_count: 3\nlast_reviewed: 2026-10-01\nnext_review: 2026-10-20"))
    cli(capsys, vault, data, "rate", "rnn/summary.md", "--rating", "again", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "rnn/summary.md", "--rating", "good", now="2026-11-01T09:20")
    rnn = vault / "rnn" / "summary.md"
    rnn.write_text(rnn.read_text().replace("# Summary", "# Recurrent networks"))
    _settled(rnn)
    cli(capsys, vault, data, "due", now="2026-11-01T12:00")
    assert _cards(data) == {"rnn/summary.md": (2, 1)}, "the rnn history went to the attention note"


def test_a_cjk_heading_edited_offline_before_a_first_review_keeps_both_reviews(tmp_path, capsys):
    """As test_identity_hunt2's "Causal mask" -> "Causal masking", with "多头注意力" ->
    "多头自注意力": `\\w+` reads each CJK run as one word, the titles are 'unrelated', and A's
    review goes to a deleted row (A's `undo`: 'b.md is no longer in the vault')."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    (vault / "b.md").write_text((vault / "b.md").read_text().replace("# Causal mask", "# 多头注意力"))
    cli(capsys, vault, data, "due", now="2026-11-01T08:00")
    offline = tmp_path / "offline"
    shutil.copytree(vault, offline)
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    text = (offline / "b.md").read_text()
    (offline / "b.md").write_text(text.replace("# 多头注意力", "# 多头自注意力"))
    _settled(offline / "b.md")
    cli(capsys, offline, other, "rate", "b.md", "--rating", "good", now="2026-11-01T10:00")
    _copy_logs(offline, vault)
    cli(capsys, vault, data, "sync", now="2026-11-01T11:00")
    assert _cards(data)["b.md"][0] == 2, "the first review of b.md left its card"


def test_a_review_made_offline_before_a_swap_of_titles_one_word_apart_stays_with_its_note(
        tmp_path, capsys):
    """test_identity_hunt2's offline review before a swap, with "Attention part 1" and
    "Attention part 2": the titles are 'related', so `_moved_away` keeps the review of part 1
    at b.md and writes it into part 2 (now there); part 1 loses it."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "b.md").write_text(_note("Attention part 1", "Scaled dot products."))
    (vault / "c.md").write_text(_note("Attention part 2", "Multi-head projections."))
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:20")
    cli(capsys, vault, data, "rate", "c.md", "--rating", "again", now="2026-11-02T09:00")
    offline, other = tmp_path / "offline", tmp_path / "other"
    shutil.copytree(vault, offline)
    cli(capsys, offline, other, "due", now="2026-11-02T10:00")
    part2 = (vault / "c.md").read_text()
    (vault / "b.md").rename(vault / "tmp")
    (vault / "c.md").rename(vault / "b.md")
    (vault / "tmp").rename(vault / "c.md")
    _settled(vault / "b.md", vault / "c.md")
    cli(capsys, vault, data, "due", now="2026-11-03T09:00")
    cli(capsys, offline, other, "rate", "b.md", "--rating", "good", now="2026-11-03T10:00")
    _copy_logs(offline, vault)
    cli(capsys, vault, data, "sync", now="2026-11-03T11:00")
    assert (vault / "b.md").read_text() == part2, "part 2 got part 1's review"
    assert "review_count: 3" in (vault / "c.md").read_text(), "part 1 lost its review"
