"""An owned value studyapp cannot use is reported with its reason, naming the value. The value
is named in Python's spelling of what YAML built, words the user never wrote: `review_count:
2026-01-01` (the date and the count swapped by hand) is reported as "review_count:
datetime.date(2026, 1, 1) is not a number of reviews", `next_review: yes` as "True is not a
date", `review_count: {n: 2}` as "{'n': 2}". The README shows values "as YAML writes it, never
as Python's spelling of it", and the OSR import's "[datetime.date(...)]" was fixed for this."""

from __future__ import annotations

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T10:00:00+00:00"
CASES = {
    "a date as the count": ("review_count: 2026-01-01", ("datetime", "date(")),
    "a timestamp as the mastery": ("mastery_level: 2026-01-01 08:00:00", ("datetime",)),
    "yes as a date": ("next_review: yes", ("True",)),
    "a mapping as the count": ("review_count: {n: 2}", ("{'n'",)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_due_and_rate_name_an_unusable_owned_value_as_the_note_writes_it(case, tmp_path, capsys):
    line, python_words = CASES[case]
    key = line.split(":")[0]
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "good.md", USERS_NOTE)
    old = next(text for text in USERS_NOTE.splitlines() if text.startswith(f"{key}:"))
    raw = USERS_NOTE.replace(old, line).encode()
    write(vault / "odd.md", raw)
    args = ["--vault", str(vault), "--data-dir", str(data), "--now", NOW]

    capsys.readouterr()
    assert main(["due", *args]) == 0
    warning = next(text for text in capsys.readouterr().err.splitlines() if "odd.md" in text)
    assert key in warning
    assert not any(word in warning for word in python_words), warning

    assert main(["rate", "odd.md", "--rating", "good", *args]) == 1
    error = capsys.readouterr().err
    assert not any(word in error for word in python_words), error
    assert (vault / "odd.md").read_bytes() == raw
