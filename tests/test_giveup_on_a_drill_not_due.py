"""Giving up a drill that is not due (practice, after its review) shows the reference and rates
nothing, so neither the command's question nor the app's may say it will be rated Again."""

from __future__ import annotations

import json

from test_drill_reviews_cli import home, ok, studyapp  # noqa: F401  (home is a fixture)

LATER_TODAY = "2026-05-04T11:00:00+00:00"


def reviewed_drill(home):  # noqa: F811
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    ok(studyapp(home, "rate-drill", "sdpa", "--rating", "good"))
    listed = {d["id"]: d for d in json.loads(ok(studyapp(home, "drills", "--json", now=LATER_TODAY)))}
    assert not listed["sdpa"]["due_now"]
    return listed["sdpa"]


def test_the_question_says_nothing_is_rated_when_the_drill_is_not_due(home):  # noqa: F811
    before = reviewed_drill(home)
    declined = studyapp(home, "giveup", "sdpa", stdin="n\n", now=LATER_TODAY)
    assert declined.returncode == 1
    assert "rated Again" not in declined.stdout
    assert "not due" in declined.stdout and "nothing is rated" in declined.stdout

    shown = ok(studyapp(home, "giveup", "sdpa", "--yes", now=LATER_TODAY))
    assert "def " in shown and "proposed rating" not in shown
    after = {d["id"]: d for d in json.loads(ok(studyapp(home, "drills", "--json", now=LATER_TODAY)))}
    assert after["sdpa"]["next_due"] == before["next_due"]  # the schedule is as it was


def test_the_question_still_says_again_when_the_drill_is_due(home):  # noqa: F811
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    declined = studyapp(home, "giveup", "sdpa", stdin="n\n")
    assert declined.returncode == 1 and "rated Again" in declined.stdout


def test_the_app_asks_the_same_question(home):  # noqa: F811
    from studyapp.context import build_context
    from studyapp.facade import StudyFacade

    reviewed_drill(home)
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"), now=LATER_TODAY)
    study = StudyFacade(ctx)
    try:
        study.open()
        question = study.drill_give_up_question("sdpa")
    finally:
        study.close()
    assert "nothing is rated" in question and "rated Again" not in question
