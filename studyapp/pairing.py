"""Pair notes with the drills that train them: declared in metadata, else suggested from content.

Pure and light (no torch, no Textual): the UI and `studyapp due --json` call it on every note.

How to call it:
    pairing = drills_for(note_meta, note_text)   # one note -> Pairing
    pairing.drills, pairing.source, pairing.reasons, pairing.unknown
    by_drill = notes_by_drill({key: drills_for(meta, text) for key, meta, text in notes})
    notes_for_drill("sdpa", pairings)             # the inverse, for `studyapp drills --json`

Suggestions are computed on the fly and never written into a note; a note that declares
`drills:` (even an empty list) is taken at its word.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

KNOWN_DRILLS: tuple[str, ...] = ("sdpa", "causal_mask", "padding_mask", "mha")
"""Drill ids the grader offers (kept torch-free here so the UI can import it)."""

SUGGEST_THRESHOLD = 3.0
"""A drill is suggested when the weights of its matched terms add up to at least this."""

DECLARED_REASON = "declared in the note's metadata"

_ASCII_BEFORE = r"(?<![A-Za-z0-9])"
_ASCII_AFTER = r"(?![A-Za-z0-9])"


@dataclass(frozen=True)
class Term:
    """One clue for a drill: a label shown to the user, the regex that finds it, its weight."""

    label: str
    pattern: re.Pattern[str]
    weight: float
    needles: tuple[str, ...]
    """Lower-case strings of which the pattern's every match contains one: a cheap `in` test
    that skips the regex for the many notes that cannot match (the regexes scan slowly)."""


def _term(label: str, weight: float, regex: str | None = None, needles: tuple[str, ...] = ()) -> Term:
    """ASCII labels match as whole identifiers (underscores count as separators); CJK as is.
    A term with its own regex names its needles; a label is its own needle."""
    if regex is None:
        regex = re.escape(label)
        if label.isascii():
            regex = _ASCII_BEFORE + regex + _ASCII_AFTER
        needles = (label.lower(),)
    assert needles, f"term {label!r} needs needles"
    return Term(label, re.compile(regex, re.IGNORECASE), weight, needles)


# Identifiers specific to one drill weigh 3 (enough alone), strong terms 2, weak clues 1, and
# mask words shared by both mask drills 0.5 (they must not pair a note with either on their own).
DRILL_TERMS: dict[str, tuple[Term, ...]] = {
    "sdpa": (
        _term("scaled_dot_product_attention", 3),
        _term("sdpa", 3),
        _term("scaled dot-product", 3, r"scaled[\s_-]*dot[\s_-]*product", ("scaled",)),
        _term("dot-product attention", 3, r"dot[\s_-]*product[\s_-]*attention", ("dot",)),
        _term("缩放点积", 3),
        _term("点积注意力", 3),
        _term("√d_k", 2, r"(?:√|sqrt\(?\s*)d_?k", ("√", "sqrt")),
        _term("K^T", 2, r"Kᵀ|K\^T|K\^\{?\\top\}?|k\.transpose\(\s*-2\s*,\s*-1\s*\)|k\.T\b|\.mT\b",
              ("kᵀ", "^", "k.t", ".mt")),
        _term("softmax", 1),
        _term("attention scores", 1, r"attention[\s_-]*(?:scores?|weights?)", ("attention",)),
        _term("注意力分数", 1, r"注意力(?:分数|权重)", ("注意力",)),
    ),
    "causal_mask": (
        _term("causal mask", 3, r"causal[\s_-]*(?:mask|attention)|因果(?:掩码|注意力)", ("causal", "因果")),
        _term("causal", 2),
        _term("因果", 2),
        _term("tril", 3),
        _term("triu", 2.5),
        _term("下三角", 2),
        _term("上三角", 1),
        _term("look-ahead", 2, r"look[\s-]*ahead", ("look",)),
        _term("autoregressive", 1),
        _term("自回归", 1),
        _term("future tokens", 1, r"future\s+(?:tokens?|positions?)", ("future",)),
        _term("未来", 1),
        _term("掩码", 0.5),
        _term("mask", 0.5, _ASCII_BEFORE + r"masks?" + _ASCII_AFTER, ("mask",)),
        _term("masked_fill", 0.5),
    ),
    "padding_mask": (
        _term("padding mask", 3, r"padding[\s_-]*mask|填充掩码", ("padding", "填充掩码")),
        _term("padding", 2),
        _term("填充", 2),
        _term("key_padding_mask", 3),
        _term("<pad>", 2, r"<pad>|\bpad_(?:token|id|idx)\b", ("<pad>", "pad_")),
        _term("lengths", 1),
        _term("变长", 1),
        _term("variable-length", 1, r"variable[\s-]*length", ("variable",)),
        _term("attention_mask", 1),
        _term("掩码", 0.5),
        _term("mask", 0.5, _ASCII_BEFORE + r"masks?" + _ASCII_AFTER, ("mask",)),
        _term("masked_fill", 0.5),
    ),
    "mha": (
        _term("MultiHeadAttention", 3, r"multi_?head_?attention", ("multi",)),
        _term("split_heads", 3),
        _term("merge_heads", 3, r"(?:merge|combine)_heads", ("_heads",)),
        _term("num_heads", 2, r"\b(?:num_heads|n_heads|n_head|nhead)\b", ("_head", "nhead")),
        _term("多头注意力", 3),
        _term("多头", 2),
        _term("multi-head", 2, r"multi[\s-]*head(?:ed)?", ("multi",)),
        _term("head_dim", 1, r"\b(?:head_dim|d_head)\b", ("head_dim", "d_head")),
        _term("out_proj", 1, r"\b(?:out_proj|W_o|w_o)\b", ("out_proj", "w_o")),
    ),
}


@dataclass(frozen=True)
class Pairing:
    """The drills for one note, where they came from, and why each was chosen."""

    drills: list[str]
    """Known drill ids, in declaration order (declared) or `KNOWN_DRILLS` order (suggested)."""
    source: Literal["declared", "suggested"]
    """`declared`: the note's `drills:` key decided; `suggested`: computed from its content."""
    reasons: dict[str, list[str]]
    """Per drill, the matched terms (suggested) or a one-line note that it was declared."""
    unknown: list[str] = field(default_factory=list)
    """Declared ids that no drill has: reported to the user, never a crash."""


