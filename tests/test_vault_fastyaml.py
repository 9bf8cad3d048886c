"""The fast block parser returns exactly what PyYAML's safe loader returns, or defers to it."""

from __future__ import annotations

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from studyapp.vault.fastyaml import parse_simple_block
from studyapp.vault.parse import parse_block

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

TRICKY = [
    "yes", "no", "on", "off", "Yes", "NO", "True", "false", "y", "n", "~", "null", "Null", "",
    "1e3", "1.0e+3", "0x10", "0o17", "017", "08", "0b101", "1_000", "190:20:30", "-5", "+5", "+0",
    "-0.0", "3.", ".5", ".inf", "-.inf", ".NaN", "0.0", "0.25", "12", "007", "2026-01-05",
    "2026-1-5", "2026-02-30", "2026-01-05 10:00:00", "2026-01-05T10:00:00+08:00", "'2026-01-05'",
    "'quoted ''x'''", "'''", "''''", "'a' b", '"\\u00e9"', '"plain double"', '"a"b"', "'single",
    "a: b", "a:b", "a:", "http://x.y/z", "C#", "a #comment", "#comment", "[]", "[a, b]", "{}",
    "{a: 1}", "- x", "-x", "? q", ": x", "&anchor v", "*alias", "!!str 5", "!tag x", "|", ">",
    "%x", "@x", "`x`", "medium", "层归一化", "归一化/层归一化与批归一化的区别.md", "a, b", "a  b",
    "<<", "=", "tab\there", "nbsp\xa0x", "emoji \U0001f600", "nel\x85x", "ls\u2028x", "bom\ufeffx",
    "ctrl\x07x", "del\x7fx", "'a''b'", '"esc\\"x"', "\u00e9", "x'", "'", '"',
]
KEYS = ["created", "last_reviewed", "next_review", "review_count", "tags", "difficulty", "a",
        "yes", "on", "null", "true", "y", "n", "1", "0x1", "my-key", "my_key", "Key", "键", "'q'",
        "a b", "a:b", "-a", "_x", "<<", "~"]
scalar = st.one_of(st.sampled_from(TRICKY), st.text(max_size=12))
item_line = st.builds(lambda v, sep: "-" + sep + v, scalar, st.sampled_from([" ", "", "  "]))
key_line = st.builds(lambda k, sep, v: f"{k}:{sep}{v}", st.one_of(st.sampled_from(KEYS), st.text(max_size=6)),
                     st.sampled_from([" ", "", "  ", "\t"]), scalar)
other_line = st.sampled_from(["", "  ", "# a comment", "  indented: 1", "  - nested", "...", "key:",
                              "tags:", " # indented comment", "- ", "-", "%YAML 1.1"])
lines = st.lists(st.one_of(key_line, key_line, item_line, other_line), max_size=12)

# Blocks close to the users' shape, so most of them take the fast path and get compared.
plain_key = st.one_of(st.sampled_from(KEYS[:7]), st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,5}", fullmatch=True))
near_scalar = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8),
                        st.builds(lambda s: "'" + s.replace("'", "''") + "'", st.text(max_size=8)))
entry = st.one_of(
    st.builds(lambda k, v: [f"{k}: {v}"], plain_key, near_scalar),
    st.builds(lambda k, items: [f"{k}:"] + [f"- {v}" for v in items], plain_key, st.lists(near_scalar, max_size=3)),
    st.sampled_from([[""], ["# note"], ["key:  "]]),
)
near_lines = st.lists(entry, max_size=10).map(lambda entries: [line for e in entries for line in e])


def _yaml(block: str):
    """What parse_block gets from PyYAML ({} for an empty document), or "error"."""
    try:
        meta = yaml.load(block, Loader=Loader)
    except Exception:
        return "error"
    return {} if meta is None else meta


def _typed(value):
    """Values with their types, so 1 != 1.0 != True and date != str."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


@settings(max_examples=3000, deadline=None)
@given(st.one_of(lines, near_lines, near_lines), st.sampled_from(["\n", "\r\n"]), st.booleans())
@example(["created: '2026-03-02'", "last_reviewed: null", "tags:", "- 归一化", "related_outlines: []"], "\n", True)
def test_fast_parser_agrees_with_pyyaml(block_lines, newline, final_newline):
    block = newline.join(block_lines) + (newline if final_newline else "")
    fast = parse_simple_block(block)
    if fast is None:
        return
    assert _typed(fast) == _typed(_yaml(block)), block


def test_users_blocks_take_the_fast_path():
    block = ("created: '2026-03-02'\nlast_reviewed: null\nnext_review: 2026-03-09\nreview_count: 3\n"
             "difficulty: medium\nmastery_level: 0.42\ntags:\n- 归一化\n- 归一化/层归一化.md\n"
             "related_outlines: []\n# a comment line\nsource: 'https://example.org/a?b=c'\n")
    assert parse_simple_block(block) == yaml.load(block, Loader=Loader)
    assert parse_simple_block(block.replace("\n", "\r\n")) == yaml.load(block, Loader=Loader)


def test_anything_unusual_is_left_to_pyyaml():
    for block in ["a:\n  b: 1\n", "a: |\n  text\n", "a: [1, 2]\n", "a: 'x' # c\n", "a: &x 1\nb: *x\n",
                  "a: \"\\u00e9\"\n", "a: 2026-02-30\n", "a: 0x10\n", "yes: 1\n", "a: b\n- c\n"]:
        assert parse_simple_block(block) is None, block


def test_malformed_blocks_still_get_pyyamls_message():
    for block in ["a: 2026-02-30\n", "tags: [\n", "a: b\n- c\n"]:
        try:
            parse_block(block)
        except ValueError as exc:
            assert "not valid YAML" in str(exc)
        else:
            raise AssertionError(block)


def test_every_tricky_scalar_as_a_value_and_as_a_list_item():
    compared = 0
    for value in TRICKY:
        for block in (f"k: {value}\n", f"tags:\n- {value}\n", f"k: {value}\r\nz: 1\r\n", f"{value}: 1\n"):
            fast = parse_simple_block(block)
            if fast is not None:
                compared += 1
                assert _typed(fast) == _typed(_yaml(block)), block
    assert compared > 100


def test_lines_worked_out_once_never_share_a_list_between_notes():
    """Lines are remembered across blocks: an empty list in one note's metadata must not be
    the very list another note gets."""
    block = "related_outlines: []\ntags:\n- []\n- a\n"
    first = parse_simple_block(block)
    first["related_outlines"].append("mutated")
    first["tags"][0].append("mutated")
    assert parse_simple_block(block) == {"related_outlines": [], "tags": [[], "a"]}
