"""A note whose metadata block is one flow mapping (`{...}`, JSON-style front matter some tools
write) and holds none of the review keys: a review cannot append its keys to such a block, so the
note must be reported and skipped like the flow-style block that holds them (README: "an owned key
no review could write back ... inside a `{...}` flow-style block" is reported, "not listed as
due"), or else be rated. Today `due` lists it as a new note and every `rate` fails with "the
edited metadata block would not parse", so it stays at the top of the queue for good."""

from __future__ import annotations

import json

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T10:00:00+00:00"
FLOW = b'---\n{"title": "Attention", "tags": ["ml"]}\n---\n# Attention\n\nWhy scale by sqrt(d_k).\n'


def _run(capsys, vault, data, *args):
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", NOW])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_flow_style_block_is_never_listed_due_and_then_refused(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "good.md", USERS_NOTE)
    write(vault / "flow.md", FLOW)

    code, out, _err = _run(capsys, vault, data, "due", "--json")
    assert code == 0
    listed = [row["path"] for row in json.loads(out)]
    assert "good.md" in listed

    code, _out, err = _run(capsys, vault, data, "rate", "flow.md", "--rating", "good")
    assert (vault / "flow.md").read_bytes() == FLOW
    # the note `due` offered must be one `rate` can review; one it cannot review is not offered
    assert code == 0 or "flow.md" not in listed, (
        f"`due` lists flow.md as due, but `rate flow.md` fails: {err.strip()!r}")
