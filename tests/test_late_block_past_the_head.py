"""One odd note in a big vault: a review block below a blank first line, longer than the 4 KB
head a load reads.

README: "a block of review keys below blank lines (Obsidian reads it as text, and a review would
add a second block in front)" is reported with its reason by `due`, `import`, `doctor` and the
Notes screen, "skipped (not scheduled, not listed as due)". `parse._refuse_a_late_block` does so,
but only when its regex sees the closing `---`: a load parses a note from its first 4096 bytes
(`vault._note_from_head`), and when the block is longer than that, the head holds no closing
fence, the late block goes unseen, `title_from_first_line` takes the `---` line itself as the
title, and the note is loaded as a block-less new note. `due` lists it (title "---", review_count
0, although its block says 3), `doctor` calls every note readable and exits 0, and only `rate`
(which reads the whole file) refuses it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from vault_fixtures import new_note

NOW = "2026-11-23T09:00:00+00:00"
NOTES = 2000
ODD = "odd.md"


LATE_BLOCK = ("\n---\ncreated: '2025-10-19'\nlast_reviewed: '2026-11-01'\nnext_review: '2026-11-20'\n"
              "review_count: 3\ndifficulty: medium\nmastery_level: 0.4\naliases:\n"
              + "".join(f"- another name for this concept, number {i}\n" for i in range(120))
              + "related_outlines: []\n---\n# 层归一化与批归一化的区别\n\n## 面试标准答案\n\n不依赖批大小。\n")


def _vault(root: Path) -> tuple[Path, Path, bytes]:
    vault = root / "vault"
    for i in range(NOTES):
        path = vault / f"topic{i % 10}" / f"note{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new_note(f"Question {i}: why scale attention scores", f"Answer {i}.",
                                     tags=(f"topic{i % 10}", f"topic{i % 10}/note{i:04d}.md")), encoding="utf-8")
    raw = LATE_BLOCK.encode("utf-8")
    assert len(raw) > 4096 and raw.index(b"\n---\n", 2) > 4096  # the closing fence lies past the head
    (vault / ODD).write_bytes(raw)
    old = time.time() - 3600
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
    return vault, root / "data", raw


def _run(vault: Path, data: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-m", "studyapp", *args, "--vault", str(vault),
                           "--data-dir", str(data), "--now", NOW],
                          capture_output=True, text=True, timeout=120, env=env, check=False)


def _naming(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if name in line and not line.startswith("studyapp: note:")]


def test_due_reports_a_long_review_block_below_a_blank_line_instead_of_listing_it(tmp_path):
    vault, data, raw = _vault(tmp_path)
    # the same file read whole is refused, with the reason a short late block gets
    refused = _run(vault, data, "rate", ODD, "--rating", "good")
    assert refused.returncode == 1 and "does not start on the first line" in refused.stderr, refused.stderr

    for run in ("cold", "warm"):
        due = _run(vault, data, "due", "--json")
        assert due.returncode == 0, due.stderr
        listed = {row["path"]: row for row in json.loads(due.stdout)}
        assert "topic0/note0000.md" in listed
        assert ODD not in listed, (
            f"{run} `due` lists {ODD} as a note (title {listed[ODD]['title']!r}, review_count "
            f"{listed[ODD]['review_count']}, new={listed[ODD]['new']}) although `rate` refuses it: a load "
            "read only its first 4 KB, which hold no closing '---', and took the block's '---' for the title")
        lines = _naming(due.stderr, ODD)
        assert len(lines) == 1 and "first line" in lines[0], (
            f"{run} `due` did not report {ODD} (stderr {due.stderr!r}): its late block went unseen in the "
            "4 KB head a load parses, and it is scheduled as a new note without a block")
    assert (vault / ODD).read_bytes() == raw


def test_doctor_reports_a_long_review_block_below_a_blank_line(tmp_path):
    vault, data, raw = _vault(tmp_path)
    doctor = _run(vault, data, "doctor")
    assert f"{NOTES} readable" in doctor.stdout and "1 with problems" in doctor.stdout and doctor.returncode == 1, (
        f"`doctor` (the thorough check) finds nothing wrong with {ODD}, whose review block `rate` refuses "
        f"(exit {doctor.returncode}):\n" + "\n".join(line for line in doctor.stdout.splitlines() if "notes" in line))
    assert any(ODD in line and "first line" in line for line in doctor.stdout.splitlines())
    assert (vault / ODD).read_bytes() == raw

