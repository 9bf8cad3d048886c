"""The first `rate` commands run at once on a new data dir: some are refused with "the review
database now serves another vault (<this very vault>)".

README: "A second `rate` waits (up to 20 s) ..., then starts from the first one's result: two
ratings are two reviews". On a vault and data dir used for the first time (a script rating
several notes in the background, or the app opened while a command runs), each process finds
no `<vault>/.studyapp/vault.json`, makes up its own vault id (`vault_binding.marker_or_new`)
and writes it; the database is bound to one id, then to another, and `check_still_served`
refuses every process whose id lost: "the review database now serves another vault
(/path/of/this/vault): a studyapp command used this data dir with it meanwhile. Nothing was
written; open /path/of/this/vault again to go on". There is only one vault; the rating the user
asked for is not recorded, and the message names the same folder as "another vault".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vault_fixtures import write

ROOT = Path(__file__).resolve().parents[1]
NOTES = ("a.md", "b.md", "c.md", "d.md")


def _note(name: str) -> str:
    return f"---\nreview_count: 0\nnext_review: 2026-01-01\n---\n# Question {name}\n\nAnswer.\n"


def _start(vault: Path, data: Path, home: Path, note: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(home))
    env.pop("STUDYAPP_VAULT", None)
    return subprocess.Popen([sys.executable, "-m", "studyapp", "rate", note, "--rating", "good",
                             "--vault", str(vault), "--data-dir", str(data), "--now", "2026-06-01T09:00"],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_first_ratings_started_together_are_all_recorded(tmp_path):
    for attempt in range(4):  # each round: a new vault and data dir, four ratings at once
        vault, data = tmp_path / f"vault{attempt}", tmp_path / f"data{attempt}"
        for name in NOTES:
            write(vault / name, _note(name))
        procs = [_start(vault, data, tmp_path / "home", name) for name in NOTES]
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            results.append((proc.returncode, out, err))
        refused = [(name, code, err.strip()) for name, (code, _out, err) in zip(NOTES, results)
                   if code != 0]
        assert not any("another vault" in err for *_rest, err in refused), (
            f"round {attempt}: a rating was refused as being of another vault, on the only vault "
            f"there is ({vault}):\n" + "\n".join(map(str, refused)))
        assert not refused, f"round {attempt}: {refused}"
        for name in NOTES:
            assert "review_count: 1\n" in (vault / name).read_text(encoding="utf-8"), name
        logs = sorted(p.name for p in (vault / ".studyapp" / "log").iterdir())
        assert len(logs) == 1, f"round {attempt}: one device logged under several ids: {logs}"
