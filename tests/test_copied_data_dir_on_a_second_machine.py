"""Known gap, kept as a strict expected failure. A second laptop set up by copying the data dir over (the vault at the same place, kept in
step by a sync tool): both data dirs keep the first one's id, so both devices append to one log
file, `<vault>/.studyapp/log/<id>.jsonl`. The sync tool keeps one version of that file (here
the laptop's, the newer), and the first machine's review is gone from the log and from its
database: `sync` replays the laptop's file (it grew, so nothing is adopted back), `stats` and
undo lose the review, while its note still says it was reviewed. The copy, at another place, is
another device (as a copied vault is another vault) and needs a log file of its own."""

from __future__ import annotations

import shutil

import pytest
from history_helpers import cli, make_vault, review_log, settled


@pytest.mark.xfail(strict=True, reason="known gap: a data dir copied to another machine keeps its device id (the marker records no place), so both append to one log file")
def test_a_copied_data_dir_on_a_second_machine_loses_no_review_of_the_first(tmp_path, capsys):
    vault = make_vault(tmp_path / "vault")  # each machine's copy sits at this same path
    settled(*vault.glob("*.md"))
    desk, laptop = tmp_path / "desk-data", tmp_path / "laptop-data"
    cli(capsys, vault, desk, "rate", "c.md", "--rating", "good", now="2026-11-20T07:00")
    laptop_vault = tmp_path / "laptop-vault"
    shutil.copytree(vault, laptop_vault)
    shutil.copytree(desk, laptop)  # the laptop is set up by copying the data dir

    cli(capsys, vault, desk, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    desk_vault = tmp_path / "desk-vault"
    vault.rename(desk_vault)
    laptop_vault.rename(vault)  # on the laptop
    cli(capsys, vault, laptop, "rate", "b.md", "--rating", "good", now="2026-11-20T08:30")
    cli(capsys, vault, laptop, "rate", "b.md", "--rating", "good", now="2026-11-20T08:45")
    vault.rename(laptop_vault)
    desk_vault.rename(vault)  # back on the desk: the sync tool brings the laptop's newer files
    for f in (laptop_vault / ".studyapp" / "log").glob("*.jsonl"):
        shutil.copy2(f, vault / ".studyapp" / "log" / f.name)  # the laptop's is the newer
    shutil.copy2(laptop_vault / "b.md", vault / "b.md")
    settled(*vault.glob("*.md"))

    cli(capsys, vault, desk, "sync", now="2026-11-20T10:00")

    assert sorted(row[0] for row in review_log(desk)) == ["a.md", "b.md", "b.md", "c.md"]
