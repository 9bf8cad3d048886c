"""Hunt (regressions of the day's changes): failing tests, one per defect."""

from __future__ import annotations

import json

from history_helpers import cli, make_vault, settled

from studyapp.cli import main


def _device(data):
    return json.loads((data / "data-dir.json").read_text())["id"]


def _log(vault, data):
    return vault / ".studyapp" / "log" / f"{_device(data)}.jsonl"


def _run(capsys, vault, data, *args, now):
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    return code, out, err


def test_undo_takes_back_this_devices_own_review_after_its_own_log_came_back_older(tmp_path, capsys):
    """This device's own log file is put back to an older copy (a sync tool, a restore of the
    vault) without a conflict copy. The database still holds the newest review (b.md), so the
    next command writes it back into the own file (`adopt_database`) -- now marked ADOPTED, as
    if it were another device's. `undo` then passes over this device's own newest review and
    silently takes back the older review of a.md instead."""
    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data = tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T07:00")
    own = _log(vault, data)
    older = own.read_bytes()
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    own.write_bytes(older)  # the older copy put back in its place, no conflict copy kept
    settled(*vault.glob("*.md"))
    cli(capsys, vault, data, "due", now="2026-11-20T08:30")  # writes b.md's review back

    code, out, err = _run(capsys, vault, data, "undo", now="2026-11-20T09:00")
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
