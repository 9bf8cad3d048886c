"""An undo interrupted after its file write (the process dies before the database and log
halves) is finished by the next command (`review_journal.repair_pending`) when the note holds
what the undo wrote. It compares the note with the journal's `file_values`, in which the undo
recorded None for each key it took out or emptied (`reviews._undo_last`: "as a read finds
it"). But for `review_count` None is written as `0`, so when the undo kept a line (a review key
the user commented on since, or a note that had `review_count: null`), the repair finds
`0 != None`, says "dropped an interrupted undo (file not written)" although the file was
written, and keeps the review in the database and the log. The next replay writes the review's
keys back into the note: the undo the user saw succeed is silently gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from history_helpers import cli

from studyapp.cli import main

EDIT = "A line added after the review.\n"

CRASHING_UNDO = """
import os, sys
from studyapp import reviews
reviews.finish_undo = lambda *args, **kwargs: os._exit(9)  # dies after the note is written
from studyapp.cli import main
main(["undo", "--vault", sys.argv[1], "--data-dir", sys.argv[2], "--now", "2026-11-20T08:05"])
"""


def _commented(text: str) -> str:
    return text.replace("review_count: 1\n", "review_count: 1  # mine\n") + EDIT


CASES = {
    "commented key the review added": ("---\ncreated: 2026-11-01\n---\n# T\n", _commented),
    "review_count null": ("---\ncreated: 2026-11-01\nreview_count: null\n---\n# T\n",
                          lambda text: text + EDIT),
}


@pytest.mark.parametrize(("original", "edit"), CASES.values(), ids=CASES.keys())
def test_an_undo_interrupted_after_its_write_is_finished_not_dropped(tmp_path, capsys, original, edit):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(original)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    note.write_text(edit(note.read_text()))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    crashed = subprocess.run([sys.executable, "-c", CRASHING_UNDO, str(vault), str(data)],
                             env=env, capture_output=True)
    assert crashed.returncode == 9
    undone = note.read_text()
    assert "last_reviewed" not in undone and undone.endswith(EDIT)  # the file was written

    capsys.readouterr()
    code = main(["sync", "--full", "--vault", str(vault), "--data-dir", str(data),
                 "--now", "2026-11-20T08:06"])
    out, err = capsys.readouterr()
    assert code == 0, err

    assert "finished an interrupted undo" in err + out, err + out
    assert note.read_text() == undone  # the undo stands: the replay does not write the review back
