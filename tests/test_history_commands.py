"""The history commands: where the log lives (said on first run, moved with one command),
and `studyapp sync`."""

from __future__ import annotations

import json

from history_helpers import card_states, cli, make_vault

from studyapp.cli import main


def device_file(data) -> str:
    return json.loads((data / "data-dir.json").read_text())["id"] + ".jsonl"


def test_the_first_run_says_the_log_is_in_the_vault_once(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    assert main(["due", "--vault", str(vault), "--data-dir", str(data)]) == 0
    err = capsys.readouterr().err
    assert "studyapp: note:" in err and str(vault / ".studyapp" / "log") in err
    assert "warning" not in err
    assert main(["due", "--vault", str(vault), "--data-dir", str(data)]) == 0
    assert "kept in the vault" not in capsys.readouterr().err


def test_moving_the_log_to_the_data_dir_and_back_is_one_command(tmp_path, capsys):
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    cli(capsys, vault, other, "rate", "c.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T09:00")
    in_vault = vault / ".studyapp" / "log"
    mine, theirs = device_file(data), device_file(other)

    out = cli(capsys, vault, data, "history-log", "data-dir", now="2026-11-20T09:01")
    assert "moved 1 log file" in out
    assert 'history_log = "data-dir"' in (data / "config.toml").read_text()
    assert not (in_vault / mine).exists() and (data / "log" / mine).exists()
    assert (in_vault / theirs).exists()  # another device's file is never removed

    cli(capsys, vault, data, "rate", "b.md", "--rating", "easy", now="2026-11-20T09:05")
    assert len((data / "log" / mine).read_text().splitlines()) == 2
    cards = card_states(data)
    (data / "studyapp.sqlite3").unlink()
    cli(capsys, vault, data, "due", now="2026-11-20T09:06")
    assert card_states(data) == cards

    cli(capsys, vault, data, "history-log", "vault", now="2026-11-20T09:07")
    assert len((in_vault / mine).read_text().splitlines()) == 2
    assert not (data / "log" / mine).exists()
    assert 'history_log = "vault"' in (data / "config.toml").read_text()


def test_a_bad_history_log_setting_is_one_line(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('history_log = "cloud"\n')
    assert main(["due", "--vault", str(vault), "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "history_log must be one of vault, data-dir" in err


def test_sync_reports_what_it_replayed_and_rewrote(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    assert "up to date" in cli(capsys, vault, data, "sync", now="2026-11-20T08:01")
    note = vault / "a.md"
    text = note.read_text()
    note.write_text(text.replace("review_count: 3", "review_count: 2"))  # an old copy's value
    out = cli(capsys, vault, data, "sync", "--full", now="2026-11-20T08:02")
    assert "replayed 1 event" in out and "a.md" in out
    assert "review_count: 3" in note.read_text()
