"""Holes the first fixes of this round left: undo after its own log came back older or with a
FIFO in the note's place, notes kept through links, blocks opened by unseen characters, and
the word a read-only command says when its output fails."""

from __future__ import annotations

import os

import pytest
from history_helpers import cli, make_vault, own_log_put_back_older, run, settled, with_output_to_a_full_disk

from studyapp.cli import main


def test_undo_takes_back_this_devices_own_review_after_its_own_log_came_back_older(tmp_path, capsys):
    """This device's own log file is put back to an older copy (a sync tool, a restore of the
    vault) without a conflict copy. The database still holds the newest review (b.md), so the
    next command writes it back into the own file (`adopt_database`) -- now marked ADOPTED, as
    if it were another device's. `undo` then passes over this device's own newest review and
    silently takes back the older review of a.md instead."""
    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data = tmp_path / "data"
    own_log_put_back_older(capsys, vault, data)  # no conflict copy kept
    settled(*vault.glob("*.md"))
    cli(capsys, vault, data, "due", now="2026-11-20T08:30")  # writes b.md's review back

    code, out, err = run(capsys, vault, data, "undo", now="2026-11-20T09:00")
    assert code == 0, err
    assert "b.md" in out, f"undo took back an older review than this device's newest: {out!r}"


SDPA_NOTE = """---
review_count: 0
drills: [sdpa]
---
# {title}

Scaled dot products.
"""


def test_a_note_kept_through_a_link_into_a_hidden_folder_does_not_stop_every_notes_mastery(tmp_path):
    """A reviewed note moved into a hidden folder with a link left in its place (`mv b.md
    .archive/b.md; ln -s .archive/b.md b.md`) is still listed (the scan keeps the link's path
    when the file's own path is not a note). `Vault.read_note` now refuses that path (a place
    in the vault reached through a link), and `refresh_mastery` reads each trained note with
    no guard: a drill result then raises for the whole vault, and a.md's mastery is never
    updated (one bad note stops the rest)."""
    from datetime import datetime, timezone

    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    t0 = datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc)
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text(SDPA_NOTE.format(title="A"))
    (root / "b.md").write_text(SDPA_NOTE.format(title="B"))
    ctx = build_context(vault=str(root), data_dir=str(tmp_path / "data"), now=t0)
    with ReviewService(ctx) as service:
        service.load()
        service.record_review("a.md", "easy")
        service.record_review("b.md", "easy")
    (root / ".archive").mkdir()
    (root / "b.md").rename(root / ".archive" / "b.md")
    (root / "b.md").symlink_to(".archive/b.md")
    with ReviewService(ctx) as service:
        paths = [n.path for n in service.load().notes]
        assert "b.md" in paths, paths  # still listed, through its link
        before = service.vault.read_note("a.md").mastery_level
        service.store.record_drill_attempt("sdpa", "pass", attempted_at=t0)
        changed = service.refresh_mastery("sdpa")
        assert "a.md" in changed
        assert service.vault.read_note("a.md").mastery_level > before


def test_undo_with_a_fifo_left_at_the_reviewed_path_says_so_instead_of_hanging(tmp_path, capsys):
    """b.md reviewed, then a FIFO named b.md in its place (a sync tool's or a script's: the
    scan says "not a regular file" and never opens it). `undo` now reads the whole file at the
    review's path to compare it with the review's hash (`_still_as_reviewed`): opening a FIFO
    for reading blocks until a writer comes, so `undo` hangs for ever, holding the writer lock
    (before: "b.md: not a regular file (a pipe, device or socket)", exit 1)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data = tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T07:00")
    (vault / "b.md").unlink()
    os.mkfifo(vault / "b.md")
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root), STUDYAPP_DATA_DIR=str(data))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "studyapp", "undo", "--vault", str(vault), "--data-dir", str(data),
             "--now", "2026-11-20T07:05"], env=env, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError("undo hung on the FIFO at b.md") from None
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "b.md" in done.stderr, done.stderr


@pytest.mark.parametrize("space", ["\u200b", "\ufeff", "\u2060"])
def test_a_block_opened_by_a_rule_and_a_zero_width_space_gets_no_second_block(tmp_path, capsys, space):
    """The day's fix refuses a block whose opening `---` is followed by a no-break or other odd
    space, but only for what Python's `\\s` calls a space: a zero width space (U+200B, pasted
    from the web as often as U+00A0), a stray BOM or a word joiner after the `---` still makes
    a silently block-less note (`due` lists it as new, titled "---"), and `rate` puts a second
    block in front of the user's, restarting its four reviews at one."""
    from vault_fixtures import USERS_NOTE, write

    vault, data = tmp_path / "vault", tmp_path / "data"
    text = (USERS_NOTE.replace("review_count: 0", "review_count: 4")
            .replace("last_reviewed: null", "last_reviewed: '2026-11-01'")
            .replace("---\n", f"---{space}\n", 1))
    note = write(vault / "zw.md", text)
    settled(note)
    main(["rate", "zw.md", "--rating", "good", "--vault", str(vault), "--data-dir", str(data),
          "--now", "2026-11-23T09:00:00+00:00"])
    capsys.readouterr()
    assert note.read_text(encoding="utf-8").count("review_count:") == 1, note.read_text(encoding="utf-8")[:300]


