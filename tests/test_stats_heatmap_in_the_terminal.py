"""`studyapp stats` draws the review calendar the README promises (a heatmap, as the app's
Stats screen), in text: weeks left to right, Monday on top, a shade per day by its share of
the busiest day; it printed a line of the last seven days' counts instead."""

from __future__ import annotations

from vault_fixtures import USERS_NOTE

from studyapp.cli import main


def test_stats_prints_a_calendar_of_reviews(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(4):
        (vault / f"n{i}.md").write_text(USERS_NOTE, encoding="utf-8")
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    rated = [("n0.md", "2026-06-01"), ("n1.md", "2026-06-03"), ("n2.md", "2026-06-03"),
             ("n3.md", "2026-06-03"), ("n0.md", "2026-06-15")]
    for path, day in rated:
        assert main(["rate", path, "--rating", "good", "--now", f"{day}T12:00", *common]) == 0
    capsys.readouterr()
    assert main(["stats", "--now", "2026-06-15T18:00", *common]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line[:3]: line for line in out if line[:3] in ("Mon", "Wed", "Fri")}
    assert set(rows) == {"Mon", "Wed", "Fri"}, out
    mon, wed = rows["Mon"].rstrip(), rows["Wed"].rstrip()
    # the newest week is the last column: 06-15 (Mon, 1 review) there; 06-01 (Mon) two weeks
    # before; 06-03 (Wed, 3 reviews: the busiest day) in the week of 06-01; 06-17 (Wed) is
    # still to come: blank
    assert mon.endswith("▒ · ▒"), mon  # 1 of the busiest day's 3: the second shade
    assert wed.endswith("█ ·") and len(wed) == len(mon) - 2, (mon, wed)  # the busiest: the darkest
    assert any("5 reviews in" in line for line in out)
    assert all(len(line) <= 80 for line in out if line[:3] in ("Mon", "Wed", "Fri"))
