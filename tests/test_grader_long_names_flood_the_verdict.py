"""A submission's printed output is capped (1 MiB kept, 4000 characters shown), but names its
code makes are copied into the verdict whole: a class, an exception class or a function with a
name of megabytes, or `sys.exit` with a long value. `studyapp grade` then prints every copy
(the summary, the checks table and the hint each repeat it): a 20 MB class name returned from
sdpa printed 40 MB to the terminal and took the app to 900 MB of memory.

`child._error` cuts an exception's message (2000) and traceback (4000), `export` cuts a repr
(200); the names beside them (`type(value).__name__`, `type(exc).__name__`, `repr(exc.code)`,
the functions listed when the entry is missing) are not cut. Each verdict here must stay
under the output cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

LONG = 3_000_000
CAP = 1 << 20
"""The output cap (`Limits.output_cap`): no verdict about a file may carry more of its text."""

FLOODS = {
    # returns an instance of a class whose name is 3 MB long
    "a returned object's class name": f"""
        Odd = type("Odd" + "x" * {LONG}, (), {{}})
        def scaled_dot_product_attention(Q, K, V, mask=None):
            return Odd()
    """,
    # raises, when loaded, an exception whose class name is 3 MB long
    "an exception class name": f"""
        raise type("Oops" + "x" * {LONG}, (Exception,), {{}})("short message")
    """,
    # exits, when loaded, with a 3 MB value
    "a sys.exit value": f"""
        import sys
        sys.exit("x" * {LONG})
    """,
    # defines no entry, but a function with a 3 MB name (listed as what the file defines)
    "a defined function's name": f"""
        def _f():
            return 0
        globals()["f" + "x" * {LONG}] = _f
    """,
}


@pytest.mark.parametrize("what", list(FLOODS))
def test_a_long_name_does_not_flood_the_verdict(warm_grader, tmp_path: Path, what: str):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", FLOODS[what], timeout=30.0)
    assert verdict["status"] != "pass", verdict["summary"][:200]
    size = len(json.dumps(verdict))
    assert size < CAP, f"{what}: the verdict holds {size} characters; summary starts {verdict['summary'][:120]!r}"
