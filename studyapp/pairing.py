"""Pair notes with the drills that train them: declared in metadata, else suggested from content.

Pure and light (no torch, no Textual): the UI and `studyapp due --json` call it on every note.

How to call it:
    pairing = drills_for(note_meta, note_text)   # one note -> Pairing
    pairing.drills, pairing.source, pairing.reasons, pairing.unknown
    by_drill = notes_by_drill({key: drills_for(meta, text) for key, meta, text in notes})
    notes_for_drill("sdpa", pairings)             # the inverse, for `studyapp drills --json`

Suggestions are computed on the fly and never written into a note; a note that declares
`drills:` (even an empty list) is taken at its word. The drills and their terms come from the
drill folders (`kernels/<id>/drill.toml`, read without torch): adding a drill touches only its folder.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Literal, TypeVar

SUGGEST_THRESHOLD = 3.0
"""A drill is suggested when the weights of its matched terms add up to at least this."""

DECLARED_REASON = "declared in the note's metadata"

_ASCII_BEFORE = r"(?<![A-Za-z0-9])"
_ASCII_AFTER = r"(?![A-Za-z0-9])"


@dataclass(frozen=True)
class Term:
    """One clue for a drill: a label shown to the user, the regex that finds it, its weight."""

    label: str
    regex: str
    """The pattern's source, matched case-insensitively (compiled on first use: a process that
    only checks cached pairings never pays for ~100 regexes)."""
    weight: float
    needles: tuple[str, ...]
    """Lower-case strings of which the pattern's every match contains one: a cheap `in` test
    that skips the regex for the many notes that cannot match (the regexes scan slowly)."""

    literal: Literal["word", "text", None] = None
    """How a plain label is found without its regex, in the lower-cased text: `word`, as a whole
    identifier (`_has_word`); `text`, anywhere (its needle alone decides). None: by the regex."""

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.IGNORECASE)


def _uncased(text: str) -> bool:
    """No character a case-insensitive regex could equate with another (ASCII aside, whose
    odd equivalents `_CASE_ODDITIES` catches in the text)."""
    return all(ch.isascii() or ch.lower() == ch.upper() == ch for ch in text)


def _term(label: str, weight: float, regex: str | None = None, needles: tuple[str, ...] = ()) -> Term:
    """ASCII labels match as whole identifiers (underscores count as separators); CJK as is.
    A term with its own regex names its needles; a label is its own needle."""
    literal: Literal["word", "text", None] = None
    if regex is None:
        regex = re.escape(label)
        if label.isascii():
            regex = _ASCII_BEFORE + regex + _ASCII_AFTER
            literal = "word"
        elif _uncased(label) and len(label.lower()) == len(label):
            literal = "text"
        needles = (label.lower(),)
    assert needles, f"term {label!r} needs needles"
    return Term(label, regex, weight, needles, literal)


@dataclass(frozen=True)
class Scorer:
    """Every drill's pairing terms, as the drill folders' `drill.toml` files declare them.

    Weights (kernels/README.md): 3 for an identifier specific enough alone, 2 strong, 1 weak,
    0.5 for words several drills share (they must not pair a note on their own).
    """

    drills: tuple[str, ...]
    """Drill ids in the catalog's list order: the order of suggestions."""
    terms: Mapping[str, tuple[Term, ...]]
    version: str
    """Changes whenever the drills, terms or threshold do: cached pairings made by a scorer of
    another version are recomputed instead of trusted (a new drill re-pairs every note)."""

    @cached_property
    def needles(self) -> tuple[tuple[str, frozenset[str], bool], ...]:
        """Every term's needles, each once, with its characters and whether it is an ASCII
        identifier piece (`[a-z0-9_]`): a note is searched for each of them once (`_present`)."""
        unique = dict.fromkeys(n for drill in self.drills for t in self.terms[drill] for n in t.needles)
        return tuple((n, frozenset(n), _IDENTIFIER.fullmatch(n) is not None) for n in unique)

    @cached_property
    def plan(self) -> tuple[tuple[str, tuple[tuple[Term, frozenset[str]], ...]], ...]:
        """(drill, ((term, its needles), ...)) in the drills' and terms' order."""
        return tuple((drill, tuple((t, frozenset(t.needles)) for t in self.terms[drill])) for drill in self.drills)


