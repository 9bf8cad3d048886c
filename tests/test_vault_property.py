"""Property: over generated blocks and bodies, write-back changes only the owned values."""

from __future__ import annotations

from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studyapp.vault.model import DATE_KEYS, OWNED_KEYS, as_date
from studyapp.vault.parse import find_layout, parse_block
from studyapp.vault.writeback import comparable, edit_review_keys

dates = st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 12, 31))
styles = st.sampled_from(["'", '"', ""])
comments = st.sampled_from(["", "  # 我的备注", " # note"])
words = st.text(alphabet="abcxyz注意力归一化 -_", min_size=1, max_size=12).map(str.strip).filter(
    lambda w: w and not w.startswith(("-", "?")) and not w.endswith(":"))


def date_line(key: str):
    value = st.one_of(
        st.tuples(dates, styles).map(lambda t: f"{t[1]}{t[0].isoformat()}{t[1]}"),
        st.sampled_from(["null", "~", ""]),
    )
    return st.tuples(value, comments).map(lambda t: f"{key}: {t[0]}{t[1]}".replace(":  #", ": #").rstrip()
                                          if t[0] else f"{key}:{t[1]}")


OWNED_LINES = {
    "created": date_line("created"),
    "last_reviewed": date_line("last_reviewed"),
    "next_review": date_line("next_review"),
    "review_count": st.tuples(st.integers(0, 500), comments).map(lambda t: f"review_count: {t[0]}{t[1]}"),
    "mastery_level": st.one_of(
        st.floats(0, 1, allow_nan=False).map(lambda f: f"mastery_level: {round(f, 4)!r}"),
        st.just("mastery_level: null")),
}
OTHER_LINES = st.one_of(
    st.tuples(st.sampled_from(["difficulty", "source", "aliases", "作者"]), words).map(lambda t: f"{t[0]}: {t[1]}"),
    st.lists(words, max_size=3).map(lambda ws: "tags:" + "".join(f"\n- {w}" for w in ws) if ws else "tags: []"),
    st.just("# 一行注释"),
    st.just("related_outlines: []"),
)


@st.composite
def notes(draw):
    owned = draw(st.lists(st.sampled_from(OWNED_KEYS), unique=True))
    lines = [draw(OWNED_LINES[key]) for key in owned]
    others = draw(st.lists(OTHER_LINES, max_size=4))
    seen, unique_others = set(), []
    for line in others:  # one line per user key (YAML would take the last duplicate)
        key = line.split(":", 1)[0]
        if key.startswith("#") or key not in seen:
            seen.add(key)
            unique_others.append(line)
    order = draw(st.permutations(lines + unique_others))
    body = draw(st.lists(st.sampled_from(
        ["# 标题", "## 面试标准答案", "---", "next_review: '1999-01-01'", "正文 text", "```", ""]), max_size=6))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    final = draw(st.booleans())
    text = "\n".join(["---", *order, "---", *body])
    text = (text + "\n" if final else text).replace("\n", newline)
    return text


updates_strategy = st.fixed_dictionaries({}, optional={
    "created": dates, "last_reviewed": st.one_of(st.none(), dates), "next_review": st.one_of(st.none(), dates),
    "review_count": st.integers(0, 10_000), "mastery_level": st.one_of(st.none(), st.floats(0, 1)),
})

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def block_lines(text):
    layout = find_layout(text)
    return text[layout.block_start:layout.block_end].splitlines(keepends=True), text[layout.block_end:], layout


@SETTINGS
@given(notes())
def test_unchanged_values_round_trip_byte_for_byte(text):
    layout = find_layout(text)
    meta = parse_block(text[layout.block_start:layout.block_end])
    same = {k: as_date(meta[k]) if k in DATE_KEYS else meta[k] for k in OWNED_KEYS if k in meta}
    assert edit_review_keys(text, {}) == text
    assert edit_review_keys(text, same) == text


@SETTINGS
@given(notes(), updates_strategy)
def test_only_owned_values_change(text, updates):
    old_lines, old_tail, _ = block_lines(text)
    new_text = edit_review_keys(text, updates)
    new_lines, new_tail, _ = block_lines(new_text)
    assert new_tail == old_tail  # closing fence and body, byte for byte
    assert new_text.startswith(text[:find_layout(text).block_start])
    old_meta = parse_block("".join(old_lines))
    new_meta = parse_block("".join(new_lines))
    for key, value in new_meta.items():
        if key in updates:
            assert comparable(value) == comparable(updates[key])
        else:
            assert value == old_meta[key]
    # Lines of keys not updated are identical and in place; appended keys come last.
    touched = tuple(f"{k}:" for k in updates) + tuple(f"{k} :" for k in updates)
    kept_old = [line for line in old_lines if not line.startswith(touched)]
    kept_new = [line for line in new_lines if not line.startswith(touched)]
    assert kept_new == kept_old
    assert len(new_lines) == len(old_lines) + sum(k not in old_meta for k in updates)
