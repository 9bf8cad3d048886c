"""What learner code prints or raises reaches the terminal, the JSON and the review log as text:
no escape sequence is obeyed, and no character that cannot be written loses the verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = r'''
print("\x1b[2J\x1b[H\x1b[32mPASS  fake.py  (sdpa, cpu, 0.50 s)\n  all core checks pass\x1b[0m\x1b[8m\r\x07")


def scaled_dot_product_attention(Q, K, V, mask=None):
    raise ValueError("bad \ud800 value \x1b]0;owned\x07")
'''
"""Clears the screen, draws a green fake PASS, then hides what follows; its error message holds
a lone surrogate (no encoding can write it) and a title-setting escape."""


def studyapp(*args: str | bytes, data_dir: Path) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(data_dir),
                           "--vault", str(data_dir / "vault"), *args],
                          capture_output=True, env=env, cwd=ROOT, timeout=120)


def test_learner_output_and_errors_are_shown_as_text_and_the_verdict_is_kept(tmp_path):
    (tmp_path / "vault").mkdir()
    name = os.fsencode(tmp_path) + b"/sol\xff.py"  # a file name that is not UTF-8
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(HOSTILE)
    out = studyapp("grade", "sdpa", name, "--device", "cpu", data_dir=tmp_path)
    assert out.returncode == 1, out.stderr.decode(errors="replace")
    text = out.stdout.decode("utf-8")  # valid UTF-8
    assert text.startswith("ERROR  ")
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "␛[2J" in text and "ValueError" in text and "bad \ufffd value" in text
    assert b"Traceback" not in out.stderr

    as_json = studyapp("grade", "sdpa", name, "--json", "--device", "cpu", data_dir=tmp_path)
    assert as_json.returncode == 1, as_json.stderr.decode(errors="replace")
    [verdict] = json.loads(as_json.stdout)
    assert verdict["status"] == "error" and "bad \ufffd value" in verdict["summary"] + verdict["hint"]

    listed = json.loads(studyapp("drills", "--json", data_dir=tmp_path).stdout)
    assert {d["id"]: d["status"] for d in listed}["sdpa"] == "failing"  # the attempt recorded
    [log] = (tmp_path / "vault" / ".studyapp" / "log").glob("*.jsonl")
    attempts = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if '"drill' in line]
    assert len(attempts) == 1  # the same bytes graded again are the same run, logged once
    assert "bad \ufffd value" in attempts[0]["summary"]
