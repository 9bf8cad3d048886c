"""Read the starter deck's cards and check every number they state (convention: cards/README.md).

- ```` ```python runnable ```` blocks run in order in one namespace per card and assert their
  own numbers;
- `<!--= EXPR -->` right after a number: the number must be EXPR rounded to the digits shown;
- `<!--≠ EXPR -->` right after a quoted wrong figure: it must NOT be EXPR at that precision;
- `<!--assert EXPR -->`: EXPR must be true (worked examples against the reference kernels).
EXPRs are evaluated in the card's namespace after its blocks ran, plus `reference_namespace()`.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

CARDS = Path(__file__).resolve().parent.parent / "cards"
KEY_ORDER = [
    "created", "last_reviewed", "next_review", "review_count", "difficulty", "mastery_level",
    "tags", "related_outlines", "drills",
]
FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
CHECK = re.compile(r"<!--(?P<op>=|≠|assert)\s(?P<expr>.*?)-->", re.S)
NUMBER = re.compile(r"(?<![A-Za-z_\d.])-?\d(?:[\d,]*\d)?(?:\.\d+)?(?:[eE][-+]?\d+)?")
UNIT = r"\s*(?:KiB|MiB|GiB|TiB|KB|MB|GB|TB|bytes?|字节|G?T?FLOPs?|个参数)(?![A-Za-z])"
NUMBER_WITH_UNIT = re.compile(NUMBER.pattern + UNIT)
BLOCK_SECONDS = 2.0
"""A runnable block must finish within this on a CPU (readers run them too), counted in this
process's CPU seconds: on a 2-core machine running the suite beside other work, a block that
takes 0.01 s once measured 2.2 s of wall time."""
ANSWER_MAX_CHARS = 250
"""The short answer is recalled in about a minute: at most this many characters of text."""
ANSWER_MAX_ITEMS = 5
"""...and at most this many list items (longer lists belong in the details)."""
TORCH_CHECKED = "2.13"
"""The PyTorch version the cards' behavioural claims were run on (cards say "PyTorch 2.13")."""
TORCH_BEHAVIOUR = re.compile(
    r"scaled_dot_product_attention|MultiheadAttention|flex_attention|autocast"
)
"""PyTorch calls whose behaviour a card may assert; such a card names the version it ran on."""
ANSWER_HEADING = "\n## 面试标准答案\n"
DETAILS_HEADING = "\n## 详细技术解析\n"


@dataclass(frozen=True)
class Card:
    path: Path
    raw_meta: str
    meta: dict
    body: str

    @property
    def name(self) -> str:
        return str(self.path.relative_to(CARDS))


def card_paths() -> list[Path]:
    return sorted(p for p in CARDS.rglob("*.md") if not p.name.startswith("README"))


def parse_card(path: Path, text: str | None = None) -> Card:
    text = path.read_text(encoding="utf-8") if text is None else text
    if not text.startswith("---\n"):
        raise ValueError(f"{path}: no metadata block")
    end = text.index("\n---\n", 4)
    raw = text[4 : end + 1]
    return Card(path, raw, yaml.safe_load(raw), text[end + 5 :])


def runnable_blocks(body: str) -> list[str]:
    return [
        m["body"] for m in FENCE.finditer(body)
        if m["info"].split()[:1] == ["python"] and "runnable" in m["info"].split()
    ]


