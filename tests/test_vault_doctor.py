"""`studyapp doctor` reports the environment and unreadable notes, exit 1 when there are any."""

from __future__ import annotations

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main


def test_doctor_lists_problems_and_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    vault = tmp_path / "vault"
    write(vault / "ok.md", USERS_NOTE)
    write(vault / "坏.md", b"---\nnext_review: [\n---\n")
    assert main(["doctor", "--torch", "--vault", str(vault)]) == 1
    out = capsys.readouterr().out
    assert "1 readable (1 never reviewed, 0 without a metadata block)" in out
    assert "1 with problems" in out
    assert "坏.md: metadata block is not valid YAML" in out
    assert "python" in out and "data dir" in out and "stubbed in tests" in out


def test_doctor_passes_on_a_clean_vault(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    write(tmp_path / "vault" / "ok.md", USERS_NOTE)
    assert main(["doctor", "--vault", str(tmp_path / "vault")]) == 0


def test_doctor_reads_every_note_whole_and_reports_bytes_past_the_head(tmp_path, capsys, monkeypatch):
    """A load reads each note's head only (issue 15), so a stray Latin-1 byte deep in a long
    note's body is found when the note is shown or written; `doctor`, the thorough check, reads
    every file whole and reports it, cold and warm, with where it is."""
    from studyapp.vault.vault import HEAD_BYTES

    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    vault = tmp_path / "vault"
    write(vault / "ok.md", USERS_NOTE)
    long_note = USERS_NOTE.encode() + b"filler line\n" * (HEAD_BYTES // 12 + 50) + b"caf\xe9\n"
    write(vault / "long.md", long_note)
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    for _ in range(2):  # cold, then warm from the metadata cache
        assert main(["doctor", *common]) == 1
        out = capsys.readouterr().out
        assert "1 readable" in out and "1 with problems" in out
        assert f"long.md: not valid UTF-8 (byte 0xe9 at offset {len(long_note) - 2})" in out
    assert (vault / "long.md").read_bytes() == long_note
