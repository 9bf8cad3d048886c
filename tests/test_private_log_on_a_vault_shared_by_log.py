"""A device that keeps its log in its data dir (`history-log data-dir`) on a vault another
device records into through the vault's log: its reviews reach no other device, and the other
device's replay rewrites its review out of the note (`sync --full` there wrote
`review_count: 1` over this device's 2). README: another data dir opening the vault is warned
"until it runs `studyapp claim`", which matters "when the log ... is kept in each data dir".
No command warns: the vault's log holding the other device's events makes the vault count as
"shared", and `doctor` says "shared: each device records its reviews in its own log file (the
database is rebuilt from them)", which is not so for this device."""

from __future__ import annotations

from history_helpers import cli, make_vault, settled

from studyapp.cli import main


def test_a_device_whose_log_stays_in_its_data_dir_is_warned_on_a_vault_shared_by_log(tmp_path, capsys):
    vault, here, other = make_vault(tmp_path / "vault"), tmp_path / "here", tmp_path / "other"
    cli(capsys, vault, other, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, here, "due", now="2026-11-20T08:05")
    cli(capsys, vault, here, "history-log", "data-dir", now="2026-11-20T08:10")
    cli(capsys, vault, here, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    assert "review_count: 2" in (vault / "b.md").read_text()
    settled(vault / "b.md")
    cli(capsys, vault, other, "sync", "--full", now="2026-11-20T09:40")
    assert "review_count: 1" in (vault / "b.md").read_text()  # the review made here is gone

    capsys.readouterr()
    code = main(["due", "--vault", str(vault), "--data-dir", str(here), "--now", "2026-11-20T09:50"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert str(other) in err, f"no warning that the vault's reviews are recorded elsewhere: {err!r}"

    main(["doctor", "--vault", str(vault), "--data-dir", str(here), "--now", "2026-11-20T09:50"])
    owner = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("owner"))
    assert "shared" not in owner, owner