def load_scorer(root: Path | None = None) -> Scorer:
    """The scorer of the drill folders under `root` (default: the bundled kernels), torch-free."""
    from studyapp.kernels_loader import load_kernels

    load_kernels()
    from studyapp_kernels.catalog import CATALOG, load_catalog

    catalog = CATALOG if root is None else load_catalog(root)
    terms = {drill_id: tuple(_term(t.label, t.weight, t.regex, tuple(t.needles)) for t in info.terms)
             for drill_id, info in catalog.items()}
    return Scorer(tuple(catalog), terms, scorer_version(root))


@cache
def bundled_scorer() -> Scorer:
    """The scorer of the drills this install ships, read once per process."""
    return load_scorer()


DRILL_FILE = "drill.toml"
"""Each drill folder's metadata, holding its id, list order and pairing terms (kernels/README.md)."""
_SCORING_RULES = 2
"""Bump when the scoring changes in a way the constants below do not show."""


def scorer_version(root: Path | None = None) -> str:
    """A fingerprint of everything a pairing depends on: the scoring rules and the bytes of
    every drill folder's `drill.toml` under `root` (default: the bundled kernels).

    Read from the files, not from the parsed catalog, so a process that only checks cached
    pairings (a warm `due --json`) reads a dozen small files instead of parsing TOML and
    compiling every term. Any edit to a drill's metadata re-pairs the notes once.
    """
    import os
    import zlib

    if root is None:
        from studyapp.paths import kernels_dir

        root = kernels_dir()
    crc = zlib.crc32(repr((_SCORING_RULES, SUGGEST_THRESHOLD, DECLARED_REASON, _ASCII_BEFORE,
                           _ASCII_AFTER)).encode("utf-8"))
    try:
        folders = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    except OSError:
        folders = []
    for name in folders:
        try:
            with open(os.path.join(root, name, DRILL_FILE), "rb") as fh:
                data = fh.read()
        except OSError:  # not a drill folder (`__pycache__`, shared helpers)
            continue
        crc = zlib.crc32(data, zlib.crc32(name.encode("utf-8", "surrogateescape") + b"\0", crc))
    return f"{crc:08x}"


_DERIVED = {
    "KNOWN_DRILLS": lambda: bundled_scorer().drills,
    "DRILL_TERMS": lambda: bundled_scorer().terms,
    "PAIRING_VERSION": scorer_version,  # the bundled scorer's, without building it
}


def __getattr__(name: str):
    """`KNOWN_DRILLS`, `DRILL_TERMS`, `PAIRING_VERSION`: the bundled scorer's, read on first use
    (importing this module stays cheap: the drill folders are read only when a note is paired)."""
    if name not in _DERIVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _DERIVED[name]()
    globals()[name] = value
    return value


def _current(name: str):
    """A derived module attribute as callers see it (so a patched or cached value wins)."""
    return getattr(sys.modules[__name__], name)


@dataclass(frozen=True)
class Pairing:
    """The drills for one note, where they came from, and why each was chosen."""

    drills: list[str]
    """Known drill ids, in declaration order (declared) or the catalog's order (suggested)."""
    source: Literal["declared", "suggested"]
    """`declared`: the note's `drills:` key decided; `suggested`: computed from its content."""
    reasons: dict[str, list[str]]
    """Per drill, the matched terms (suggested) or a one-line note that it was declared."""
    unknown: list[str] = field(default_factory=list)
    """Declared ids that no drill has: reported to the user, never a crash."""


def drills_for(meta: Mapping | None, text: str, scorer: Scorer | None = None) -> Pairing:
    """The note's declared drills when it has a `drills:` key, else suggestions from content."""
    meta = meta or {}
    if "drills" in meta:
        return _declared(meta["drills"], scorer)
    return suggest_drills(text, tags=meta.get("tags"), scorer=scorer)


def _declared(value, scorer: Scorer | None = None) -> Pairing:
    if value is None:
        items: list = []
    elif isinstance(value, str):
        items = [part for part in re.split(r"[,\s]+", value) if part]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    known = scorer.drills if scorer is not None else _current("KNOWN_DRILLS")
    drills: list[str] = []
    unknown: list[str] = []
    for item in items:
        if item is None:  # `drills: [sdpa, ]`: no name written
            continue
        if type(item) is not str:  # a number, or a mapping or list: in YAML's spelling, not Python's
            from studyapp.vault.model import as_text

            item = as_text(item)
        name = item.strip()
        if name in known:
            if name not in drills:
                drills.append(name)
        elif name not in unknown:
            unknown.append(name)
    reasons = {drill: [DECLARED_REASON] for drill in drills}
    return Pairing(drills, "declared", reasons, unknown)


