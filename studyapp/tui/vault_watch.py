"""Watching the vault for notes changed outside the app (an editor, the CLI, a sync), and the
review log folder for other devices' reviews (a sync tool copying their log files in)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

NOTE_SUFFIX = ".md"
WATCH_DEBOUNCE_MS = 300
"""Changes within this window arrive as one batch: a sync that writes many notes is one reload."""


def note_paths(root: Path, changed: Iterable[str]) -> tuple[str, ...]:
    """The vault-relative posix paths of changed notes, and of changed folders and links with a
    `/` at the end (a folder renamed, moved in or removed is one event, none for its notes; a
    link may make a note an alias: the whole vault is loaded again); hidden files (temp files, `.obsidian/`), other files (`image.png`)
    and anything outside the vault are left out."""
    paths = set()
    for raw in changed:
        path = Path(raw)
        try:
            rel = path.resolve().relative_to(root)
        except ValueError:
            continue
        if not rel.parts or any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_symlink():  # a link to another note is an alias: only a whole load says so
            paths.add(rel.as_posix() + "/")
        elif rel.suffix == NOTE_SUFFIX:
            paths.add(rel.as_posix())
        elif path.is_dir() or (not rel.suffix and not path.exists()):
            paths.add(rel.as_posix() + "/")
    return tuple(sorted(paths))


LOG_SUFFIX = ".jsonl"


def touches_log(log_dir: Path, changed: Iterable[str]) -> bool:
    """Whether a device's log file (`<device>.jsonl` directly in `log_dir`) is among `changed`."""
    for raw in changed:
        path = Path(raw)
        if path.suffix == LOG_SUFFIX and path.parent.resolve() == log_dir:
            return True
    return False


REPLACED_CHECK_MS = 1000
"""How often the watch checks that the vault's folder is still the one it watches."""


class VaultFolderReplaced(Exception):
    """The folder at the vault's path is another one (moved aside and copied back, removed and
    made again): the watch follows the folder it started on, so it must start again."""


def watch_notes(root: Path, stop: threading.Event, on_change: Callable[[tuple[str, ...]], object],
                log_dir: Path | None = None, on_log_change: Callable[[], object] | None = None,
                on_started: Callable[[], object] | None = None) -> None:
    """Call `on_change` with each batch of changed notes, and `on_log_change` when a review log
    file changed, until `stop` is set (runs in a thread). The log folder may be outside the
    vault (the data-dir setting). `on_started` is called once the watch is in place (what
    changed before it is for the caller to load). Raises VaultFolderReplaced when the vault's
    path no longer names the folder watched (checked every `REPLACED_CHECK_MS`)."""
    from watchfiles import watch

    root = root.resolve()
    watched = _identity(root)
    targets = [root]
    if log_dir is not None:
        # made now, so it is watched from the start: a file copied into a folder made later can
        # land before the watch on that new folder exists, and its change would go unseen
        log_dir.mkdir(parents=True, exist_ok=True)
        log_dir = log_dir.resolve()
        if not log_dir.is_relative_to(root):
            targets.append(log_dir)
    for changes in watch(*targets, stop_event=stop, debounce=WATCH_DEBOUNCE_MS, raise_interrupt=False,
                         ignore_permission_denied=True, rust_timeout=REPLACED_CHECK_MS, yield_on_timeout=True):
        if on_started is not None:
            on_started()
            on_started = None
        if _identity(root) != watched:
            raise VaultFolderReplaced(f"{root} is no longer the folder watched")
        changed = [path for _, path in changes]
        paths = note_paths(root, changed)
        if paths:
            on_change(paths)
        if log_dir is not None and on_log_change is not None and touches_log(log_dir, changed):
            on_log_change()


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return st.st_dev, st.st_ino
