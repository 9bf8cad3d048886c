"""One note must not stall a load: the heading pattern used to find a note's title backtracks
quadratically on a heading line holding a long run of spaces or tabs between two words.

`parse._HEADING_OR_CODE_FENCE` is `^(?:(```|~~~)|(#{1,2})[ \\t]+(.*?)[ \\t]*\\r?$)`: for each
character the lazy `(.*?)` takes, `[ \\t]*` runs over the whole rest of the blank run before `$`
fails. A note whose first line is a `## ` heading (so the title is looked for further down)
and holding `# x<60,000 spaces>y` made a cold `due` on a 3,500-note vault take 20.7 s instead
of 0.4 s; the time grows with the square of the run (a 64 MiB note: days). `rate` of that note
pays it again on every read.
"""

from __future__ import annotations

import time

from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault

SPACES = 100_000
"""About a minute with the quadratic pattern (2.5 s at 20,000); a linear scan takes a millisecond:
the bound below is 100 times that, and still far from the defect."""


def test_a_heading_with_a_long_blank_run_is_parsed_in_linear_time(tmp_path):
    vault = tmp_path / "vault"
    write(vault / "good.md", USERS_NOTE)
    odd = ("---\ncreated: '2026-03-02'\nnext_review: '2026-03-02'\n---\n## 概述\n\n"
           "# x" + " " * SPACES + "y\n\nbody\n")
    write(vault / "odd.md", odd)
    started = time.monotonic()
    snapshot = Vault(vault).load()
    elapsed = time.monotonic() - started
    assert {n.path for n in snapshot.notes} == {"good.md", "odd.md"}
    assert elapsed < 5, f"loading two notes took {elapsed:.1f} s (one heading line with {SPACES:,} spaces)"

