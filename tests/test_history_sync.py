"""Two devices on one vault, kept in step by a file-sync tool: after syncing, both show what
one device doing the same reviews in time order shows.

Each device has its own copy of the vault and its own data dir; `sync_tool` copies files
between the copies the way Syncthing or Dropbox would: a device's log file only ever changes
on that device, so it is always copied from there; a note can be overwritten by a stale copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from history_helpers import (
    card_states,
    cli,
    make_vault,
    owned_keys,
    remove_database,
    review_log,
    stats,
)

LATER = "2026-11-30T09:00"


def sync_tool(source: Path, target: Path, notes: tuple[str, ...] = ("a.md", "b.md", "c.md")):
    """Copy `notes` and every log file from `source` to `target` (the newer side's copy)."""
    for name in notes:
        shutil.copy2(source / name, target / name)
    log = source / ".studyapp" / "log"
    if log.is_dir():
        (target / ".studyapp" / "log").mkdir(parents=True, exist_ok=True)
        for entry in log.glob("*.jsonl"):
            if entry.name in _own_files(source):  # only the owner's copy is ever newer
                shutil.copy2(entry, target / ".studyapp" / "log" / entry.name)


_OWNERS: dict[Path, set[str]] = {}


def _own_files(vault: Path) -> set[str]:
    return _OWNERS.get(vault, set())


def register_device(vault: Path, data: Path) -> None:
    import json

    device = json.loads((data / "data-dir.json").read_text())["id"]
    _OWNERS.setdefault(vault, set()).add(f"{device}.jsonl")


def test_two_devices_synced_show_what_one_device_doing_the_same_reviews_shows(tmp_path, capsys):
    vault_a, data_a = make_vault(tmp_path / "a" / "vault"), tmp_path / "a" / "data"
    vault_b, data_b = tmp_path / "b" / "vault", tmp_path / "b" / "data"
    shutil.copytree(vault_a, vault_b)
    vault_r, data_r = tmp_path / "r" / "vault", tmp_path / "r" / "data"
    shutil.copytree(vault_a, vault_r)
    stale_c = (vault_b / "c.md").read_bytes()  # B's old copy of c.md, before any review

    # Device A, morning.
    cli(capsys, vault_a, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    register_device(vault_a, data_a)
    sync_tool(vault_a, vault_b)
    cli(capsys, vault_a, data_a, "rate", "c.md", "--rating", "good", now="2026-11-20T09:00")
    # Device B, the same day, without having seen A's second review: a.md again, then b.md
    # rated, undone and rated again.
    cli(capsys, vault_b, data_b, "rate", "a.md", "--rating", "hard", now="2026-11-20T10:00")
    register_device(vault_b, data_b)
    cli(capsys, vault_b, data_b, "rate", "b.md", "--rating", "easy", now="2026-11-20T10:05")
    cli(capsys, vault_b, data_b, "undo", now="2026-11-20T10:06")
    cli(capsys, vault_b, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T10:10")
    # Device A, next day, still unsynced.
    cli(capsys, vault_a, data_a, "rate", "c.md", "--rating", "again", now="2026-11-21T09:00")

    # The sync tool runs: B's newer notes reach A, and B's stale c.md overwrites A's newer one.
    (vault_b / "c.md").write_bytes(stale_c)
    sync_tool(vault_b, vault_a, notes=("a.md", "b.md", "c.md"))
    cli(capsys, vault_a, data_a, "sync", now=LATER)
    sync_tool(vault_a, vault_b)
    cli(capsys, vault_b, data_b, "sync", now=LATER)

    # One device doing the same reviews in time order.
    for args, now in [(("rate", "a.md", "--rating", "good"), "2026-11-20T08:00"),
                      (("rate", "c.md", "--rating", "good"), "2026-11-20T09:00"),
                      (("rate", "a.md", "--rating", "hard"), "2026-11-20T10:00"),
                      (("rate", "b.md", "--rating", "easy"), "2026-11-20T10:05"),
                      (("undo",), "2026-11-20T10:06"),
                      (("rate", "b.md", "--rating", "good"), "2026-11-20T10:10"),
                      (("rate", "c.md", "--rating", "again"), "2026-11-21T09:00")]:
        cli(capsys, vault_r, data_r, *args, now=now)

    expected_cards = card_states(data_r)
    assert card_states(data_a) == expected_cards
    assert card_states(data_b) == expected_cards
    expected_log = review_log(data_r)
    assert len(expected_log) == 5  # six ratings, one undone
    assert review_log(data_a) == expected_log and review_log(data_b) == expected_log
    expected_stats = stats(capsys, vault_r, data_r, LATER)
    assert stats(capsys, vault_a, data_a, LATER) == expected_stats
    assert stats(capsys, vault_b, data_b, LATER) == expected_stats
    # the notes' owned keys too: c.md's stale copy was corrected from the log
    expected_notes = owned_keys(vault_r)
    assert owned_keys(vault_a) == expected_notes
    assert owned_keys(vault_b) == expected_notes

    # and either device's database, deleted, comes back the same
    remove_database(data_b)
    cli(capsys, vault_b, data_b, "due", now=LATER)
    assert card_states(data_b) == expected_cards and review_log(data_b) == expected_log


def test_a_device_syncs_on_start_without_being_asked(tmp_path, capsys):
    vault_a, data_a = make_vault(tmp_path / "a" / "vault"), tmp_path / "a" / "data"
    vault_b, data_b = tmp_path / "b" / "vault", tmp_path / "b" / "data"
    shutil.copytree(vault_a, vault_b)
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    register_device(vault_a, data_a)
    sync_tool(vault_a, vault_b, notes=())  # the log arrived, the note not yet
    cli(capsys, vault_b, data_b, "due", now="2026-11-20T08:01")
    assert card_states(data_b) == card_states(data_a)
    assert "review_count: 1" in (vault_b / "b.md").read_text()  # written from the log


def test_a_second_device_on_the_vault_log_is_not_warned(tmp_path, capsys):
    from studyapp.cli import main

    vault, data_a, data_b = make_vault(tmp_path / "vault"), tmp_path / "a", tmp_path / "b"
    cli(capsys, vault, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, data_a, "due", now="2026-11-20T08:01")  # claims the vault
    capsys.readouterr()
    assert main(["due", "--vault", str(vault), "--data-dir", str(data_b),
                 "--now", "2026-11-20T08:02"]) == 0
    err = capsys.readouterr().err
    assert "another data dir" not in err
    out = cli(capsys, vault, data_b, "doctor", now="2026-11-20T08:02")
    assert "shared" in out
    assert card_states(data_b) == card_states(data_a)