def prose(body: str) -> str:
    """The body without fenced code blocks (where inline checks and units are looked for)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), body)


def short_answer(body: str) -> str:
    """The `## 面试标准答案` section, without its heading and without check comments."""
    start = body.index(ANSWER_HEADING) + len(ANSWER_HEADING)
    return CHECK.sub("", body[start : body.index(DETAILS_HEADING)])


def answer_length(body: str) -> int:
    """Characters a reader recalls: whitespace and markdown markup (`*`, backticks) not counted."""
    return len(re.sub(r"[\s*`]", "", short_answer(body)))


def answer_items(body: str) -> int:
    """List items (bulleted or numbered) in the short answer."""
    return len(re.findall(r"^\s*(?:[-*+]|\d+[.)])\s", short_answer(body), re.MULTILINE))


def answer_problems(card: Card) -> list[str]:
    """Why the short answer cannot be recalled in about a minute (empty: it can)."""
    problems = []
    if (length := answer_length(card.body)) > ANSWER_MAX_CHARS:
        problems.append(f"short answer has {length} characters (limit {ANSWER_MAX_CHARS})")
    if (items := answer_items(card.body)) > ANSWER_MAX_ITEMS:
        problems.append(f"short answer has {items} list items (limit {ANSWER_MAX_ITEMS})")
    if re.search(r"^\s*\|", short_answer(card.body), re.MULTILINE):
        problems.append("short answer has a table (tables belong in the details)")
    return problems


def unknown_drills(card: Card, known: set[str]) -> list[str]:
    """Declared drill ids that the drill catalog does not have."""
    declared = card.meta.get("drills")
    if not isinstance(declared, list):
        return [f"drills: must be a list, got {declared!r}"]
    return [str(drill) for drill in declared if drill not in known]


def drill_catalog_ids() -> set[str]:
    """Ids of the drills `kernels/catalog.py` offers (no torch needed)."""
    from studyapp.kernels_loader import load_kernels

    return set(load_kernels().CATALOG)


def reference_namespace() -> dict:
    """Names every check may use: math, torch and the reference attention kernels.

    torch imports sympy (via symbolic_shapes) lazily, on the first call of some paths such as
    `key_padding_mask` or `backward(gradient)`: about a second, paid here with torch's own import
    so that a block's timing measures the block, not whichever card happens to run first.
    """
    import torch
    import torch.fx.experimental.symbolic_shapes
    import torch.nn.functional as F

    from studyapp.kernels_loader import load_kernels

    load_kernels()
    import studyapp_kernels.attention as attention

    names = {
        "math": math, "torch": torch, "F": F,
        "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
    }
    for name in ("sdpa_oracle", "causal_mask", "padding_mask", "combine_masks", "mha_forward",
                 "split_heads", "merge_heads"):
        names[name] = getattr(attention, name)
    return names


def stated_matches(stated: str, value: float) -> bool:
    """True when `stated` is `value` written to the precision `stated` shows."""
    mantissa, _, exponent = stated.replace(",", "").lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scaled = value / 10.0 ** int(exponent or 0)  # compare mantissas: 1.80e308 overflows a float
    return abs(float(mantissa) - scaled) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


def check_card(card: Card) -> list[str]:
    """Run the card's blocks and checks; return the problems found (empty: all numbers right)."""
    problems: list[str] = []
    namespace = reference_namespace()
    for index, block in enumerate(runnable_blocks(card.body), 1):
        started = time.process_time()
        try:
            exec(compile(block, f"{card.name}:runnable#{index}", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - every failure is reported the same way
            problems.append(f"runnable block #{index} failed: {type(exc).__name__}: {exc}")
        elapsed = time.process_time() - started
        if elapsed > BLOCK_SECONDS:  # once more: the first torch op of a process pays lazy set-up
            again, started = dict(namespace), time.process_time()  # (2.0 CPU-s once in CI for a 0.02 s block)
            try:
                exec(compile(block, f"{card.name}:runnable#{index}", "exec"), again)
            except Exception:  # noqa: BLE001 - reported above if it failed the first time
                pass
            elapsed = time.process_time() - started
        if elapsed > BLOCK_SECONDS:
            problems.append(f"runnable block #{index} took {elapsed:.1f} CPU-s (limit {BLOCK_SECONDS} s)")
    text = prose(card.body)
    for line_no, line in enumerate(text.splitlines(), 1):
        start = 0
        for m in CHECK.finditer(line):
            where = f"line {line_no}"
            expr = m["expr"].strip()
            try:
                value = eval(expr, namespace)  # noqa: S307 - our own cards
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{where}: `{expr}` raised {type(exc).__name__}: {exc}")
                start = m.end()
                continue
            if m["op"] == "assert":
                if not value:
                    problems.append(f"{where}: assertion `{expr}` is false")
            else:
                numbers = NUMBER.findall(line[start : m.start()])
                if not numbers:
                    problems.append(f"{where}: no number before the check `{expr}`")
                else:
                    ok = stated_matches(numbers[-1], float(value))
                    if ok != (m["op"] == "="):
                        verb = "should be" if m["op"] == "=" else "must differ from"
                        problems.append(f"{where}: states {numbers[-1]}, {verb} {value!r}")
            start = m.end()
    return problems


def unchecked_figures(card: Card) -> list[str]:
    """Memory, FLOP and parameter figures in prose that carry no check right after them."""
    text = prose(card.body)
    missing = []
    for m in NUMBER_WITH_UNIT.finditer(text):
        if not re.match(r"[*`”\"')）\s]*<!--(=|≠)", text[m.end() :]):
            missing.append(m.group(0).strip())
    return missing
