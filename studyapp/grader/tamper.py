"""The harness and torch as the child found them, before the learner's code ran: which of their
functions that code rebound, and which of torch's process-wide settings it changed. The harness
exports what a call returned and left behind with its own functions; a file that swapped
`grading.export` (found in sys.modules), or patched `torch.Tensor.detach`, made an input it had
divided in place look untouched, and passed.

Runs in the child, beside the learner's code, so it raises the bar rather than closing the door:
the parent judges only data, and code that digs into the child's memory can forge that too.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

WATCHED_PACKAGES = ("studyapp_kernels", "studyapp.grader")
WATCHED_MODULES = ("torch", "torch.nn", "torch.nn.functional")
_ABSENT = object()
Entry = tuple[str, Any, Any, Any]
"""(where, namespace, name, value): a name of a namespace and what it held (`snapshot`)."""
_NAMES = object()
"""An entry's `attr` for a class's set of names (`snapshot`)."""


def snapshot() -> list[Entry]:
    """(where, namespace, name, value) of every function, class and module the harness's
    modules, torch's main ones, `torch.Tensor` and `torch.nn.Module` hold now."""
    entries: list[Entry] = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name in WATCHED_MODULES or name.startswith(WATCHED_PACKAGES)):
            continue
        namespace = vars(module)
        entries += [(name, namespace, attr, value) for attr, value in list(namespace.items())
                    if callable(value) or isinstance(value, types.ModuleType)]
    torch = sys.modules.get("torch")
    if torch is not None:
        for cls in (torch.Tensor, torch.nn.Module):
            namespace = cls.__dict__  # a live view: a name set on the class later shows in it
            entries += [(f"torch.{cls.__name__}", namespace, attr, value) for attr, value in list(namespace.items())]
            # and the names it has now: one added later shadows what the class inherits
            # (`torch.Tensor.clone` over TensorBase's, which export calls)
            entries.append((f"torch.{cls.__name__}", namespace, _NAMES, frozenset(namespace)))
    return entries


def rebound(entries: list[Entry]) -> list[str]:
    """The names (at most five) no longer holding what `snapshot` found there, unless torch
    rebound them itself: importing `torch.func` wraps `torch.manual_seed`, say."""
    found = []
    for where, namespace, attr, value in entries:
        if attr is _NAMES:
            found += [f"{where}.{name}" for name in sorted(set(namespace) - value)
                      if not _torchs_own(namespace.get(name))]
            continue
        now = namespace.get(attr, _ABSENT)
        if now is not value and not _torchs_own(now):
            found.append(f"{where}.{attr}")
    return found[:5]


def _torchs_own(value: object) -> bool:
    """Made by torch: its module is torch's and, for a function written in Python, so is the file
    of its code (a `__module__` alone is any string a learner's function is given)."""
    module = getattr(value, "__module__", None)
    if not (isinstance(module, str) and (module == "torch" or module.startswith("torch."))):
        return False
    torch = sys.modules.get("torch")
    folder = os.path.realpath(os.path.dirname(getattr(torch, "__file__", "") or "")) + os.sep

    def in_torch(path: object) -> bool:
        return isinstance(path, str) and os.path.realpath(path).startswith(folder)

    if isinstance(value, type):  # a class: found under its name in a module of torch's files
        home = sys.modules.get(module)
        return getattr(home, value.__name__, None) is value and in_torch(getattr(home, "__file__", None))
    code = getattr(value, "__code__", None)
    if code is None:
        return not isinstance(value, (types.FunctionType, types.MethodType))  # a builtin of torch's
    return in_torch(code.co_filename)


def settings() -> dict[str, object]:
    """torch's process-wide settings a drill has no business changing: in the learner's model
    they change every matmul and every tensor made after it (`set_float32_matmul_precision`
    turns TF32 on for all float32 matmuls on a GPU; `set_default_dtype` changes every factory)."""
    import torch

    return {
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
    }


def settings_changed(before: dict[str, object]) -> list[str]:
    """The settings (at most five) that differ from `before` now."""
    try:
        now = settings()
    except Exception:  # noqa: BLE001 - torch's own functions rebound: `rebound` names them
        return []
    return [name for name, value in before.items() if now.get(name) != value][:5]
