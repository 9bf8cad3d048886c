"""Plain notes review well: a note with no `##` section answers with its body, web clips keep
their line breaks, and the title is not shown twice."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown

from studyapp.note_text import keep_line_breaks, review_texts, without_title

CLIP = """Attention 注意力机制
Attention 注意力机制
注意力机制是一个宽泛的概念。
例如, Self-Attention 的 Q、K、V 来源于同一个输入。
引言

```python
scores = q @ k.T
weights = scores.softmax(-1)
```
| a | b |
|---|---|
| 1 | 2 |
"""


def rendered(markdown: str) -> list[str]:
    console = Console(width=60, color_system=None)
    with console.capture() as capture:
        console.print(Markdown(markdown))
    return [line.rstrip() for line in capture.get().splitlines()]


def test_a_clip_keeps_its_line_breaks_and_code():
    lines = rendered(keep_line_breaks(CLIP))
    assert "注意力机制是一个宽泛的概念。" in lines
    assert "例如, Self-Attention 的 Q、K、V 来源于同一个输入。" in lines
    assert any(line.strip() == "scores = q @ k.T" for line in lines)
    assert any(line.strip() == "weights = scores.softmax(-1)" for line in lines)


def test_code_and_tables_are_left_alone():
    text = "```\na\nb\n```\n| a | b |\n|---|---|\n"
    assert keep_line_breaks(text) == text


def test_title_lines_are_dropped_once_or_repeated():
    assert without_title(CLIP, "Attention 注意力机制").startswith("注意力机制是")
    assert without_title("# 问题\n\n## 答案\n好。\n", "问题") == "## 答案\n好。\n"
    assert without_title("正文第一行\n", "别的标题") == "正文第一行\n"


def test_a_note_without_a_section_answers_with_its_body():
    answer, whole = review_texts("Attention 注意力机制", CLIP, "")
    assert answer == whole
    assert "Attention 注意力机制" not in whole
    assert answer.startswith("注意力机制是一个宽泛的概念。")


def test_a_note_with_a_section_answers_with_it():
    answer, whole = review_texts("问题", "# 问题\n\n## 答案\n第一行\n第二行\n", "第一行\n第二行")
    assert rendered(answer) == ["第一行", "第二行"]
    assert whole.startswith("## 答案")
