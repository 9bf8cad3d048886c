"""One note whose body goes wrong only past the head a load reads (the first 4 KiB) must not stop
`due --json`, `stats` and `drills` for the whole vault, and `doctor` must name it.

A load reads each note's head only, so such a note is listed and scheduled as usual (README: "a
byte past it that is not UTF-8 shows when the note is shown or written", and `doctor`, "the
thorough check, reads every file whole and reports it"). Two tails of that kind:

* a byte that is not UTF-8 (a Latin-1 `é` pasted deep in a long note);
* a body pasted from an old Mac export, its lines ending in a lone CR (more CRs than LFs in
  the whole file, so `parse.check_line_endings` refuses it read whole, not from its head).

`due --json` (each due note's drills), `stats` (mastery by tag) and `drills` (the notes each
drill trains) read the bodies to pair notes with drills, and the first such note raises out of
the whole command: exit 1, "cannot read the note", nothing else of the vault shown. Plain
`due` lists the same note without complaint. For the CR tail, `doctor` (which only decodes each
file) says "0 with problems" while `rate` refuses the note.
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
NOTES = 40
BAD = "bad.md"
TAILS = {
    "latin1-byte": ("正文" * 3000).encode() + b"\ncaf\xe9\n",
    "cr-only-body": "".join(f"pasted line {i} of an old Mac export\r" for i in range(300)).encode(),
}


def _reviewed(text: str) -> str:
    return (text.replace("review_count: 0", "review_count: 3")
            .replace("last_reviewed: null", "last_reviewed: '2026-06-01'")
            .replace("next_review: '2026-03-02'", "next_review: '2026-06-10'"))


def _vault(tmp_path: Path, tail: bytes) -> Path:
    vault = tmp_path / "vault"
    for i in range(NOTES):
        write(vault / f"topic{i % 4}" / f"n{i:02d}.md", _reviewed(USERS_NOTE) + "softmax attention\n")
    # a reviewed note, its block and title in the first 4 KiB, the odd tail far below
    write(vault / BAD, _reviewed(USERS_NOTE).encode() + ("正文" * 1500 + "\n").encode() + tail)
    old = time.time() - 3600
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
    return vault


def _args(vault: Path, data: Path, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", NOW]


@pytest.mark.parametrize("tail", list(TAILS))
@pytest.mark.parametrize("command", [["due", "--json"], ["stats", "--json"], ["drills", "--json"]],
                         ids=["due-json", "stats", "drills"])
def test_one_bodys_tail_does_not_stop_the_command(tmp_path, capsys, command, tail):
    vault = _vault(tmp_path, TAILS[tail])
    data = tmp_path / "data"
    assert main(_args(vault, data, "due")) == 0  # the note loads (from its head) and is due
    assert BAD in capsys.readouterr().out
    for _ in range(2):  # cold, then with the metadata cache
        code = main(_args(vault, data, *command))
        out, err = capsys.readouterr()
        assert code == 0, f"one note stopped `{' '.join(command)}`: {err.strip()}"
        json.loads(out)
        assert "Traceback" not in err
    assert (vault / BAD).read_bytes().endswith(TAILS[tail])


def test_doctor_names_a_note_rate_refuses_for_its_line_endings(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    vault = _vault(tmp_path, TAILS["cr-only-body"])
    data = tmp_path / "data"
    assert main(_args(vault, data, "rate", BAD, "--rating", "good")) == 1
    refused = capsys.readouterr().err
    assert "CR only" in refused
    main(_args(vault, data, "doctor"))
    out = capsys.readouterr().out
    assert any(BAD in line and "CR" in line for line in out.splitlines()), (
        f"rate refuses {BAD} ({refused.strip()}) but doctor says:\n{out}")
