"""Open a file in the learner's $EDITOR with the app suspended (tests replace `launch_editor`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

FAILED = "Could not open the editor"
"""The title of every notification that says the editor did not run."""


class EditorSettingError(ValueError):
    """$VISUAL/$EDITOR is set but names no program that can run; the message says which and why."""


def editor_command() -> list[str] | None:
    """$VISUAL, else $EDITOR, split like a shell would; None when neither is set.

    Raises EditorSettingError naming the variable when its value is no command line (an
    unbalanced quote), so the learner can see what to fix."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name)
        if value and value.strip():
            break
    else:
        return None
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise EditorSettingError(f"${name} is not a command line ({exc}): {value}") from None


def check_program(command: list[str]) -> None:
    """Raise EditorSettingError when the program is not found or cannot run, while the app is
    still on screen (found out inside `suspend` it would flash the terminal for nothing)."""
    if shutil.which(command[0]) is None:
        raise EditorSettingError(f"“{command[0]}” is not a program that can run (not found, or not executable).")


def launch_editor(command: list[str], path: Path) -> int:
    """Run the editor in the foreground and return its exit status."""
    return subprocess.call([*command, str(path)])


def edit_file(app, path: Path) -> bool:
    """Suspend the app, edit `path`, resume. Returns False (after telling the user) when it could not."""
    try:
        command = editor_command()
        if command is not None:
            check_program(command)
    except EditorSettingError as exc:
        app.notify(str(exc), title=FAILED, severity="error", timeout=10)
        return False
    if command is None:
        app.notify("Set $EDITOR (or $VISUAL) to edit notes in your editor.", title="No editor", severity="warning")
        return False
    failure: BaseException | None = None
    try:
        with app.suspend():
            # Nothing may leave this block by an exception: Textual resumes the app only when
            # it ends normally, and a suspended app is blank and deaf to keys.
            try:
                status = launch_editor(command, path)
            except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - exec failed, ctrl+c, ...
                failure = exc
    except Exception as exc:  # noqa: BLE001 - SuspendNotSupported
        failure = exc
    if isinstance(failure, KeyboardInterrupt):
        app.notify(f"{command[0]} was interrupted.", title=FAILED, severity="warning")
        return False
    if failure is not None:
        app.report_error(failure, title=FAILED)
        return False
    if status != 0:
        app.notify(f"{command[0]} exited with status {status}.", severity="warning")
    return True
