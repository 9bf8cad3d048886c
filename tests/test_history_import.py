"""`studyapp import-history osr`: Obsidian Spaced Repetition's schedules become FSRS cards,
the user's files stay as they were, and importing twice adds nothing."""

from __future__ import annotations

from datetime import datetime

import fsrs_rs_python
from history_helpers import card_states, cli

FRONT_250 = """---
sr-due: 2026-12-01
sr-interval: 12
sr-ease: 250
tags: [attention]
---
# Why scale by sqrt(d_k)

Dot products grow with the dimension.
"""

FRONT_2_5 = """---
sr-due: '2026-11-25'
sr-interval: 30
sr-ease: 2.3
---
# Causal mask

Upper triangle set to -inf.
"""

INLINE = """# KV cache
<!--SR:!2026-11-23,5,210-->

Keys and values of past tokens are kept.
"""

PLAIN = """# Plain note

Nothing scheduled here.
"""


def make_osr_vault(root):
    root.mkdir()
    for name, text in (("a.md", FRONT_250), ("b.md", FRONT_2_5), ("c.md", INLINE),
                       ("d.md", PLAIN)):
        (root / name).write_text(text)
    return root


def expected(ease: float, interval: float) -> tuple[float, float]:
    state = fsrs_rs_python.FSRS(fsrs_rs_python.DEFAULT_PARAMETERS).memory_state_from_sm2(
        ease, interval, 0.9)
    return round(state.stability, 9), round(state.difficulty, 9)


def test_osr_schedules_become_fsrs_cards_and_the_files_are_untouched(tmp_path, capsys):
    vault, data = make_osr_vault(tmp_path / "vault"), tmp_path / "data"
    before = {p.name: p.read_bytes() for p in vault.glob("*.md")}

    out = cli(capsys, vault, data, "import-history", "osr", "--dry-run", now="2026-11-20T09:00")
    assert "would import 3 notes" in out
    assert not (data / "studyapp.sqlite3").exists() or card_states(data) == {}

    out = cli(capsys, vault, data, "import-history", "osr", now="2026-11-20T09:00")
    assert "imported 3 notes" in out
    cards = card_states(data)
    assert set(cards) == {"a.md", "b.md", "c.md"}
    for name, ease, interval, due in (("a.md", 2.5, 12, "2026-12-01"),
                                      ("b.md", 2.3, 30, "2026-11-25"),
                                      ("c.md", 2.1, 5, "2026-11-23")):
        state, _, stability, difficulty, card_due, *_ = cards[name]
        assert state == 2 and (stability, difficulty) == expected(ease, interval)
        # due is kept in UTC; the OSR date is the learner's local day (UTC+14 differs by one)
        assert datetime.fromisoformat(card_due).astimezone().date().isoformat() == due
    assert {p.name: p.read_bytes() for p in vault.glob("*.md")} == before

    out = cli(capsys, vault, data, "import-history", "osr", now="2026-11-20T09:01")
    assert "imported 0 notes; 3 already imported" in out
    (log_file,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    assert len(log_file.read_text().splitlines()) == 3

    # the imported card is where FSRS continues from, and it survives a rebuild
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-12-01T09:00")
    after_review = card_states(data)
    assert after_review["a.md"][2] > cards["a.md"][2]  # stability grew from the imported one
    (data / "studyapp.sqlite3").unlink()
    cli(capsys, vault, data, "due", now="2026-12-01T09:01")
    assert card_states(data) == after_review


def test_a_note_studyapp_already_schedules_is_left_alone(tmp_path, capsys):
    vault, data = make_osr_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "d.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / "d.md").write_text((vault / "d.md").read_text() + "<!--SR:!2026-12-30,40,280-->\n")
    mine = card_states(data)["d.md"]
    out = cli(capsys, vault, data, "import-history", "osr", now="2026-11-20T09:05")
    assert "1 already scheduled by studyapp" in out
    assert card_states(data)["d.md"] == mine
