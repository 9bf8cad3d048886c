"""335c926 warns a device that keeps its review log in its data dir on a vault whose other
devices record into the vault's log. The warning hung on ownership (`Ownership.OTHER`): when
the device keeping its log in its data dir was the one that claimed the vault (its first
device, which later ran `history-log data-dir`), it was never warned and doctor said "this
data dir records the vault's reviews", while its reviews reached no other device."""

from __future__ import annotations

from history_helpers import make_vault

from studyapp.cli import main


def _run(capsys, vault, data, *args, now, code=0):
    capsys.readouterr()
    got = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    assert got == code, err
    return out, err


def test_the_owner_keeping_its_log_in_its_data_dir_is_warned_when_others_log_in_the_vault(tmp_path, capsys):
    vault = make_vault(tmp_path / "vault")
    data_a, data_b = tmp_path / "a", tmp_path / "b"
    _run(capsys, vault, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    _run(capsys, vault, data_a, "history-log", "data-dir", now="2026-11-20T08:05")
    _, err = _run(capsys, vault, data_a, "due", now="2026-11-20T08:10")
    assert "history-log vault" not in err, "warned while no other device logs into the vault"
    _run(capsys, vault, data_b, "rate", "c.md", "--rating", "good", now="2026-11-20T08:20")
    _, err_b = _run(capsys, vault, data_b, "due", now="2026-11-20T08:25")  # B's log is in the vault now
    assert "history-log vault" not in err_b, "B records into the vault's log: nothing to tell it"

    _, err = _run(capsys, vault, data_a, "due", now="2026-11-20T08:30")
    assert "history-log vault" in err, f"no warning for A, whose reviews reach no device: {err!r}"
    out, _ = _run(capsys, vault, data_a, "doctor", now="2026-11-20T08:31", code=1)
    assert "reach none" in out, out

    _run(capsys, vault, data_a, "history-log", "vault", now="2026-11-20T08:35")
    _, err = _run(capsys, vault, data_a, "due", now="2026-11-20T08:40")
    assert "history-log vault" not in err, f"still warned after moving the log to the vault: {err!r}"
