"""`studyapp stats` (a1a2bab) draws the review calendar and sums the reviews "in N weeks"
under it. A review's day is its reviewer's (the UTC offset it recorded): a review made at
00:30 on Thursday in Kiritimati (UTC+14) is, seen from Honolulu (UTC-10) at that very
instant, on a day after this machine's today. The calendar draws days after today blank, yet
the sum under it counts that review: "1 review in 18 weeks" under a calendar of empty dots.
What is counted under the calendar and what it shades must agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vault_fixtures import USERS_NOTE

from studyapp.stats import TEXT_SHADES

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-11-25T10:30:00+00:00"  # Thu 11-26 00:30 in Kiritimati, Wed 11-25 00:30 in Honolulu


def studyapp(tmp_path: Path, zone: str, *args: str) -> str:
    env = dict(os.environ, TZ=zone, COLUMNS="40", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "studyapp", "--vault", str(tmp_path / "vault"), "--data-dir",
         str(tmp_path / "data"), "--now", NOW, *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_sum_under_the_calendar_counts_only_what_it_draws(tmp_path):
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "n.md").write_text(USERS_NOTE, encoding="utf-8")
    studyapp(tmp_path, "Pacific/Kiritimati", "rate", "n.md", "--rating", "good")

    out = studyapp(tmp_path, "Pacific/Honolulu", "stats").splitlines()
    start = out.index("Reviews per day:")
    rows, footer = out[start + 2:start + 9], out[start + 9]
    shaded = sum(ch in TEXT_SHADES[1:] for row in rows for ch in row[4:])
    counted = int(footer.split()[0])
    assert (shaded == 0) == (counted == 0), (
        f"the calendar shades {shaded} day(s) but says {footer.strip()!r}:\n" + "\n".join(out[start:start + 10]))
