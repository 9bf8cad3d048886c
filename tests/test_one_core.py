"""One core for the CLI and the TUI (issue 11): where the two front ends used to compute the
same thing twice, they now call one service, and these tests hold them to the same answer."""

from __future__ import annotations

import json

import pytest

from studyapp.cli import main
from studyapp.context import build_context

NOW = "2026-03-10T12:00+00:00"
SUGGESTED = """---
created: '2026-03-01'
last_reviewed: null
next_review: '2026-03-01'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- only-this-note
related_outlines: []
---
# 缩放点积注意力

## 面试标准答案

F.scaled_dot_product_attention(q, k, v): scores = q @ k.transpose(-2, -1) / sqrt(d_k), softmax.
"""
PASS = {"status": "pass", "summary": "all checks pass", "checks": [], "seconds": 0.1,
        "device": "cpu", "seed": 1, "hint": "", "detail": "", "output": ""}


class RecordingGrader:
    """Stands in for `GraderClient`: remembers the limits it was built with, passes everything."""

    built: list[dict] = []

    def __init__(self, limits) -> None:
        RecordingGrader.built.append({"timeout": limits.timeout, "memory_mb": limits.memory_mb})

    def start(self) -> None:
        pass

    def grade(self, drill_id, path, device="auto", limits=None, seed=None):
        return dict(PASS, drill=drill_id, file=str(path))

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


@pytest.fixture
def vault(tmp_path):
    vault = tmp_path / "vault"
    (vault / "attn").mkdir(parents=True)
    (vault / "attn" / "sdpa.md").write_text(SUGGESTED, encoding="utf-8")
    return vault


def test_cli_and_tui_build_the_grader_through_one_service_from_the_same_settings(vault, tmp_path, monkeypatch):
    from studyapp import drills
    from studyapp.facade import StudyFacade

    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("grader_timeout = 3.5\ngrader_memory_mb = 777\n", encoding="utf-8")
    through_service = []
    real = drills.new_grader_client

    def spy(settings, **kw):
        through_service.append(settings)
        return real(settings, **kw)

    monkeypatch.setattr(drills, "new_grader_client", spy)
    monkeypatch.setattr("studyapp.grader.client.GraderClient", RecordingGrader)
    RecordingGrader.built = []
    mine = tmp_path / "mine.py"
    mine.write_text("def scaled_dot_product_attention(q, k, v, mask=None):\n    return v\n")

    assert main(["grade", "sdpa", str(mine), "--vault", str(vault), "--data-dir", str(data),
                 "--now", NOW]) == 0
    ctx = build_context(vault=str(vault), data_dir=str(data), now=NOW)
    facade = StudyFacade(ctx)
    facade.load()
    facade.grade("sdpa", mine)
    facade.close()

    assert len(through_service) == 2, "both front ends build their grader in `studyapp.drills`"
    assert RecordingGrader.built == [{"timeout": 3.5, "memory_mb": 777}] * 2


def test_mastery_counts_the_drills_the_tui_shows_in_the_note_and_in_the_stats(vault, tmp_path, monkeypatch, capsys):
    """A note whose drills are suggested, not declared: passing the drills the review screen
    shows moves its mastery, and the note, `stats` and the TUI's stats say the same number."""
    from studyapp.facade import StudyFacade
    from studyapp.vault import Vault

    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=NOW)
    monkeypatch.setattr("studyapp.grader.client.GraderClient", RecordingGrader)
    facade = StudyFacade(ctx)
    facade.load()
    facade.begin_review()
    card = facade.current_card()
    assert card is not None and "sdpa" in card.drills
    facade.rate(card.path, 3)
    after_review = Vault(vault).read_note(card.path).mastery_level
    for drill in card.drills:
        facade.grade(drill, tmp_path / "mine.py")
    in_note = Vault(vault).read_note(card.path).mastery_level
    in_tui = dict(facade.stats().mastery_by_tag)["only-this-note"]
    facade.close()
    assert main(["stats", "--json", "--vault", str(vault), "--data-dir", str(tmp_path / "data"),
                 "--now", NOW]) == 0
    in_cli = json.loads(capsys.readouterr().out)["mastery_by_tag"]["only-this-note"]["mastery"]

    assert in_note > after_review, "passing the note's drills counts toward its mastery"
    assert in_note == in_tui == in_cli


def test_a_note_naming_an_unknown_drill_is_checked_once(vault, tmp_path, capsys):
    """`mastery` sorts a note's ids once; the TUI's card and `due --json` both carry the verdict."""
    from studyapp.mastery import trained_drills, unknown_drills
    from studyapp.vault import Vault

    text = SUGGESTED.replace("related_outlines: []", "related_outlines: []\ndrills: [foo, sdpa, foo]")
    (vault / "attn" / "named.md").write_text(text, encoding="utf-8")
    note = Vault(vault).read_note("attn/named.md")
    assert trained_drills(note) == ("sdpa",)
    assert unknown_drills(note) == ("foo",)
    assert main(["due", "--json", "--vault", str(vault), "--data-dir", str(tmp_path / "data"),
                 "--now", NOW]) == 0
    (listed,) = [n for n in json.loads(capsys.readouterr().out) if n["path"] == "attn/named.md"]
    assert (listed["drills"], listed["drills_unknown"]) == (["sdpa"], ["foo"])


LONG_MODULE_LINES = 420
"""Issue 11: "no module over ~400 lines without a reason in its docstring"."""


def test_every_long_module_says_in_its_docstring_why_it_is_long():
    """A module past ~400 lines states its length and why (`~550 lines ... on purpose: ...`),
    so that a newcomer knows the size is a decision, and a module that grows past it is noticed."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [*root.joinpath("studyapp").rglob("*.py"), *root.joinpath("kernels").rglob("*.py")]
    silent = []
    for path in files:
        if "bank" in path.parts or path.name == "starter.py":
            continue  # learners' code and wrong solutions, not the project's modules
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LONG_MODULE_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not re.search(r"\d+\s+lines", doc):
            silent.append(f"{path.relative_to(root)} ({text.count(chr(10))} lines)")
    assert not silent, f"long modules whose docstring does not say why: {silent}"