def test_a_block_opened_by_a_rule_and_a_form_feed_is_said_also_past_the_head(tmp_path, capsys):
    """A short note whose opening `---` is followed by a form feed (U+000C) is refused with the
    fix (the text rule `_ODD_FENCE` takes any `\\s`); a long one, whose block closes past the
    4 KB head a load reads, is not: the bytes rule that sends such a head to a whole read
    (`_LATE_START`) lists only the multi-byte spaces. `due` then lists the long note as a new
    one titled "---", says nothing, and `rate` of it fails (its whole read refuses it)."""
    from vault_fixtures import write

    vault, data = tmp_path / "vault", tmp_path / "data"
    tags = "".join(f"- topic/{i:04d}\n" for i in range(600))  # a block of about 8 KB
    write(vault / "long.md", f"---\x0c\nreview_count: 5\nnext_review: '2026-11-30'\ntags:\n{tags}---\n# Long\n\nbody\n")
    write(vault / "a.md", "# A\n\nbody\n")
    settled(*vault.glob("*.md"))
    capsys.readouterr()
    assert main(["due", "--vault", str(vault), "--data-dir", str(data), "--now", "2026-11-23T09:00:00+00:00"]) == 0
    out, err = capsys.readouterr()
    assert "long.md" in err and "U+000C" in err and "long.md" not in out, (out, err)


def test_a_note_the_vault_lists_through_a_link_into_a_hidden_folder_can_be_rated_in_the_app(tmp_path):
    """`h.md -> .hidden/h.md`: the scan lists h.md (the file's own path is no note), `due` and
    the app show it as due, and the app rated it (its service never refused). `Vault.read_note`
    now refuses the path, so pressing 3 on the shown card says "Rating not saved: h.md is
    .hidden/h.md reached through a symbolic link" -- a note shown every day that no front end
    can rate (the CLI says "name it as .hidden/h.md", which is refused as hidden)."""
    from datetime import datetime, timezone

    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    root = tmp_path / "vault"
    (root / ".hidden").mkdir(parents=True)
    (root / ".hidden" / "h.md").write_text("---\nreview_count: 0\n---\n# H\n\nThe answer.\n")
    (root / "h.md").symlink_to(".hidden/h.md")
    ctx = build_context(vault=str(root), data_dir=str(tmp_path / "data"),
                        now=datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc))
    with ReviewService(ctx) as service:
        listed = [n.path for n in service.load().notes]
        assert listed == ["h.md"], listed
        service.record_review("h.md", "good")  # as the app's `3` does


@pytest.mark.parametrize("args, again", [(["due"], True), (["sync"], True), (["import", "--yes"], True),
                                         (["rate", "a.md", "--rating", "good"], False)])
def test_the_output_error_says_whether_running_again_repeats_anything(tmp_path, args, again):
    """`due > /dev/full` said "running it again would record it twice": `due` records nothing,
    and the learner was told not to do the one safe thing. `sync` and `import` change nothing
    the second time either: their lost output says to run them again; a review's says it is
    recorded."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    vault = make_vault(tmp_path / "vault")
    done = with_output_to_a_full_disk(vault, tmp_path / "data", *args)
    assert done.returncode != 0 and "output could not be written" in done.stderr, done.stderr
    assert ("run it again" in done.stderr) is again and ("record it twice" in done.stderr) is not again
