"""Another program saving a drill's workspace file while the app holds unsaved edits of it: the
drill app the tests of that meeting open, and the other program's save."""

from __future__ import annotations

import os
import time
from pathlib import Path

THEIRS = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return Q  # theirs\n"
"""The code another editor saves over the app's file."""


def drill_app(ctx, grader=None):
    """The app on the sample vault, its grader a stub unless `grader` is given."""
    from tui.conftest import app_with_grader
    from tui.sample_vault import write_vault
    from tui.test_tui_drills import StubGrader

    write_vault(ctx.paths.vault_dir)
    return app_with_grader(ctx, grader or StubGrader())


def save_as_other_program(path: Path, text: str = THEIRS) -> None:
    """An editor's save: a temp file renamed over `path`, a moment after the app's last write
    (so that its mtime differs)."""
    time.sleep(0.02)
    tmp = path.with_name(path.name + ".swp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
