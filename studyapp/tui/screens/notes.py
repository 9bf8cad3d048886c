"""Browse the vault by folder and tag, filter by text, open or suspend a note; list unreadable notes."""

from __future__ import annotations

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Header, Input, Static, Tree
from textual.widgets.data_table import ColumnKey
from textual.widgets.tree import TreeNode

from studyapp.live_vault import filter_words, holds_every_word
from studyapp.textwidth import display_width, fit, fit_middle, shown
from studyapp.tui.markup import plain
from studyapp.tui.messages import NotesListed, NotesSearched
from studyapp.tui.screens.base import StudyScreen, footer_hides
from studyapp.tui.widgets.footer import KeysFooter
from studyapp.views import NoteView, Problem

ALL = ("all", "")
MAX_ROWS = 500
"""Rows drawn at once; a 10,000-note vault is narrowed with the filter or the tree instead."""
FIXED_COLUMNS = (("Next review", len("suspended  ")), ("Mastery", len("Mastery")), ("Reviews", len("Reviews")))
"""The short columns, each as wide as its widest value or its label."""
MIN_TEXT = 10
"""A title or path is never shortened below this many cells, however narrow the terminal."""
READABLE_TITLE = 24
"""Cells a title gets before a path gets more than MIN_TEXT: twelve Chinese characters."""


def matches(row: NoteView, scope: tuple[str, str], text: str, text_hits: frozenset[str] = frozenset()) -> bool:
    """Whether a row belongs to the chosen folder/tag and holds every word of the filter text, in
    any order, in its title or path, or (`text_hits`, found by a search in a worker) with its body."""
    kind, value = scope
    if kind == "folder" and not (row.folder == value or row.folder.startswith(value + "/")):
        return False
    if kind == "tag" and value not in row.tags:
        return False
    if text:
        words = filter_words(text)
        return holds_every_word(f"{row.title}\n{row.path}".casefold(), words) or row.path in text_hits
    return True


def _sync_children(parent: TreeNode[tuple[str, str]], wanted: list[tuple[tuple[str, str], Text]],
                   leaves: bool = False) -> None:
    """Make `parent`'s children the `wanted` (data, label) nodes, in that order: the others are
    removed, the missing ones inserted, and those kept are left as they are."""
    keep = {data for data, _ in wanted}
    for child in list(parent.children):
        if child.data not in keep:
            child.remove()
    have = {child.data for child in parent.children}
    for index, (data, label) in enumerate(wanted):
        if data not in have:
            if leaves:
                parent.add_leaf(label, data=data, before=index)
            else:
                parent.add(label, data=data, before=index)


class NoteTable(DataTable[str | Text]):
    """The notes' table. Its titles and paths are cut to its width, so a new width (a resized
    terminal, or the tree narrowing) fills it again."""

    class Resized(Message):
        pass

    def on_resize(self) -> None:
        self.post_message(self.Resized())


