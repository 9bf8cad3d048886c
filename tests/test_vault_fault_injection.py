"""Kill a writer with SIGKILL at random moments: every note is the old or the new version."""

from __future__ import annotations

import os
import random
import signal
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

def write_forever(vault_dir: Path, paths: list[str]) -> None:
    """The child: flip every note between two versions as fast as it can, until killed."""
    vault = Vault(vault_dir)
    while True:
        for path in paths:
            note = vault.read_note(path)
            count = 1 - note.review_count
            vault.write_review_keys(note, {"review_count": count,
                                           "next_review": date(2026, 1, 1) + timedelta(days=count)})


ITERATIONS = 200


def test_sigkill_during_writes_never_leaves_a_partial_note(tmp_path):
    vault_dir = tmp_path / "vault"
    big_body = ("注意力权重的计算需要缩放。" * 50 + "\n") * 200  # ~400 KB: writes take a while
    old = USERS_NOTE + big_body
    new = (old.replace("next_review: '2026-03-02'", "next_review: '2026-01-02'")
              .replace("review_count: 0", "review_count: 1"))
    versions = {old.encode(), new.encode(),
                old.replace("next_review: '2026-03-02'", "next_review: '2026-01-01'").encode()}
    paths = [f"主题/n{i}.md" for i in range(3)]
    for path in paths:
        write(vault_dir / path, old)
    rng = random.Random(1234)
    seen = set()
    deadline = time.monotonic() + 60
    for _ in range(ITERATIONS):
        pid = os.fork()  # a forked child starts in microseconds; a fresh interpreter would not
        if pid == 0:
            try:
                write_forever(vault_dir, paths)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for path in paths:
            raw = (vault_dir / path).read_bytes()
            assert raw in versions, path
            seen.add(raw)
        assert time.monotonic() < deadline
    assert len(seen) >= 2, "the writer never got to write: the test proved nothing"
    snapshot = Vault(vault_dir).load()
    assert sorted(n.path for n in snapshot.notes) == paths and snapshot.problems == []
    # Leftover temp files (a kill between create and rename) are hidden from the loader.
    leftovers = [p.name for p in (vault_dir / "主题").iterdir() if p.name not in {Path(x).name for x in paths}]
    assert all(name.startswith(".") for name in leftovers)
