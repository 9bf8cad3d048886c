"""What a review shows of a note: the answer, and the whole note, readable for web clips too.

Most imported notes are plain web clips: a title line (often repeated), then prose whose line
breaks carry the structure, and no `##` section. Markdown would join those lines into one
paragraph; Obsidian, where these vaults live, keeps them. So the text is shown with each line
break kept (outside code fences), without the title lines the screen already shows, and a note
with no `##` section answers with its body.
"""

from __future__ import annotations

_FENCES = ("```", "~~~")


def without_title(body: str, title: str) -> str:
    """`body` without its leading title lines (`# title` or a plain `title`, repeated or not)."""
    lines = body.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index].strip().lstrip("\ufeff").strip()
        if not line:
            index += 1
            continue
        text = line[2:].strip() if line.startswith("# ") else line
        if text != title.strip():
            break
        index += 1
    return "".join(lines[index:])


def keep_line_breaks(markdown: str) -> str:
    """Turn each single line break of prose into a hard break (two trailing spaces), as
    Obsidian shows it; code fences, blank lines and table rows are left as they are."""
    lines = markdown.splitlines()
    out = []
    fence = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if fence is None and stripped.startswith(_FENCES):
            fence = stripped[:3]
        elif fence is not None:
            if stripped.startswith(fence):
                fence = None
            out.append(line)
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if (fence is None and stripped and following and not stripped.startswith("|")
                and not following.startswith(_FENCES) and not line.endswith("  ")):
            line += "  "
        out.append(line)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")


def review_texts(title: str, body: str, answer: str) -> tuple[str, str]:
    """(answer, whole note) as the review screen shows them: the `##` section's text, or the
    whole body when the note has none; the whole note without its title lines."""
    whole = keep_line_breaks(without_title(body, title)).strip("\n")
    return (keep_line_breaks(answer) if answer.strip() else whole), whole
