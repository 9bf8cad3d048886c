"""Open a file in the learner's $EDITOR with the app suspended (tests replace `launch_editor`)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path


def editor_command() -> list[str] | None:
    """$VISUAL, else $EDITOR, split like a shell would; None when neither is set."""
    value = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(value) if value and value.strip() else None


def launch_editor(command: list[str], path: Path) -> int:
    """Run the editor in the foreground and return its exit status."""
    return subprocess.call([*command, str(path)])


def edit_file(app, path: Path) -> bool:
    """Suspend the app, edit `path`, resume. Returns False (after telling the user) when it could not."""
    command = editor_command()
    if command is None:
        app.notify("Set $EDITOR (or $VISUAL) to edit notes in your editor.", title="No editor", severity="warning")
        return False
    try:
        with app.suspend():
            status = launch_editor(command, path)
    except Exception as exc:  # noqa: BLE001 - SuspendNotSupported, editor not found, ...
        app.report_error(exc, title="Could not open the editor")
        return False
    if status != 0:
        app.notify(f"{command[0]} exited with status {status}.", severity="warning")
    return True
