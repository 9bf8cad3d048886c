"""Guards (these pass): undo taking out the review keys a review added, in the situations
the commit's own tests do not reach: two reviews undone after an edit, a note renamed and
edited, a note converted to CRLF, and an editor process saving the note every few ms while
`undo` runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from history_helpers import cli

HAND_WRITTEN = "---\ncreated: 2026-11-01\ntags: [a]\n---\n# T\n\nbody\n"
EDIT = "A line added after the review.\n"


def _vault(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text(HAND_WRITTEN)
    return vault, tmp_path / "data", vault / "n.md"


def test_two_reviews_undone_after_an_edit_leave_the_hand_written_block(tmp_path, capsys):
    vault, data, note = _vault(tmp_path)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    first = note.read_text()
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-21T08:00")
    note.write_text(note.read_text() + EDIT)
    cli(capsys, vault, data, "undo", now="2026-11-21T08:05")
    assert note.read_text() == first + EDIT
    cli(capsys, vault, data, "undo", now="2026-11-21T08:06")
    assert note.read_text() == HAND_WRITTEN + EDIT


def test_undo_after_a_rename_and_an_edit_takes_the_added_keys_out(tmp_path, capsys):
    vault, data, note = _vault(tmp_path)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    (vault / "sub").mkdir()
    moved = vault / "sub" / "renamed.md"
    os.rename(note, moved)
    moved.write_text(moved.read_text() + EDIT)
    out = cli(capsys, vault, data, "undo", now="2026-11-20T08:05")
    assert "sub/renamed.md" in out
    assert moved.read_text() == HAND_WRITTEN + EDIT


def test_undo_after_the_note_was_converted_to_crlf(tmp_path, capsys):
    vault, data, note = _vault(tmp_path)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")
    assert note.read_bytes() == HAND_WRITTEN.replace("\n", "\r\n").encode()


EDITOR = """
import os, sys, time
path = sys.argv[1]
for i in range(300):
    data = open(path, "rb").read()
    with open(path + ".tmp", "wb") as f:
        f.write(data + b"line %d\\n" % i)
    os.replace(path + ".tmp", path)  # an editor saving by rename, every few ms
    time.sleep(0.003)
"""


def test_undo_while_an_editor_saves_every_few_ms_keeps_every_save(tmp_path, capsys):
    vault, data, note = _vault(tmp_path)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = note.read_text()
    root = str(Path(__file__).resolve().parent.parent)
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note)])
    try:
        undo = subprocess.run([sys.executable, "-m", "studyapp", "undo", "--vault", str(vault),
                               "--data-dir", str(data), "--now", "2026-11-20T08:05"],
                              capture_output=True, text=True, cwd=root,
                              env=dict(os.environ, PYTHONPATH=root), timeout=120)
    finally:
        assert editor.wait(timeout=120) == 0
    final = note.read_text()
    assert [int(n) for n in re.findall(r"line (\d+)\n", final)] == list(range(300))
    if undo.returncode == 0:
        # The editor reads, then saves by rename: a save whose read came before the undo's
        # write puts the reviewed keys back (the editor's own lost update, which no other
        # writer can prevent). Either way the block is whole: as before the review, or after it.
        assert final.startswith(HAND_WRITTEN) or final.startswith(reviewed), final[:200]
    else:  # refused: it must say why and leave the note as the editor saved it
        assert "Traceback" not in undo.stderr and "review_count: 1" in final, undo.stderr
