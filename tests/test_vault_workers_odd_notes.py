"""Guard: odd notes parsed by the big cold load's pool of forked workers get the very reasons an
in-process parse gives (and a warm load repeats them from the cache), the rest of the vault
loads, and nothing is written. Existing tests run the odd notes through small vaults (parsed in
process) and the worker pool with sound notes only."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from vault_fixtures import USERS_NOTE

from studyapp.vault import Vault

OLD = 1_600_000_000


def _with(old: str, new: str) -> bytes:
    assert old in USERS_NOTE
    return USERS_NOTE.replace(old, new).encode()


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in itertools.pairwise("abcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join(["*" + prev] * 9) + "]")
    return ("---\n" + "\n".join(lines) + "\n---\n# laughs\n").encode()


ODD = {
    "bomb.md": _bomb(),
    "deep.md": ("---\nx: " + "[" * 10_000 + "]" * 10_000 + "\n---\n# deep\n").encode(),
    "python-tag.md": _with("difficulty: medium", "difficulty: !!python/object/apply:os.system ['true']"),
    "cr-only.md": USERS_NOTE.replace("\n", "\r").encode(),
    "latin1-block.md": _with("difficulty: medium", "difficulty: medium").replace(b"medium", b"m\xe9dium"),
    "never-closed.md": USERS_NOTE.replace("\n---\n#", "\n#").encode(),
    "year-9999.md": _with("next_review: '2026-03-02'", "next_review: 9999-12-31"),
    "count-1e400.md": _with("review_count: 0", "review_count: 1e400"),
    "nul-in-block.md": _with("difficulty: medium", "difficulty: me\x00dium"),
    "huge-value.md": ("---\nx: " + "a" * 5_000_000 + "\n---\n# big\n").encode(),
    "count-twice.md": _with("review_count: 0", "review_count: 0\nreview_count: 1"),
    "not-a-date.md": _with("next_review: '2026-03-02'", "next_review: 2026-06-15T25:00"),
}
FINE = {
    "bom-crlf.md": b"\xef\xbb\xbf" + USERS_NOTE.replace("\n", "\r\n").encode(),
    "empty.md": b"",
    "fence-in-body.md": (USERS_NOTE + "\n```\n---\nreview_count: 7\n---\n```\n").encode(),
}


def _vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "n").mkdir(parents=True)
    for i in range(30):
        (vault / "n" / f"{i:02d}.md").write_bytes(USERS_NOTE.encode())
    for name, raw in {**ODD, **FINE}.items():
        (vault / name).write_bytes(raw)
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            os.utime(os.path.join(folder, name), (OLD, OLD))
    return vault


def test_odd_notes_in_the_worker_pool_get_the_in_process_reasons(tmp_path, monkeypatch):
    vault = _vault(tmp_path)
    alone = Vault(vault).load()
    monkeypatch.setattr("studyapp.vault.parallel.MIN_FILES", 1)
    monkeypatch.setattr("studyapp.vault.parallel.BATCH", 5)
    monkeypatch.setattr("studyapp.vault.parallel.free_cores", lambda: 2)
    from studyapp.vault import parallel

    real, pooled = parallel.parse_in_workers, []
    monkeypatch.setattr(parallel, "parse_in_workers", lambda files: pooled.append(real(files)) or pooled[-1])
    cold = Vault(vault, cache_file=tmp_path / "cache.db").load()
    warm = Vault(vault, cache_file=tmp_path / "cache.db").load()

    assert len(pooled[0]) == len(ODD) + len(FINE) + 30  # every file came back from a worker
    assert {p.path for p in alone.problems} == set(ODD)
    for reason in (p.reason for p in alone.problems):
        assert reason.isprintable() and len(reason) <= 300 and "Traceback" not in reason
    assert cold.problems == alone.problems == warm.problems
    assert [n.path for n in cold.notes] == [n.path for n in alone.notes] == [n.path for n in warm.notes]
    assert len(alone.notes) == 30 + len(FINE)
    assert warm.parsed == 0
    for name, raw in {**ODD, **FINE}.items():
        assert (vault / name).read_bytes() == raw
