"""562b477 made the give-up question say what giving up will do. In the app, the drill screen
is open on a due drill (its try going) and the learner gives up in another shell
(`studyapp giveup sdpa --yes`): the try is over and its rating (Again) waits to be recorded.
The screen still offers F3; pressed, it asks "Give up this drill? Its reference solution is
shown and the drill is not due, so nothing is rated." The drill is due, and its try is
rated Again once recorded: the question must not say it is not due nor that nothing is
rated. The command asks the same question of a finished try with no proposal waiting."""

from __future__ import annotations

from test_drill_reviews_cli import home, ok, studyapp  # noqa: F401  (home is a fixture)


def test_the_question_about_a_try_given_up_elsewhere_does_not_say_the_drill_is_not_due(home):  # noqa: F811
    from studyapp.context import build_context
    from studyapp.drill_reviews import DrillReviews
    from studyapp.facade import StudyFacade
    from studyapp.reviews import ReviewService

    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))  # the sdpa drill is due now
    ok(studyapp(home, "start", "sdpa"))  # the app opened it: a try is going
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"),
                        now="2026-05-04T09:00:00+00:00")
    with ReviewService(ctx) as service:
        drills = DrillReviews(service)
        assert drills.give_up_rates("sdpa"), "a try is going: giving up rates it Again"
    ok(studyapp(home, "giveup", "sdpa", "--yes"))  # in another shell: the try is over

    study = StudyFacade(ctx)
    try:
        study.open()
        question = study.drill_give_up_question("sdpa")  # F3 on the screen drawn before
    finally:
        study.close()
    assert "not due" not in question, question
