"""The starter deck: every card is in the users' format, pairs with real drills, states true numbers."""

from __future__ import annotations

import re

import pytest
import yaml

from deck_checks import (
    CARDS,
    KEY_ORDER,
    check_card,
    card_paths,
    parse_card,
    runnable_blocks,
    unchecked_figures,
)
from studyapp.pairing import KNOWN_DRILLS, drills_for

PATHS = card_paths()
IDS = [str(p.relative_to(CARDS)) for p in PATHS]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_card_is_in_the_users_format(path):
    card = parse_card(path)
    assert list(card.meta) == KEY_ORDER
    # Byte for byte what the users' tool writes, so a first review leaves no diff noise.
    assert card.raw_meta == yaml.dump(card.meta, sort_keys=False, allow_unicode=True)
    assert re.fullmatch(r"'\d{4}-\d{2}-\d{2}'", card.raw_meta.splitlines()[0].split(": ")[1])
    assert card.meta["last_reviewed"] is None
    assert card.meta["next_review"] == card.meta["created"]
    assert card.meta["review_count"] == 0 and card.meta["mastery_level"] == 0.0
    assert card.meta["difficulty"] in {"easy", "medium", "hard"}
    assert card.meta["tags"] and all(isinstance(t, str) for t in card.meta["tags"])
    assert card.meta["related_outlines"] == []
    lines = card.body.splitlines()
    assert lines[0].startswith("# ") and len(lines[0]) > 3
    answer = card.body.index("\n## 面试标准答案\n")
    details = card.body.index("\n## 详细技术解析\n")
    assert answer < details
    assert card.body[answer:details].strip().count("\n") >= 2, "the short answer is empty"
    assert "\r" not in card.body


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_card_declares_existing_drills(path):
    card = parse_card(path)
    pairing = drills_for(card.meta, card.body)
    assert pairing.source == "declared"
    assert pairing.drills and pairing.unknown == []
    assert set(pairing.drills) <= set(KNOWN_DRILLS)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_number_in_the_card_is_right(path):
    card = parse_card(path)
    assert check_card(card) == []
    assert unchecked_figures(card) == [], "memory/FLOP/parameter figures need a check"


# --- the checks themselves must be able to fail ---------------------------------------------

def _first_card_with(marker: str):
    for path in PATHS:
        card = parse_card(path)
        if marker in card.body:
            return card
    pytest.fail(f"no card uses {marker!r}")


def _mutated(card, old: str, new: str):
    assert old in card.body
    return type(card)(card.path, card.raw_meta, card.meta, card.body.replace(old, new, 1))


def test_a_changed_figure_is_caught():
    card = _first_card_with("<!--= ")
    line = next(line for line in card.body.splitlines() if "<!--= " in line)
    stated = re.findall(r"(\d[\d,]*(?:\.\d+)?)(?=[^\d]*<!--= )", line)[0]
    wrong = str(int(stated.replace(",", "").split(".")[0]) + 1)
    bad = _mutated(card, line, line.replace(stated, wrong, 1))
    assert check_card(bad) != []


def test_the_classic_wrong_memory_figure_is_caught():
    card = _first_card_with("64 MiB<!--= ")
    assert check_card(_mutated(card, "64 MiB<!--= ", "128 MiB<!--= ")) != []


def test_a_changed_number_in_a_runnable_block_is_caught():
    asserted = "torch.tensor([[0.4011, 0.1978, 0.4011]])"
    card = _first_card_with(asserted)
    assert asserted in runnable_blocks(card.body)[0]
    assert check_card(_mutated(card, asserted, asserted.replace("0.1978", "0.1987"))) != []


def test_a_slow_runnable_block_is_caught(monkeypatch):
    import deck_checks

    card = _first_card_with("```python runnable")
    monkeypatch.setattr(deck_checks, "BLOCK_SECONDS", 0.0)
    assert any("took" in problem for problem in check_card(card))


def test_an_unchecked_figure_is_flagged():
    card = _first_card_with("<!--= ")
    bad = _mutated(card, "## 详细技术解析\n", "## 详细技术解析\n\n一个矩阵占 48 MiB。\n")
    assert unchecked_figures(bad) == ["48 MiB"]


def test_a_false_assert_comment_is_caught():
    card = _first_card_with("<!--assert ")
    bad = _mutated(card, "<!--assert ", "<!--assert not ")
    assert check_card(bad) != []