def drills_for(meta: Mapping | None, text: str) -> Pairing:
    """The note's declared drills when it has a `drills:` key, else suggestions from content."""
    meta = meta or {}
    if "drills" in meta:
        return _declared(meta["drills"])
    return suggest_drills(text, tags=meta.get("tags"))


def _declared(value) -> Pairing:
    if value is None:
        items: list = []
    elif isinstance(value, str):
        items = [part for part in re.split(r"[,\s]+", value) if part]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    drills: list[str] = []
    unknown: list[str] = []
    for item in items:
        name = str(item).strip()
        if name in KNOWN_DRILLS:
            if name not in drills:
                drills.append(name)
        elif name not in unknown:
            unknown.append(name)
    reasons = {drill: [DECLARED_REASON] for drill in drills}
    return Pairing(drills, "declared", reasons, unknown)


def suggest_drills(text: str, tags=None) -> Pairing:
    """Score each drill by the weights of the distinct terms found in the text (and tags)."""
    haystack = text
    if isinstance(tags, (list, tuple)):
        haystack = "\n".join([text, *map(str, tags)])
    drills: list[str] = []
    reasons: dict[str, list[str]] = {}
    lowered: str | None = haystack.lower()
    if _CASE_ODDITIES.search(haystack):
        lowered = None  # needles could miss a case-insensitive match: run every regex
    for drill in KNOWN_DRILLS:
        matched = [term for term in DRILL_TERMS[drill]
                   if (lowered is None or any(needle in lowered for needle in term.needles))
                   and term.pattern.search(haystack)]
        if sum(term.weight for term in matched) >= SUGGEST_THRESHOLD:
            drills.append(drill)
            reasons[drill] = [term.label for term in matched]
    return Pairing(drills, "suggested", reasons)


def _scorer_version() -> str:
    """Changes whenever the drills, terms or threshold do: cached pairings of older scorers
    are then recomputed instead of trusted."""
    import zlib

    spec = repr((KNOWN_DRILLS, SUGGEST_THRESHOLD, DECLARED_REASON,
                 [(d, t.label, t.pattern.pattern, t.weight, t.needles) for d, ts in DRILL_TERMS.items() for t in ts]))
    return f"{zlib.crc32(spec.encode('utf-8')):08x}"


PAIRING_VERSION = _scorer_version()


def encode_pairing(pairing: Pairing) -> str:
    """A pairing as JSON for the metadata cache, stamped with the scorer's version."""
    import json

    return json.dumps([PAIRING_VERSION, pairing.drills, pairing.source, pairing.reasons,
                       pairing.unknown], ensure_ascii=False)


def decode_pairing(text: str) -> Pairing | None:
    """The cached pairing, or None when another scorer made it (or the text is not one)."""
    import json

    try:
        version, drills, source, reasons, unknown = json.loads(text)
    except (ValueError, TypeError):
        return None
    if version != PAIRING_VERSION:
        return None
    return Pairing(drills, source, reasons, unknown)


_CASE_ODDITIES = re.compile("[\u0130\u0131\u017f\u212a]")
"""Letters a case-insensitive regex equates with an ASCII letter although `str.lower` does not
map them to it (dotted and dotless i, long s, the Kelvin sign)."""

K = TypeVar("K", bound=Hashable)


def notes_by_drill(pairings: Mapping[K, Pairing]) -> dict[str, list[K]]:
    """Invert note -> drills into drill -> notes (every known drill present, maybe empty)."""
    inverse: dict[str, list[K]] = {drill: [] for drill in KNOWN_DRILLS}
    for key, pairing in pairings.items():
        for drill in pairing.drills:
            inverse[drill].append(key)
    return inverse


def notes_for_drill(drill: str, pairings: Mapping[K, Pairing]) -> list[K]:
    """The notes paired with one drill, in the pairings' order."""
    return [key for key, pairing in pairings.items() if drill in pairing.drills]


def pair_notes(notes: Iterable[tuple[K, Mapping | None, str]]) -> dict[K, Pairing]:
    """Pair many `(key, meta, text)` notes at once (key: a path or a note id)."""
    return {key: drills_for(meta, text) for key, meta, text in notes}
