"""The starter deck: every card is in the users' format, pairs with real drills, states true numbers."""

from __future__ import annotations

import re

import pytest
import yaml
from deck_checks import (
    ANSWER_MAX_CHARS,
    CARDS,
    KEY_ORDER,
    TORCH_BEHAVIOUR,
    TORCH_CHECKED,
    answer_problems,
    card_paths,
    check_card,
    drill_catalog_ids,
    parse_card,
    runnable_blocks,
    unchecked_figures,
    unknown_drills,
)

from studyapp.pairing import KNOWN_DRILLS, drills_for

PATHS = card_paths()
IDS = [str(p.relative_to(CARDS)) for p in PATHS]


def test_the_deck_is_big_enough_and_organised_by_topic():
    assert len(PATHS) >= 46
    assert len({p.parent for p in PATHS}) >= 5
    assert not (CARDS / ".gitkeep").exists()


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
    """`drills:` lists only drills the catalog has (or none: a topic no drill trains yet)."""
    card = parse_card(path)
    assert unknown_drills(card, drill_catalog_ids()) == []
    pairing = drills_for(card.meta, card.body)
    assert pairing.source == "declared"
    assert pairing.unknown == [] and pairing.drills == card.meta["drills"]


def test_the_app_knows_every_drill_of_the_catalog():
    assert set(KNOWN_DRILLS) == drill_catalog_ids()


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_the_short_answer_can_be_recalled_in_a_minute(path):
    assert answer_problems(parse_card(path)) == []


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_a_card_asserting_pytorch_behaviour_names_the_version_it_ran_on(path):
    card = parse_card(path)
    if any(TORCH_BEHAVIOUR.search(block) for block in runnable_blocks(card.body)):
        assert f"PyTorch {TORCH_CHECKED}" in card.body


def test_the_cards_were_checked_on_the_installed_pytorch():
    import torch

    assert torch.__version__.startswith(TORCH_CHECKED + "."), "re-check the cards, then bump"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_number_in_the_card_is_right(path):
    card = parse_card(path)
    assert check_card(card) == []
    assert unchecked_figures(card) == [], "memory/FLOP/parameter figures need a check"


REQUIRED_TOPICS = {
    "the SDPA flow": r"计算流程",
    "why sqrt(d_k)": r"√d_k|sqrt",
    "softmax saturation": r"饱和",
    "temperature": r"温度",
    "softmax stability": r"数值稳定",
    "causal mask": r"因果掩码",
    "padding mask": r"填充掩码",
    "combining masks": r"组合|合并.*掩码",
    "fully masked row": r"全部被屏蔽|全被屏蔽",
    "self vs cross": r"交叉注意力",
    "Q/K/V projections": r"Q/K/V|QKV",
    "multi-head": r"多头",
    "MHA parameters": r"参数量",
    "complexity and memory": r"复杂度|显存",
    "scoring functions": r"加性|余弦",
    "vs RNN": r"RNN",
    "FlashAttention": r"FlashAttention",
    "sparse/local/linear": r"稀疏|线性注意力",
    "KV cache": r"KV Cache",
    "MQA/GQA": r"MQA|GQA",
    "positional encodings": r"位置编码",
    "online softmax": r"online softmax",
    "FlashAttention versions": r"FlashAttention.*(?:1|2|3|4)|FlashDecoding",
    "attention backward": r"反向",
    "MLA": r"MLA",
    "PagedAttention": r"PagedAttention",
    "continuous batching": r"continuous batching|连续批处理",
    "prefix caching": r"prefix caching|前缀缓存",
    "decode roofline": r"roofline|算术强度",
    "RoPE extension": r"YaRN|NTK|位置插值",
    "sliding window": r"滑动窗口",
    "attention sinks": r"attention sink",
    "numerics": r"bf16|FP8|精度",
    "soft-capping": r"soft-capping|软截断",
    "ALiBi": r"ALiBi",
    "ring attention": r"Ring Attention|上下文并行",
    "linear attention hybrids": r"门控|delta rule|混合",
    "2025 sparse attention": r"NSA|MoBA|DeepSeek Sparse",
    "packing": r"packing|打包",
    "cross-attention models": r"编码器-解码器|多模态",
    "Pre-LN vs Post-LN": r"Pre-LN|Post-LN",
    "QK-norm": r"QK-Norm",
}


def test_every_topic_of_the_issue_has_a_card():
    titles = [parse_card(p).body.splitlines()[0] for p in PATHS]
    missing = [t for t, rx in REQUIRED_TOPICS.items() if not any(re.search(rx, x) for x in titles)]
    assert missing == []


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


def test_the_seeded_vault_loads_every_card_with_the_app_parser(tmp_path):
    from studyapp.context import build_context
    from studyapp.vault import Vault

    ctx = build_context(data_dir=str(tmp_path))
    snapshot = Vault(ctx.paths.vault_dir).load()
    assert snapshot.problems == []
    assert sorted(note.path for note in snapshot.notes) == sorted(IDS)
    for note in snapshot.notes:
        card = parse_card(CARDS / note.path)
        assert note.title == card.body.splitlines()[0][2:].strip()
        assert note.answer.strip() and "## 详细技术解析" not in note.answer
        assert note.drills == card.meta["drills"]
        assert note.review_count == 0 and note.difficulty == card.meta["difficulty"]


def test_a_long_short_answer_is_caught():
    card = parse_card(PATHS[0])
    assert answer_problems(card) == []
    padding = "很长的一句话。" * (ANSWER_MAX_CHARS // 7 + 1)
    bad = _mutated(card, "\n## 详细技术解析\n", f"\n{padding}\n\n## 详细技术解析\n")
    assert any("characters" in problem for problem in answer_problems(bad))


def test_too_many_bullets_or_a_table_in_the_short_answer_is_caught():
    card = parse_card(PATHS[0])
    bullets = "".join(f"- 第 {i} 点\n" for i in range(6))
    bad = _mutated(card, "\n## 详细技术解析\n", f"\n{bullets}\n## 详细技术解析\n")
    assert any("list items" in problem for problem in answer_problems(bad))
    table = _mutated(card, "\n## 详细技术解析\n", "\n| a | b |\n|---|---|\n\n## 详细技术解析\n")
    assert any("table" in problem for problem in answer_problems(table))


def test_an_unknown_drill_id_is_caught():
    card = parse_card(PATHS[0])
    bad = type(card)(card.path, card.raw_meta, {**card.meta, "drills": ["sdpa", "no_such_drill"]},
                     card.body)
    assert unknown_drills(bad, drill_catalog_ids()) == ["no_such_drill"]
    assert unknown_drills(type(card)(card.path, card.raw_meta, {**card.meta, "drills": []},
                                     card.body), drill_catalog_ids()) == []


def test_a_quoted_wrong_figure_must_stay_wrong():
    card = _first_card_with("128 MB<!--≠ ")
    assert check_card(_mutated(card, "128 MB<!--≠ ", "67.1 MB<!--≠ ")) != []


@pytest.mark.parametrize(
    ("stated", "value", "ok"),
    [
        ("64", 64.0, True), ("64", 65.0, False), ("67,108,864", 67108864, True),
        ("67,108,864", 67108865, False), ("0.665", 0.66524, True), ("0.665", 0.6656, False),
        ("2.65e10", 2.6489e10, True), ("2.65e10", 2.7e10, False), ("1.80e308", 1.7976e308, True),
        ("-65504", -65504.0, True),
    ],
)
def test_a_stated_number_must_be_the_value_rounded_to_its_digits(stated, value, ok):
    from deck_checks import stated_matches

    assert stated_matches(stated, value) is ok
