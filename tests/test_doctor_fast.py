"""`doctor` is fast: probing torch and CUDA (seconds: it imports torch in a subprocess) happens
only with `--torch`; the plain report gives torch's installed version and the last probe's
finding, so the information is kept."""

from __future__ import annotations

import subprocess

from studyapp.cli import main


def test_plain_doctor_starts_no_torch_probe(tmp_path, capsys, monkeypatch):
    real_run = subprocess.run

    def no_torch(command, *args, **kwargs):
        assert "import torch" not in " ".join(map(str, command)), "doctor imported torch"
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", no_torch)
    (tmp_path / "vault").mkdir()
    assert main(["doctor", "--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    torch_line = next(line for line in out.splitlines() if line.startswith("torch"))
    assert "--torch" in torch_line  # says how to check CUDA


def test_doctor_torch_probes_and_the_plain_report_remembers_it(tmp_path, capsys, monkeypatch):
    probes = []

    def fake_probe():
        probes.append(1)
        return "9.9.9, CUDA available: Imaginary GPU"

    monkeypatch.setattr("studyapp.doctor.torch_report", fake_probe)
    (tmp_path / "vault").mkdir()
    common = ["--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "d")]
    assert main(["doctor", "--torch", *common]) == 0
    assert "CUDA available: Imaginary GPU" in capsys.readouterr().out
    assert main(["doctor", *common]) == 0
    out = capsys.readouterr().out
    assert "CUDA available: Imaginary GPU" in out and "checked" in out
    assert probes == [1]
