"""`doctor --torch` says where drills will be graded, as the grader decides it ("auto": CUDA
when torch was built with it and a GPU answers, else the CPU), not only whether CUDA exists."""

from __future__ import annotations

import subprocess

import pytest

from studyapp import doctor


def test_on_this_machine_the_report_names_the_cpu():
    report = doctor.torch_report()  # the real probe, in a subprocess (no GPU here)
    if "CUDA available" in report:
        pytest.skip("a GPU answers on this machine")
    assert "drills are graded on the CPU" in report


@pytest.mark.parametrize("built, available, expected", [
    ("True", "True", "drills are graded on CUDA (NVIDIA H100 80GB HBM3)"),
    ("False", "False", "drills are graded on the CPU"),
    ("True", "False", "drills are graded on the CPU"),
])
def test_the_report_follows_the_graders_choice(monkeypatch, built, available, expected):
    name = "NVIDIA H100 80GB HBM3" if available == "True" else ""

    def probe(*args, **kwargs):
        return subprocess.CompletedProcess(args, 0, f"2.13.0\n{built}\n{available}\n{name}\n", "")

    monkeypatch.setattr(subprocess, "run", probe)
    assert expected in doctor.torch_report()
