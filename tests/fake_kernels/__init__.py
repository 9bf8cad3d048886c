"""A tiny drill ("add") that follows the grading contract, so the sandbox is tested on its own.

The real drills live in kernels/; this one keeps the grader's tests fast and independent of
how strict the real judges are. Loaded by the worker only when STUDYAPP_GRADER_KERNELS points here.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import torch


@dataclass
class Case:
    name: str
    payload: dict


def export(value):
    """Plain data for the parent: tensors by value, anything else by type name and repr."""
    if isinstance(value, torch.Tensor) and type(value) is torch.Tensor:
        return {"type": "Tensor", "tensor": value.detach().cpu().clone(), "dtype": str(value.dtype),
                "device": str(value.device), "shape": list(value.shape)}
    if isinstance(value, (tuple, list)):
        return {"type": type(value).__name__, "items": [export(v) for v in value]}
    return {"type": type(value).__name__, "repr": repr(value)[:200]}


@dataclass
class Drill:
    id: str = "add"
    title: str = "Add two tensors"
    tags: list = field(default_factory=lambda: ["tensors"])
    statement: str = "Write `add(a, b)` returning `a + b`."
    entry: str = "add"
    starter_path: pathlib.Path = pathlib.Path(__file__).parent / "starters" / "add.py"
    hints: list = field(default_factory=lambda: ["Use the + operator."])

    def make_cases(self, seed: int, device: str) -> list[Case]:
        cases = []
        for case_seed in (0, seed):
            g = torch.Generator().manual_seed(case_seed)
            a = torch.randn(3, 4, generator=g).to(device)
            b = torch.randn(3, 4, generator=g).to(device)
            cases.append(Case(f"seed {case_seed}", {"a": a, "b": b}))
        return cases

    def run_case(self, entry_obj, payload) -> dict:
        first = entry_obj(payload["a"], payload["b"])
        second = entry_obj(payload["a"], payload["b"])
        return {"output": export(first), "again": export(second),
                "inputs": {"a": export(payload["a"]), "b": export(payload["b"])}}

    def judge(self, cases, results, device) -> dict:
        errors = [r["error"] for r in results if "error" in r]
        if errors:
            e = errors[0]
            return {"status": "error", "summary": f"your code raised {e['type']}: {e['message']}",
                    "hint": "", "checks": []}
        checks = []
        for case, result in zip(cases, results):
            out = result["output"]
            if out.get("type") != "Tensor":
                checks.append({"name": "type", "tier": "core", "status": "fail",
                               "message": f"{case.name}: returned {out['type']}, expected a Tensor"})
                continue
            expected = case.payload["a"].cpu() + case.payload["b"].cpu()
            ok = out["shape"] == list(expected.shape) and torch.allclose(out["tensor"], expected)
            checks.append({"name": "values", "tier": "core", "status": "pass" if ok else "fail",
                           "message": "" if ok else f"{case.name}: values differ"})
        failed = [c for c in checks if c["status"] == "fail"]
        return {"status": "fail" if failed else "pass",
                "summary": failed[0]["message"] if failed else "all checks pass",
                "hint": self.hints[0] if failed else "", "checks": checks}


DRILLS = {"add": Drill()}
