"""The pairing scorer skips a term's regex when none of its needles is in the text: that must
never change a result, and it must make scoring a long note cheap."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from studyapp.pairing import (
    DRILL_TERMS,
    KNOWN_DRILLS,
    SUGGEST_THRESHOLD,
    Pairing,
    suggest_drills,
)


def scored_by_every_regex(text: str, tags=None) -> Pairing:
    """The scorer without needles: what `suggest_drills` must always agree with."""
    haystack = "\n".join([text, *map(str, tags)]) if isinstance(tags, (list, tuple)) else text
    drills, reasons = [], {}
    for drill in KNOWN_DRILLS:
        matched = [term for term in DRILL_TERMS[drill] if term.pattern.search(haystack)]
        if sum(term.weight for term in matched) >= SUGGEST_THRESHOLD:
            drills.append(drill)
            reasons[drill] = [term.label for term in matched]
    return Pairing(drills, "suggested", reasons)


# Pieces that match (or nearly match) the terms, in odd cases and with odd letters that a
# case-insensitive regex equates with ASCII ones (Kelvin sign, long s, dotted/dotless i).
PIECES = [
    "Scaled Dot-Product", "scaled_dot_product_attention", "SDPA", "√d_k", "sqrt(d_k)", "SQRT dk",
    "K^T", "K^{\\top}", "Kᵀ", "k.transpose(-2, -1)", "k.T", "x.mT", "softmax", "Attention Weights",
    "注意力分数", "注意力权重", "缩放点积", "点积注意力", "Causal Mask", "因果掩码", "因果注意力", "tril",
    "TRIU", "下三角", "上三角", "Look Ahead", "autoregressive", "自回归", "future positions", "未来",
    "掩码", "masks", "masked_fill", "Padding-Mask", "填充掩码", "padding", "填充", "key_padding_mask",
    "<PAD>", "pad_idx", "lengths", "变长", "variable length", "attention_mask", "multi_head_attention",
    "split_heads", "combine_heads", "n_heads", "num_heads", "NUM_HEADS", "nhead", "多头注意力", "多头", "Multi-Headed", "d_head",
    "W_o", "out_proj", "\u212a^T", "\u212aᵀ", "\u017fdpa", "paddİng", "paddıng", "ma\u017fk",
    "x", "_", "-", " ", "\n", "(", ")", "é", "ß",
    # plain labels found without their regex (whole identifiers, CJK anywhere), and terms whose
    # needles are the specific words of their regex
    "sdpa2", "xSoftmax", "softmax_", "2softmax", "Tril", "IO-aware", "io aware", "IOaware", "SRAM",
    "显存带宽", "sqrt( dk", "√dk", "softmax gradient", "Softmax Jacobian", "softmax的梯度", "求导",
    "backward pass of attention", "Ｓoftmax", "ＳＤＰＡ", "\u0130o-aware",
]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts, st.one_of(st.none(), st.lists(st.sampled_from(PIECES), max_size=3)))
def test_needles_never_change_a_pairing(text, tags):
    assert suggest_drills(text, tags) == scored_by_every_regex(text, tags)


def test_every_term_with_its_own_regex_matches_only_where_a_needle_is():
    for terms in DRILL_TERMS.values():
        for term in terms:
            for piece in PIECES:
                if term.pattern.search(piece) and not has_case_oddity(piece):
                    assert any(needle in piece.lower() for needle in term.needles), (term.label, piece)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_whatever_a_terms_regex_matches_holds_one_of_its_needles(data):
    for terms in DRILL_TERMS.values():
        for term in terms:
            text = data.draw(st.from_regex(term.pattern), label=term.label)
            match = term.pattern.search(text)
            if match and not has_case_oddity(text):
                assert any(needle in match.group().lower() for needle in term.needles), (term.label, text)


def has_case_oddity(text: str) -> bool:
    return any(ch in text for ch in "\u0130\u0131\u017f\u212a")


def test_scoring_a_long_note_is_cheap():
    """An 11 KB note of prose that matches few terms: the regexes used to scan it all (~8 ms)."""
    note = ("在实际训练中，我们需要关注数值稳定性与显存占用。面试时先给出结论，再解释原因与代价。" * 120
            + "\nscores = q @ k.transpose(-2, -1)\n")
    start = time.process_time()
    for _ in range(20):
        pairing = suggest_drills(note)
    per_note = (time.process_time() - start) / 20
    assert pairing == scored_by_every_regex(note)
    full = time.process_time()
    for _ in range(20):
        scored_by_every_regex(note)
    unfiltered = (time.process_time() - full) / 20
    assert per_note < unfiltered / 3, (per_note, unfiltered)
