"""`studyapp import` run beside a `studyapp rate` of a block-less note makes the rating fail.

What the user sees: a note without a metadata block (a fresh note) is being rated
(`studyapp rate a.md --rating good`) while `studyapp import --yes` runs in another shell (or a
script, or a second window). Both are studyapp; nobody edited the note. `rate` fails, exit 1:

    studyapp: error: a.md (it changed on disk since it was read): 'next_review' was edited meanwhile; not written

and the rating is lost (nothing in the note, the database or the log). In a loop of
rate/undo/suspend/import processes started together, about one run in five refused a rating so.

Why: `import` adds blocks (`vault.importer.add_missing_blocks`, `Vault.add_block_in_place`)
without holding `<data dir>/writer.lock`, so it writes between the review's read of the note
and its write; the review then sees "its" keys changed by someone else and refuses. README:
"One studyapp writer at a time ... A second `rate` waits ... then starts from the first one's
result: two ratings are two reviews"; "nothing is lost with two writers".

Deterministic: the `rate` process pauses (a wrapped `Vault.rewrite_review_keys`) after reading
the note, while a real `import --yes` process runs to its end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from vault_fixtures import studyapp_process, write

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-04-06T10:00"
BLOCKLESS = "# 旋转位置编码 RoPE\n\n## 面试标准答案\n\nRoPE 把位置信息写进查询和键的旋转角度里。\n"

RATE_PAUSED_AFTER_ITS_READ = """
import sys, time
from pathlib import Path
from studyapp.vault.vault import Vault
paused, go = Path(sys.argv.pop(1)), Path(sys.argv.pop(1))
real = Vault.rewrite_review_keys
def rewrite(self, note, updates):
    paused.touch()               # the review has read the note (block-less)
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return real(self, note, updates)
Vault.rewrite_review_keys = rewrite
from studyapp.cli import run
sys.exit(run())
"""


def test_import_beside_the_first_review_of_a_note_does_not_make_the_rating_fail(tmp_path):
    note = write(tmp_path / "vault" / "a.md", BLOCKLESS)
    write(tmp_path / "vault" / "b.md", BLOCKLESS.replace("RoPE", "ALiBi"))
    assert studyapp_process(tmp_path, "due", now=NOW).returncode == 0
    paused, go = tmp_path / "paused", tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path / "home"))
    env.pop("STUDYAPP_VAULT", None)
    rate = subprocess.Popen([sys.executable, "-c", RATE_PAUSED_AFTER_ITS_READ, str(paused), str(go),
                             "rate", "a.md", "--rating", "good", "--vault", str(tmp_path / "vault"),
                             "--data-dir", str(tmp_path / "data"), "--now", NOW],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    importer = None
    try:
        deadline = time.monotonic() + 60
        while not paused.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        importer = subprocess.Popen([sys.executable, "-m", "studyapp", "import", "--yes",  # another shell
                                     "--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "data"),
                                     "--now", NOW], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        try:  # an import that waits for the review (the writer lock) is given 5 s, then the review goes on
            importer.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        go.touch()
        out, err = rate.communicate(timeout=60)
        _, import_err = importer.communicate(timeout=60)
    finally:
        go.touch()
        for process in (rate, importer):
            if process is not None and process.poll() is None:
                process.kill()
    assert importer.returncode == 0, import_err
    assert rate.returncode == 0, err
    text = note.read_text(encoding="utf-8")
    assert text.count("review_count:") == 1 and "review_count: 1\n" in text, text
