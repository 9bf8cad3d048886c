"""`sync` must say which reviewed note it could not bring up to date because the note is
malformed; today it skips it without a word.

Device A reviews `a.md` twice; device B, whose copy of `a.md` holds a value it cannot read
(`review_count: ?`, a half-merged file), replays the log: "replayed 2 events ...; updated the
review keys of 0 notes", nothing about a.md (`history.sync.write_owned_keys` walks
`snapshot.notes` only; a note in `snapshot.problems` is dropped silently). Once the user fixes
the value, a plain `sync` says "up to date with the review log" and the note keeps the stale
keys (`review_count: 0`, `next_review` months ago) until someone thinks of `sync --full`.
"""

from __future__ import annotations

from pathlib import Path

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main


def _args(vault: Path, data: Path, now: str, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", now]


def test_sync_names_a_reviewed_note_it_cannot_update(tmp_path, capsys):
    vault = tmp_path / "vault"
    write(vault / "a.md", USERS_NOTE)
    write(vault / "b.md", USERS_NOTE)
    device_a, device_b = tmp_path / "a", tmp_path / "b"
    assert main(_args(vault, device_a, "2026-06-15T09:00", "rate", "a.md", "--rating", "good")) == 0
    assert main(_args(vault, device_a, "2026-06-16T09:00", "rate", "a.md", "--rating", "good")) == 0
    capsys.readouterr()
    write(vault / "a.md", USERS_NOTE.replace("review_count: 0", "review_count: ?"))  # B's copy
    assert main(_args(vault, device_b, "2026-06-17T09:00", "sync")) == 0
    captured = capsys.readouterr()
    said = [line for line in (captured.out + captured.err).splitlines() if "a.md" in line]
    assert said, f"sync said nothing about a.md:\n{captured.out}{captured.err}"
