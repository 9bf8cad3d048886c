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