def suggest_drills(text: str, tags=None, scorer: Scorer | None = None) -> Pairing:
    """Score each drill by the weights of the distinct terms found in the text (and tags)."""
    scorer = scorer or bundled_scorer()
    haystack = text
    if isinstance(tags, (list, tuple)):
        haystack = "\n".join([text, *map(str, tags)])
    drills: list[str] = []
    reasons: dict[str, list[str]] = {}
    if _CASE_ODDITIES.search(haystack):  # needles could miss a case-insensitive match: every regex
        for drill in scorer.drills:
            matched = [term for term in scorer.terms[drill] if term.pattern.search(haystack)]
            if sum(term.weight for term in matched) >= SUGGEST_THRESHOLD:
                drills.append(drill)
                reasons[drill] = [term.label for term in matched]
        return Pairing(drills, "suggested", reasons)
    # Without those letters, `lower` maps each character to one, so the lower-cased text lines
    # up with the text and a plain label's case-insensitive match is a match in it.
    lowered = haystack.lower()
    present = _present(lowered, scorer.needles)
    for drill, terms in scorer.plan:
        matched = []
        for term, needles in terms:
            if present.isdisjoint(needles):
                continue
            if term.literal == "text" or (term.literal == "word" and _has_word(lowered, needles)):
                matched.append(term)
            elif term.literal is None and term.pattern.search(haystack):
                matched.append(term)
        if matched and sum(term.weight for term in matched) >= SUGGEST_THRESHOLD:
            drills.append(drill)
            reasons[drill] = [term.label for term in matched]
    return Pairing(drills, "suggested", reasons)


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_IDENTIFIER = re.compile("[a-z0-9_]+")


def _present(lowered: str, needles) -> set[str]:
    """The needles found in `lowered`, searched cheaply: a needle with a character the text
    lacks is skipped by a set test, and an identifier piece is looked for among the text's
    distinct identifiers (a short ASCII string searched far faster than a note holding CJK)."""
    chars = set(lowered)
    words = " ".join(set(_IDENTIFIER.findall(lowered)))
    return {needle for needle, needed, in_words in needles
            if needed <= chars and needle in (words if in_words else lowered)}


def _has_word(lowered: str, words: frozenset[str]) -> bool:
    """Whether the (one) word occurs in `lowered` with no ASCII letter or digit on either
    side: what `_ASCII_BEFORE + label + _ASCII_AFTER` finds, without running the regex."""
    (word,) = words
    end = len(lowered)
    at = lowered.find(word)
    while at >= 0:
        after = at + len(word)
        if (at == 0 or lowered[at - 1] not in _ALNUM) and (after == end or lowered[after] not in _ALNUM):
            return True
        at = lowered.find(word, at + 1)
    return False


def encode_pairing(pairing: Pairing) -> str:
    """A pairing as JSON for the metadata cache, stamped with the scorer's version."""
    import json

    return json.dumps([_current("PAIRING_VERSION"), pairing.drills, pairing.source, pairing.reasons,
                       pairing.unknown], ensure_ascii=False)


def decode_pairing(text: str) -> Pairing | None:
    """The cached pairing, or None when another scorer made it (or the text is not one)."""
    import json

    try:
        version, drills, source, reasons, unknown = json.loads(text)
    except (ValueError, TypeError):
        return None
    if version != _current("PAIRING_VERSION"):
        return None
    return Pairing(drills, source, reasons, unknown)


_CASE_ODDITIES = re.compile("[\u0130\u0131\u017f\u212a]")
"""Letters a case-insensitive regex equates with an ASCII letter although `str.lower` does not
map them to it (dotted and dotless i, long s, the Kelvin sign)."""

K = TypeVar("K", bound=Hashable)


def notes_by_drill(pairings: Mapping[K, Pairing]) -> dict[str, list[K]]:
    """Invert note -> drills into drill -> notes (every known drill present, maybe empty)."""
    inverse: dict[str, list[K]] = {drill: [] for drill in _current("KNOWN_DRILLS")}
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
