"""No wrong code passes by taking the grader's own answer.

The learner's child is forked from the worker, which holds every drill: its reference code (the
oracle) and, once a drill has been graded, its public cases' expected outputs. Learner code can
walk to them: `sys.modules`, `gc.get_objects()`, the frames above its own call
(`sys._getframe(1).f_locals`, `inspect.stack()`). Each hostile file below tries one route on the
sdpa drill and returns what it found there, computing nothing itself: none may pass, and the
verdict names what it did (the grader's reference is withheld from learner code, and calling it
is a failure, not a grade). Every drill's own reference still passes through the same child.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
DRILL_IDS = sorted(path.parent.name for path in KERNELS.glob("*/drill.toml"))
NAMED = "the grader's reference"
"""What the verdict of a submission that called the withheld reference says."""

ROUTES = {
    # the reference kernel module, imported in the same process
    "sys_modules": """
        import sys
        def scaled_dot_product_attention(Q, K, V, mask=None):
            for module in list(sys.modules.values()):
                oracle = getattr(module, "sdpa_oracle", None)
                if callable(oracle):
                    return oracle(Q, K, V, mask).to(Q.dtype)
            raise LookupError("no oracle in sys.modules")
    """,
    # the drill object, and through it its module's oracle, among every live object
    "gc_objects": """
        import gc, types
        def scaled_dot_product_attention(Q, K, V, mask=None):
            for thing in gc.get_objects():
                if isinstance(thing, types.FunctionType) and thing.__name__ == "sdpa_oracle":
                    return thing(Q, K, V, mask).to(Q.dtype)
            raise LookupError("no oracle among gc's objects")
    """,
    # the drill running this call: `self` in the frame above
    "caller_frames": """
        import sys
        def scaled_dot_product_attention(Q, K, V, mask=None):
            frame = sys._getframe(1)
            while frame is not None:
                for value in list(frame.f_locals.values()):
                    method = getattr(type(value), "oracle", None)
                    if callable(method) and "sdpa_oracle" in getattr(method, "__globals__", {}):
                        return method.__globals__["sdpa_oracle"](Q, K, V, mask).to(Q.dtype)
                frame = frame.f_back
            raise LookupError("no oracle in the frames")
    """,
    "inspect_stack": """
        import inspect
        def scaled_dot_product_attention(Q, K, V, mask=None):
            for info in inspect.stack():
                for name in ("self", "drill"):
                    method = getattr(type(info.frame.f_locals.get(name)), "oracle", None)
                    if callable(method) and "sdpa_oracle" in getattr(method, "__globals__", {}):
                        return method.__globals__["sdpa_oracle"](Q, K, V, mask).to(Q.dtype)
            raise LookupError("no oracle on the stack")
    """,
    # the drill's own oracle method, on a case of the learner's making
    "drill_method": """
        import sys, types
        def scaled_dot_product_attention(Q, K, V, mask=None):
            drill = sys._getframe(1).f_locals.get("self")
            case = types.SimpleNamespace(payload={"Q": Q.cpu(), "K": K.cpu(), "V": V.cpu(), "mask": mask})
            return drill.oracle(case)[0].to(Q.dtype)
    """,
}
EXPECTED_OUTPUTS = """
    import gc, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        for thing in gc.get_objects():
            try:
                extra, payload = vars(thing).get("extra"), vars(thing).get("payload")
            except TypeError:  # no __dict__
                continue
            if isinstance(extra, dict) and isinstance(payload, dict) and extra:
                kept = [key for key, value in extra.items() if isinstance(value, (torch.Tensor, tuple, list))]
                if kept:
                    raise RuntimeError("LEAKED expected outputs: " + ", ".join(map(str, kept)))
        raise LookupError("nothing of the grader's in memory")
"""
"""The public cases' expected outputs (and the known mistakes' outputs), kept on each case in the
worker once a drill has been graded, as the child found them in its copy of the worker's memory."""


def _grade(grader, tmp_path: Path, source: str, drill: str = "sdpa", name: str = "hostile.py") -> dict:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return grader.grade(drill, path, device="cpu", seed=1, limits=grade_limits(timeout=30.0))


@pytest.fixture(scope="module")
def graded_once(warm_grader):
    """sdpa graded once: the worker now holds its public cases with their expected outputs."""
    verdict = warm_grader.grade("sdpa", KERNELS / "sdpa" / "reference.py", device="cpu", seed=1,
                                limits=grade_limits(timeout=30.0))
    assert verdict["status"] == "pass", verdict
    return warm_grader


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_learner_code_cannot_pass_with_the_graders_reference(graded_once, tmp_path, route):
    verdict = _grade(graded_once, tmp_path, ROUTES[route])
    assert verdict["status"] != "pass", f"{route} passed with the grader's own answer: {verdict}"
    assert verdict["status"] == "fail" and verdict["origin"] == "learner", verdict
    assert NAMED in verdict["summary"], verdict
    assert "sdpa_oracle" in verdict["summary"] or "oracle" in verdict["summary"], verdict


def test_the_expected_outputs_are_not_in_the_childs_memory(graded_once, tmp_path):
    verdict = _grade(graded_once, tmp_path, EXPECTED_OUTPUTS)
    assert verdict["status"] != "pass", verdict
    assert "LEAKED" not in json.dumps(verdict), verdict
    assert "nothing of the grader's in memory" in verdict["summary"], verdict


def test_calling_the_reference_is_named_even_when_the_code_catches_the_refusal(graded_once, tmp_path):
    """Code that tries the oracle, swallows whatever happens and answers wrong is still named."""
    source = """
        import sys
        def scaled_dot_product_attention(Q, K, V, mask=None):
            for module in list(sys.modules.values()):
                oracle = getattr(module, "sdpa_oracle", None)
                if callable(oracle):
                    try:
                        oracle(Q, K, V, mask)
                    except BaseException:
                        pass
            return Q
    """
    verdict = _grade(graded_once, tmp_path, source)
    assert verdict["status"] == "fail" and NAMED in verdict["summary"], verdict


@pytest.mark.parametrize("drill_id", DRILL_IDS)
def test_no_drills_oracle_is_reachable_from_the_frames_at_import(warm_grader, tmp_path, drill_id):
    """At import time the `drill` being graded sits in a frame above; what computes its expected
    answers (`oracle`, or `_truth` for the drills that build masks) is withheld."""
    drill = load_kernels().DRILLS[drill_id]
    method = next(name for name in ("oracle", "_truth") if callable(getattr(drill, name, None)))
    entry = drill.entry
    source = f"""
        import sys
        frame = sys._getframe()
        while frame is not None and "drill" not in frame.f_locals:
            frame = frame.f_back
        try:
            frame.f_locals["drill"].{method}(None)
        except BaseException:
            pass
        def {entry}(*args, **kwargs):
            raise NotImplementedError
    """
    verdict = _grade(warm_grader, tmp_path, source, drill=drill_id)
    assert verdict["status"] == "fail" and NAMED in verdict["summary"], verdict
    assert f".{method}`" in verdict["summary"], verdict


@pytest.mark.parametrize("drill_id", DRILL_IDS)
def test_every_drills_reference_still_passes_with_the_oracle_withheld(warm_grader, drill_id):
    """What the child keeps of the kernels is all that running a drill's cases needs."""
    verdict = warm_grader.grade(drill_id, KERNELS / drill_id / "reference.py", device="cpu", seed=3,
                                limits=grade_limits(timeout=60.0))
    assert verdict["status"] == "pass", verdict
