"""Watching the vault for notes changed outside the app (an editor, the CLI, a sync)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

NOTE_SUFFIX = ".md"
WATCH_DEBOUNCE_MS = 300
"""Changes within this window arrive as one batch: a sync that writes many notes is one reload."""


def note_paths(root: Path, changed: Iterable[str]) -> tuple[str, ...]:
    """The vault-relative posix paths of changed notes; hidden files (temp files, `.obsidian/`)
    and anything outside the vault are left out."""
    paths = set()
    for raw in changed:
        try:
            rel = Path(raw).resolve().relative_to(root)
        except ValueError:
            continue
        if rel.suffix != NOTE_SUFFIX or any(part.startswith(".") for part in rel.parts):
            continue
        paths.add(rel.as_posix())
    return tuple(sorted(paths))


def watch_notes(root: Path, stop: threading.Event, on_change: Callable[[tuple[str, ...]], object]) -> None:
    """Call `on_change` with each batch of changed notes until `stop` is set (runs in a thread)."""
    from watchfiles import watch

    root = root.resolve()
    for changes in watch(root, stop_event=stop, debounce=WATCH_DEBOUNCE_MS, raise_interrupt=False,
                         ignore_permission_denied=True):
        paths = note_paths(root, (path for _, path in changes))
        if paths:
            on_change(paths)
