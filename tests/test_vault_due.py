"""`studyapp due`: what is due per --now, overdue first, new notes after, problems on stderr."""

from __future__ import annotations

import json

from vault_fixtures import PLAIN_NOTE, USERS_NOTE, write

from studyapp.cli import main
from studyapp.textwidth import display_width, fit, fit_middle


def make_vault(tmp_path):
    vault = tmp_path / "vault"
    write(vault / "a" / "今天.md", USERS_NOTE.replace("'2026-03-02'\nreview", "'2026-03-10'\nreview"))
    write(vault / "a" / "过期.md", USERS_NOTE.replace("next_review: '2026-03-02'", "next_review: 2026-03-01"))
    write(vault / "later.md", USERS_NOTE.replace("next_review: '2026-03-02'", "next_review: '2026-04-01'")
          .replace("review_count: 0", "review_count: 5"))
    write(vault / "plain.md", PLAIN_NOTE)
    write(vault / "drill.md", "---\nnext_review: '2026-03-10'\ndrills: [sdpa, causal_mask]\n---\n# 注意力练习\n")
    write(vault / "broken.md", "---\ntags: [\n---\n")
    return vault


def run_due(tmp_path, capsys, *extra):
    vault = make_vault(tmp_path)
    code = main(["due", "--vault", str(vault), "--now", "2026-03-10T12:00", *extra])
    return code, capsys.readouterr()


def test_due_json_order_and_fields(tmp_path, capsys):
    code, out = run_due(tmp_path, capsys, "--json")
    assert code == 0
    items = json.loads(out.out)
    assert [i["path"] for i in items] == ["a/过期.md", "a/今天.md", "drill.md", "plain.md"]
    overdue = items[0]
    assert overdue["next_review"] == "2026-03-01"
    assert overdue["title"] == "层归一化与批归一化的区别" and overdue["difficulty"] == "medium"
    assert overdue["review_count"] == 0 and overdue["mastery_level"] == 0.0
    # never reviewed (review_count 0): new to the scheduler, introduced oldest date first
    assert overdue["new"] is True and overdue["days_overdue"] is None
    assert items[2]["drills"] == ["sdpa", "causal_mask"]
    assert items[3]["new"] is True and items[3]["next_review"] is None
    assert "broken.md" in out.err and "not valid YAML" in out.err


def test_due_table_aligns_wide_titles(tmp_path, capsys):
    code, out = run_due(tmp_path, capsys)
    assert code == 0
    lines = out.out.splitlines()
    assert lines[0].startswith("4 new · 0 learning · 0 review; 5 notes")
    rows = lines[2:]
    path_columns = {display_width(row[: row.index(path)]) for row, path in
                    zip(rows, ["a/过期.md", "a/今天.md", "drill.md", "plain.md"])}
    assert len(path_columns) == 1, rows
    assert "broken.md" in out.err


def test_fit_counts_wide_characters_as_two_columns():
    assert fit("注意力", 8) == "注意力  "
    assert display_width(fit("多头注意力机制详解", 9)) == 9


def test_fit_middle_keeps_both_ends_within_the_width():
    """The Notes table cuts a path in its middle: its first folder and its file name stay."""
    assert fit_middle("a/b.md", 10) == "a/b.md"
    assert fit_middle("transformers/attention/scaling/note.md", 15) == "transfo…note.md"
    for width in range(0, 30):
        cut = fit_middle("注意力/多头注意力机制详解/缩放因子.md", width)
        assert display_width(cut) <= width
        if width >= 5:
            head, _, tail = cut.partition("…")
            assert "注意力/多头注意力机制详解/缩放因子.md".startswith(head)
            assert "注意力/多头注意力机制详解/缩放因子.md".endswith(tail) and tail


def test_marks_drawn_over_the_letter_before_take_no_column():
    """Thai vowel and tone marks, a combining accent, an enclosing circle: a terminal draws each
    over the letter before it. Several have combining class 0, so `unicodedata.combining` alone
    counted them a column each and pushed the rest of a Thai title's row out of line."""
    assert display_width("ที่ดี") == 2  # two letters, three marks over them
    assert display_width("e\u0301") == 1 and display_width("1\u20dd") == 1
    assert display_width("ที่ดีที่สุด") == 5
    assert fit("ที่ดีที่สุด", 4) == "ที่ดีที่…"  # three letters with their marks, then the ellipsis
    assert fit("ที่ดีที่สุด", 7) == "ที่ดีที่สุด  "
