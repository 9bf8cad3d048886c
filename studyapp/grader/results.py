"""What the parent accepts from a child: exactly one result per case, made of plain tensors.

Results are keyed by the case's index, never paired by position, so a child that skips, drops
or invents cases is caught; every tensor must be exactly `torch.Tensor` (no subclass, so no
`__torch_function__` of the learner's) and must be what its exported record says it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_DEPTH = 12


@dataclass(frozen=True)
class Rejected:
    """Why the results cannot be judged: counted as a failure, never as a pass."""

    summary: str
    detail: str = ""


FORGED_DETAIL = ("The grader judges only what each case returned, as plain torch.Tensors; tampering "
                 "with the grader or its data is counted as a failure.")


def case_results(outcome: dict, case_count: int) -> list[dict] | Rejected:
    """The results in case order, or why they are refused."""
    results = outcome.get("results")
    if not isinstance(results, dict):
        return Rejected("the results did not come from the grader's harness", FORGED_DETAIL)
    for index in range(case_count):
        if index not in results:
            return Rejected(f"case {index} produced no result",
                            "Every case must produce exactly one result. " + FORGED_DETAIL)
    unknown = [key for key in results if not (isinstance(key, int) and 0 <= key < case_count)]
    if unknown:
        return Rejected(f"results for cases that do not exist ({unknown[0]!r})", FORGED_DETAIL)
    ordered = []
    for index in range(case_count):
        result = results[index]
        if not isinstance(result, dict):
            return Rejected(f"case {index} produced a {type(result).__name__}, not a result", FORGED_DETAIL)
        problem = _plain_problem(result)
        if problem:
            return Rejected(f"case {index}: {problem}",
                            "Return a plain torch.Tensor of the inputs' dtype, not a Tensor subclass.")
        ordered.append(result)
    return ordered


def _plain_problem(value, depth: int = 0, seen: set[int] | None = None) -> str | None:
    """Why `value` (a result as loaded with weights_only=True) is not plain data, or None.

    Each list and dict is looked at once, however often it is shared: a result that holds
    one small list sixteen times, ten levels down, has 16**10 paths (a learner's file that
    reached the harness's results made the walk take hours)."""
    import torch

    if depth > MAX_DEPTH:
        return "a result nested too deeply"
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor:
            return f"a Tensor subclass ({type(value).__name__}) crossed back"
        if value.layout != torch.strided:
            return f"a {value.layout} tensor crossed back"
        return None
    if not isinstance(value, (dict, list, tuple)):
        return None
    seen = set() if seen is None else seen
    if id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, dict):
        if value.get("type") == "Tensor":
            problem = _record_problem(value)
            if problem:
                return problem
        items: Iterable = value.values()
    else:
        items = value
    for item in items:
        problem = _plain_problem(item, depth + 1, seen)
        if problem:
            return problem
    return None


def _record_problem(record: dict) -> str | None:
    """An exported tensor record must describe its own tensor: a subclass can lie about dtype or shape."""
    import torch

    tensor = record.get("tensor")
    if not isinstance(tensor, torch.Tensor):
        return "a tensor record without its tensor"
    if record.get("dtype") != str(tensor.dtype):
        return (f"returned a tensor that declares dtype {record.get('dtype')} but holds "
                f"{tensor.dtype} (a Tensor subclass lying about its dtype?)")
    if list(record.get("shape") or []) != list(tensor.shape):
        return (f"returned a tensor that declares shape {record.get('shape')} but holds "
                f"{list(tensor.shape)} (a Tensor subclass lying about its shape?)")
    return None
