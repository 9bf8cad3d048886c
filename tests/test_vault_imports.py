"""The CLI and vault start path stays light: no Textual, no torch (import torch costs seconds)."""

from __future__ import annotations

import subprocess
import sys


def test_cli_and_vault_do_not_import_textual_or_torch():
    code = (
        "import sys, studyapp.cli, studyapp.vault, studyapp.review_session, studyapp.drills, studyapp.commands.notes, studyapp.commands.drills\n"
        "heavy = sorted(m for m in ('textual', 'torch', 'pandas', 'numpy', 'frontmatter') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
