"""A note's markdown, rendered once into lines and drawn with the line API.

Textual's Markdown widget builds a widget per block, and a Static re-renders its whole content
on every layout: either makes revealing a 400-line, code-heavy answer cost a second. Here the
markdown is rendered once per width while the answer is still concealed (the widget keeps its
place and size, so nothing is laid out again), and revealing or scrolling draws only the
visible lines.
"""

from __future__ import annotations

import re

from rich.markdown import Markdown as RichMarkdown
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

_FENCE = re.compile(r"^(?:```|~~~)", re.MULTILINE)
MAX_SHOWN_CHARS = 100_000
"""The most of a note rendered (nine times the users' long notes); a bigger one is cut at a
line break, with a last line that says so."""


class Answer(ScrollView, can_focus=True):
    """Scrollable, highlighted markdown; `source` is what `show` was given."""

    DEFAULT_CSS = """
    Answer { height: 1fr; padding: 0 1; scrollbar-gutter: stable; overflow-x: hidden; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.source = ""
        self.concealed = False
        """Drawn blank (the question is being asked), though rendered and laid out."""
        self._strips: list[Strip] = []
        self._rendered_width = 0

    def show(self, markdown: str) -> None:
        if len(markdown) > MAX_SHOWN_CHARS:  # rendered on the UI thread: a 5 MB note took 7 s
            cut = markdown.rfind("\n", 0, MAX_SHOWN_CHARS) + 1 or MAX_SHOWN_CHARS
            left = len(markdown) - cut
            shown = markdown[:cut]
            if len(_FENCE.findall(shown)) % 2:  # cut inside a code block: close it first
                shown += "```\n"
            markdown = (shown + f"\n\n---\n\n*The rest of this note ({max(1, left // 1000):,}k characters) is not "
                        "shown here: open it in your editor (`e` in the review).*\n")
        self.source = markdown
        self._rendered_width = 0
        self.scroll_to(0, 0, animate=False)
        self._render_source()

    def conceal(self, concealed: bool) -> None:
        self.concealed = concealed
        self._update_virtual_size()
        self.refresh()

    def _update_virtual_size(self) -> None:
        height = 0 if self.concealed else len(self._strips)
        self.virtual_size = Size(self._rendered_width, height)

    def _render_source(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return  # not laid out yet: on_resize renders it
        console = self.app.console
        options = console.options.update(width=width, highlight=False)
        markdown = RichMarkdown(self.source, code_theme="monokai", hyperlinks=False)
        self._strips = [Strip(line) for line in console.render_lines(markdown, options, pad=False)]
        self._rendered_width = width
        self._update_virtual_size()
        self.refresh()

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._rendered_width:
            self._render_source()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        style = self.rich_style
        if self.concealed or index >= len(self._strips):
            return Strip.blank(width, style)
        return self._strips[index].crop_extend(scroll_x, scroll_x + width, style).apply_style(style)
