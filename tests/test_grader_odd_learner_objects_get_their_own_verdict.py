"""Learner code whose objects misbehave where the child describes them (a SystemExit whose `code`
raises, an entry whose `__signature__` raises, a module holding a non-text key or an object
whose `__module__` raises) killed the child while it wrote its verdict: the learner read "could
not send its results back", which names nothing of what their code did. Each gets the verdict
of what it did."""

from __future__ import annotations

import textwrap

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

SOURCES = {
    "exit code that raises": ("""
        class Odd(SystemExit):
            @property
            def code(self):
                raise RuntimeError("no code")
        def add(a, b):
            raise Odd()
    """, "sys.exit"),
    "signature that raises": ("""
        class Entry:
            @property
            def __signature__(self):
                raise RuntimeError("no signature")
            def __call__(self, a):
                return a
        add = Entry()
    """, "signature"),
    "non-text key in globals": ("""
        globals()[1] = "one"
        def plus(a, b):
            return a + b
    """, "no function or class named `add`"),
    "__module__ that raises": ("""
        class Meta(type):
            @property
            def __module__(cls):
                raise RuntimeError("no module")
        class Thing(metaclass=Meta):
            pass
        def plus(a, b):
            return a + b
    """, "no function or class named `add`"),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_odd_learner_objects_get_the_verdict_of_what_the_code_did(warm_fake_grader, tmp_path, name):
    source, said = SOURCES[name]
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source))
    verdict = warm_fake_grader.grade("add", path, device="cpu", limits=grade_limits(timeout=10.0))
    assert verdict["status"] in ("fail", "error"), verdict
    assert "could not send" not in verdict["summary"], verdict["summary"]
    assert said in verdict["summary"], verdict["summary"]