class NotesScreen(StudyScreen):
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (70, "-narrow"), (100, "-wide")]
    """Below 100 columns the folder tree gives the table some of its width, and below 70 all of it
    (studyapp.tcss): at 60 the Path column was off the screen, at 50 the Title too."""
    BINDINGS = [
        Binding("enter", "open_note", "Open", show=False),
        Binding("o", "open_note", "Open"),
        Binding("s", "toggle_suspend", "Suspend/resume"),
        Binding("u", "undo", "Undo", show=False),
        Binding("slash", "focus_filter", "Filter", key_display="/"),
        Binding("escape", "leave_filter", "To the list"),
        Binding("r", "app.start_review", "Review", show=False),
        *footer_hides("notes", quit=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[NoteView] = []
        self.problems: list[Problem] = []
        self.scope: tuple[str, str] = ALL
        self.filter_pending = False
        """`/` asked for the filter, whose focus may not have landed yet (`on_key`)."""
        self.typed_ahead = ""
        """Letters typed for the filter before its focus landed, typed into it when it does."""
        self.text_hits: tuple[str, frozenset[str]] = ("", frozenset())
        """The latest body search: (filter text, paths whose text contains it)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="notes"):
            tree: Tree[tuple[str, str]] = Tree("Vault", data=ALL, id="note-tree")
            tree.show_root = True
            yield tree
            with Vertical(id="notes-main"):
                # not select_on_focus: letters typed right after `/` may reach it before its
                # focus does, and a selection made then had the next letter replace them
                yield Input(placeholder="Filter by title, path or text…", id="note-filter", select_on_focus=False)
                yield Static("", id="note-count")
                table = NoteTable(id="note-table", cursor_type="row", zebra_stripes=True)
                for label, width in FIXED_COLUMNS:
                    table.add_column(label, width=width)
                table.add_column("Title", key="title")
                table.add_column("Path", key="path")
                yield table
                yield Static("", id="note-problems")
        yield KeysFooter()

    def refresh_data(self) -> None:
        self.list_notes()
        text = self.query_one("#note-filter", Input).value.strip()
        if text:  # the notes changed: their bodies may match the standing filter now, or no more
            self.search_text(text)

    def on_note_table_resized(self) -> None:
        if self.rows:
            self._fill_table()

    def _text_widths(self, table: DataTable, rows: list[NoteView]) -> tuple[int, int]:
        """Cells for the title and the path: what the short columns leave (at 80 columns a long
        title pushed the Path column off the screen), each as wide as its widest value when there
        is room. When not, a path takes what the titles leave, but never less than half, once the
        title has READABLE_TITLE cells (at 80 columns, halved, a Chinese title showed five characters)."""
        shown = table.scrollable_content_region.width or self.app.size.width
        padding = 2 * table.cell_padding
        room = shown - sum(width + padding for _, width in FIXED_COLUMNS) - 2 * padding
        widest_title = max((display_width(row.title) for row in rows), default=MIN_TEXT)
        widest_path = max((display_width(row.path) for row in rows), default=MIN_TEXT)
        if widest_title + widest_path <= room:
            return widest_title, widest_path
        least = min(MIN_TEXT, max(3, room // 2))  # a terminal too narrow for two of MIN_TEXT: halves
        path = max(least, min(widest_path, room - min(widest_title, max(room // 2, READABLE_TITLE))))
        return max(least, min(widest_title, room - path)), path

    @work(thread=True, exclusive=True, exit_on_error=False, group="notes")
    def list_notes(self) -> None:
        rows, problems = self.study.notes()
        self.post_message(NotesListed(rows, problems))

    def on_notes_listed(self, message: NotesListed) -> None:
        self.rows = message.rows
        self.problems = message.problems
        self._build_tree()
        self._fill_table()
        problems = self.query_one("#note-problems", Static)
        if self.problems:
            lines = [f"[red]✘[/] {plain(p.path)}: {plain(p.reason)}" for p in self.problems]
            problems.update(f"[b]Unreadable notes ({len(self.problems)})[/b]\n" + "\n".join(lines))
            problems.display = True
        else:
            problems.display = False

    def _build_tree(self) -> None:
        """The folders and tags of the notes listed now: one made or emptied while the app runs
        shows or goes, and the nodes still there stay as the learner left them (expanded or
        not, under the cursor). A folder or tag picked that went lists every note again."""
        tree: Tree[tuple[str, str]] = self.query_one("#note-tree", Tree)
        if not tree.root.children:
            tree.root.add("Folders", data=ALL, expand=True)
            tree.root.add("Tags", data=ALL, expand=False)
            tree.root.expand()
        folders, tags = tree.root.children
        names, tag_names = set(), sorted({t for r in self.rows for t in r.tags})
        for folder in {r.folder for r in self.rows if r.folder}:
            while folder and folder not in names:  # with the folders above it
                names.add(folder)
                folder = folder.rpartition("/")[0]
        below: dict[str, list[str]] = {}
        for folder in sorted(names):
            below.setdefault(folder.rpartition("/")[0], []).append(folder)
        wanted = {ALL} | {("folder", f) for f in names} | {("tag", t) for t in tag_names}
        if self.scope not in wanted:
            self.scope = ALL
        cursor = tree.cursor_node
        while cursor is not None and cursor.data not in wanted:  # a removed node: its parent
            cursor = cursor.parent

        def fill(node: TreeNode[tuple[str, str]], folder: str) -> None:
            _sync_children(node, [(("folder", f), Text(shown(f.rpartition("/")[2]))) for f in below.get(folder, ())])
            for child in node.children:
                if child.data is not None:
                    child.allow_expand = bool(below.get(child.data[1]))  # no ▶ on a folder with none inside
                    fill(child, child.data[1])

        fill(folders, "")
        # control characters as symbols
        _sync_children(tags, [(("tag", t), Text(shown(t))) for t in tag_names], leaves=True)
        if cursor is not tree.cursor_node:
            tree.move_cursor(cursor)

    def _fill_table(self) -> None:
        table = self.query_one("#note-table", DataTable)
        text = self.query_one("#note-filter", Input).value.strip()
        hits = self.text_hits[1] if self.text_hits[0] == text else frozenset()
        selected = self._selected_path()
        table.clear()
        picked = [row for row in self.rows if matches(row, self.scope, text, hits)]
        matched, shown = len(picked), min(len(picked), MAX_ROWS)
        title_width, path_width = self._text_widths(table, picked[:MAX_ROWS])
        for key, width in (("title", title_width), ("path", path_width)):
            column = table.columns[ColumnKey(key)]
            column.auto_width, column.width = False, width
        for row in picked[:MAX_ROWS]:
            due = row.next_review.isoformat() if row.next_review else "new"
            if row.suspended:
                due = "suspended"
            mastery = f"{row.mastery:.0%}" if row.mastery is not None else "–"
            table.add_row(due, mastery, str(row.review_count), Text(fit(row.title, title_width).rstrip()),
                          Text(fit_middle(row.path, path_width)), key=row.path)
        count = f"{matched} note{'s' if matched != 1 else ''}"
        if matched > shown:
            count += f" — showing the first {shown}; filter or pick a folder to narrow"
        self.query_one("#note-count", Static).update(f"[dim]{count}[/]")
        if selected is not None and selected in table.rows:
            table.move_cursor(row=table.get_row_index(selected), animate=False)

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        self.scope = event.node.data or ALL
        self._fill_table()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill_table()  # title and path matches at once; body matches follow from the worker
        text = event.value.strip()
        if text:
            self.search_text(text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="notes-search")
    def search_text(self, text: str) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        paths = self.study.search_notes(text, should_stop=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(NotesSearched(text, paths))

    def on_notes_searched(self, message: NotesSearched) -> None:
        self.text_hits = (message.text, message.paths)
        if message.text == self.query_one("#note-filter", Input).value.strip():
            self._fill_table()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#note-table").focus()

    def _selected_path(self) -> str | None:
        table = self.query_one("#note-table", DataTable)
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0))
        return row_key.value

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_note()

    def action_open_note(self) -> None:
        from studyapp.tui.screens.note_view import NoteViewScreen

        path = self._selected_path()
        if path is None:
            return
        try:
            card = self.study.reload_card(path)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not open the note")
            return
        # the note as it is now, under its name now (renamed outside the app: `renamed_to`)
        self.app.push_screen(NoteViewScreen(card.title, card.body, reload=lambda: self.study.note_card(
            self.study.renamed_to(path) or path)))

    def action_toggle_suspend(self) -> None:
        path = self._selected_path()
        if path is None:
            return
        row = next(r for r in self.rows if r.path == path)
        try:  # the row may be older than the note's state (a second `s` before the redraw)
            suspended = self.study.toggle_suspended(path)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not change the note")
            return
        if suspended:
            self.notify(f"Suspended “{row.title}” (u undoes).", timeout=3)
        else:
            self.notify(f"Resumed “{row.title}”.", timeout=3)
        self.refresh_data()

    def action_undo(self) -> None:
        """Undo the newest change (a suspension here, or a rating in a review)."""
        if self.app.undo_and_say() is not None:
            self.refresh_data()

    def action_focus_filter(self) -> None:
        self.filter_pending = True
        self.query_one("#note-filter", Input).focus()

    def on_key(self, event: events.Key) -> None:
        """Letters typed right after `/`, while the focus is still on its way to the filter (the
        list filling on a first visit holds the keys back, then they come at once), are the
        filter's text: they went to the screen's keys (`s` suspended the selected note) or were
        lost. README: while a filter has the focus, keys are text."""
        filter_input = self.query_one("#note-filter", Input)
        # A printable key the filter took never reaches here: one that does was sent while the
        # focus was elsewhere, even if it has landed on the filter since.
        if event.key == "slash" and self.focused is not filter_input:  # its binding runs after the keys queued behind it
            self.filter_pending = True
        elif self.filter_pending and event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            if self.focused is filter_input and not self.typed_ahead:
                filter_input.insert_text_at_cursor(event.character)
            else:  # typed into it once it has the focus (in order: nothing typed after it is there yet)
                self.typed_ahead += event.character

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        filter_input = self.query_one("#note-filter", Input)
        if event.widget is not filter_input:
            self.filter_pending = False  # the list (Enter, Tab, Escape) or a click: keys are keys again
            self.typed_ahead = ""
        elif self.typed_ahead:
            text, self.typed_ahead = self.typed_ahead, ""
            filter_input.insert_text_at_cursor(text)

    def action_leave_filter(self) -> None:
        """Escape in the filter: back to the list, the filter kept (every key was text there,
        and nothing led out but Enter or Tab)."""
        self.query_one("#note-table").focus()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "leave_filter":  # shown, and taken, only while the filter has the focus
            return isinstance(self.focused, Input)
        return True
