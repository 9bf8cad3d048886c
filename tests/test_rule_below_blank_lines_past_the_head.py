"""A note that opens with a blank line and a `---` horizontal rule (no review keys: body text,
README) longer than the 4 KB head a load reads. Since 7833f34 (`may_hold_a_late_block`) such a
head is read whole; a note whose bytes past the head are not UTF-8 was loaded from its head
before, like any other note (`plain.md` here still is), and is now skipped by `due` with
"not valid UTF-8": the late-block check took a studied note out of the vault."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

NOW = "2026-11-25T09:00:00+00:00"
BODY = "".join(f"line {i} of the answer text here\n" for i in range(200))
TAIL = b"\xff\xfe pasted from a latin-1 page: caf\xe9\n"  # past the first 4 KB


def _due(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(root), XDG_CONFIG_HOME=str(root / "config"))
    return subprocess.run([sys.executable, "-m", "studyapp", "--vault", str(root / "v"), "--data-dir",
                           str(root / "d"), "--now", NOW, "due"], capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_rule_below_a_blank_line_keeps_a_note_with_odd_bytes_past_the_head(tmp_path):
    vault = tmp_path / "v"
    vault.mkdir()
    (tmp_path / "d").mkdir()
    (vault / "plain.md").write_bytes(("# Plain title\n\n" + BODY).encode() + TAIL)
    (vault / "rule.md").write_bytes(("\n---\n\n# Rule title\n\n" + BODY).encode() + TAIL)
    for _ in range(2):  # cold, then warm
        result = _due(tmp_path)
        assert "plain.md" in result.stdout, result.stdout + result.stderr
        assert "rule.md" in result.stdout and "2 notes in the vault" in result.stdout, (
            result.stdout + result.stderr)
