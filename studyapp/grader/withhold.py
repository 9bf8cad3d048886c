"""The grader's oracle, withheld from learner code in the child that runs it.

A forked child is a copy of the worker, which holds every drill: its reference code (the
oracle, the known mistakes re-enacted, the same-dtype references) and, once a drill has been
graded, its public cases' expected outputs. Learner code reaches all of it without reading a
file: through `sys.modules`, `gc.get_objects()`, `object.__subclasses__()`, or the frames
above its own call (`sys._getframe(1).f_locals["self"]` is the drill running the case). So,
before learner code runs, the child takes from its copy of the worker's memory (the worker
keeps its own) what only the judge needs:

- every function of the kernels package but those that run a drill's cases has its code
  replaced by a stub that records the call and raises `OracleWithheld` (the code is freed, so
  it cannot be got back); a call from learner code is reported, and the verdict says so, even
  when that code caught the refusal;
- whatever a drill keeps on its cases (expected outputs, the known mistakes' outputs, checks
  worked out for earlier results) is dropped;
- the source lines a traceback once cached (`linecache`) are forgotten.

What runs the cases is found by name (`Withholding.build`): from each drill's `run_case` and
`entry`, every kernels function named in their code, and in the code of those, and so on, with
dunder methods (called implicitly) and every method of a kernels class they name (a function
mode or dispatch mode that torch calls back), but a drill's own class, which holds the judge
too. A function the cases need but this search missed is withheld by mistake: the harness's
call is told apart from the learner's (its caller is kept code), and the verdict is the
grader's error, never the learner's; `tests/test_grader_oracle.py` grades every drill's
reference through the child.

What this cannot withhold: torch itself (`F.scaled_dot_product_attention` is allowed where the
drill allows fused calls, and watched where it does not), and the bytes of freed objects that a
reader of raw memory (ctypes, /proc/self/mem) could still find in the child's address space.
Without Landlock ("files") the kernels' source files are readable too (see `confine`).
"""

from __future__ import annotations

import gc
import linecache
import sys
import types
from collections.abc import Iterable

HANDLER = "__studyapp_oracle_withheld__"
"""The global name, set in each kernels module's namespace in the child, that stubs call."""
NEVER_KEPT = frozenset({"oracle", "_truth", "_expected", "judge", "check_case"})
"""Names never kept whatever names them: the judge's own entry points (a safety net should a
run-side name reach the judge's code)."""
RUN_SIDE_ROOTS = ("run_case", "entry")
"""What the child's harness calls on a drill (`child.evaluate`)."""
CONTAINER_DEPTH = 3


class OracleWithheld(RuntimeError):
    """Raised by a function of the grader's that learner code may not run."""


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    """`code` and every code object nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _functions_in(value: object, depth: int = 0) -> Iterable[object]:
    """The functions and classes in a module-level value (a function, a class, a container)."""
    if isinstance(value, (types.FunctionType, type)):
        yield value
    elif isinstance(value, (staticmethod, classmethod)):
        yield value.__func__
    elif isinstance(value, property):
        yield from (f for f in (value.fget, value.fset, value.fdel) if f is not None)
    elif depth < CONTAINER_DEPTH and isinstance(value, dict):
        for item in list(value.values()):
            yield from _functions_in(item, depth + 1)
    elif depth < CONTAINER_DEPTH and isinstance(value, (list, tuple, set, frozenset)):
        for item in list(value):
            yield from _functions_in(item, depth + 1)


_STUBS: dict[int, types.CodeType] = {}


def _stub_code(free: int) -> types.CodeType:
    """The code of a function that raises `OracleWithheld` through `HANDLER`, with `free` free
    variables (a function's code can only be replaced by one with as many as its closure)."""
    if free not in _STUBS:
        names = [f"_cell{i}" for i in range(free)]
        lines = ["def _outer():"] + [f"    {name} = None" for name in names]
        lines += ["    def withheld(*args, **kwargs):"]
        if names:
            lines += [f"        ({', '.join(names)},)"]
        lines += [f"        raise {HANDLER}()", "    return withheld"]
        namespace: dict = {}
        exec(compile("\n".join(lines), "<withheld>", "exec"), namespace)  # noqa: S102 - our own text
        _STUBS[free] = namespace["_outer"]().__code__
    return _STUBS[free]


def _stub_for(function: types.FunctionType) -> types.CodeType:
    code = _stub_code(len(function.__code__.co_freevars)).replace(co_name=function.__name__)
    if sys.version_info >= (3, 11):
        code = code.replace(co_qualname=function.__qualname__)
    return code


class Withholding:
    """What a child withholds, worked out once in the worker (`build`) and applied in each child
    (`apply`) before learner code; then `learner_calls` and `harness_calls` say who asked for it."""

    def __init__(self, stubs: list[tuple[types.FunctionType, types.CodeType]], kept_codes: frozenset[int]):
        self._stubs = stubs
        self._kept_codes = kept_codes
        """ids of the code objects the harness runs (the kept functions' and what they nest)."""
        self.learner_calls: list[str] = []
        self.harness_calls: list[str] = []
        self._entry_codes: set[int] = set()
        """ids of the stubs the learner's entry is (`note_entry`)."""

    @property
    def withheld(self) -> list[str]:
        """Qualified names of the functions withheld (for tests and `doctor`)."""
        return sorted({function.__qualname__ for function, _ in self._stubs})

    @classmethod
    def build(cls, package: str, drills: Iterable[object]) -> Withholding:
        """From what is alive now: every function of `package` (and its submodules) is withheld,
        but the ones that run `drills`' cases."""
        prefix = package + "."

        def ours(obj: object) -> bool:
            module = getattr(obj, "__module__", None)
            return isinstance(module, str) and (module == package or module.startswith(prefix))

        functions: list[types.FunctionType] = []
        classes: dict[str, list[type]] = {}
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType and ours(obj):
                functions.append(obj)
            elif issubclass(type(obj), type) and ours(obj):
                classes.setdefault(obj.__name__, []).append(obj)
        by_name: dict[str, list[types.FunctionType]] = {}
        for function in functions:
            by_name.setdefault(function.__name__, []).append(function)
        drill_classes = {klass for drill in drills for klass in type(drill).__mro__}
        modules = [module for name, module in list(sys.modules.items())
                   if module is not None and (name == package or name.startswith(prefix))]

        kept: dict[int, types.FunctionType] = {}
        work: list[types.FunctionType] = []
        named: set[str] = set()

        def keep(function: object) -> None:
            if (type(function) is types.FunctionType and ours(function) and id(function) not in kept
                    and function.__name__ not in NEVER_KEPT):
                kept[id(function)] = function
                work.append(function)

        def keep_class(klass: type) -> None:
            for base in klass.__mro__:
                if ours(base) and base not in drill_classes:
                    for value in list(vars(base).values()):
                        for function in _functions_in(value, CONTAINER_DEPTH):
                            keep(function)

        def name(text: str) -> None:
            if text in named:
                return
            named.add(text)
            for function in by_name.get(text, ()):
                keep(function)
            for klass in classes.get(text, ()):
                keep_class(klass)
            for module in modules:
                value = vars(module).get(text)
                if isinstance(value, (dict, list, tuple, set, frozenset)):
                    for found in _functions_in(value):
                        if isinstance(found, type):
                            keep_class(found)
                        else:
                            keep(found)

        for text in RUN_SIDE_ROOTS:
            name(text)
        for function in functions:
            if _is_dunder(function.__name__):
                keep(function)
        while work:
            for code in _codes(work.pop().__code__):
                for text in code.co_names:
                    name(text)
        kept_codes = frozenset(id(code) for function in kept.values() for code in _codes(function.__code__))
        stubs = [(function, _stub_for(function)) for function in functions if id(function) not in kept]
        return cls(stubs, kept_codes)

    def apply(self, drills: Iterable[object]) -> None:
        """In the child, before learner code: stub the withheld functions, drop what the drills
        keep on their cases, forget cached source lines. Raises when a function cannot be
        stubbed: learner code must not run with the oracle in reach."""
        for namespace in {id(f.__globals__): f.__globals__ for f, _ in self._stubs}.values():
            namespace[HANDLER] = self._refuse
        for function, stub in self._stubs:
            function.__code__ = stub
        for drill in drills:
            _forget_cases(vars(drill) if hasattr(drill, "__dict__") else {})
        linecache.clearcache()

    def note_entry(self, entry: object) -> None:
        """The learner's entry, before the harness calls it. Where it is a withheld function
        (`entry = sys.modules[...].sdpa_oracle`, bare, in a partial or as a bound method), the
        harness's call reaches the stub straight from the harness's own code: that call is the
        learner's use of the reference, not the harness needing code it withholds."""
        stubs = {id(stub) for _function, stub in self._stubs}
        seen: list[object] = []
        while entry is not None and len(seen) < 8 and not any(entry is s for s in seen):
            seen.append(entry)
            try:
                code = getattr(entry, "__code__", None)
                if id(code) in stubs:
                    self._entry_codes.add(id(code))
                    return
                entry = next((inner for name in ("func", "__func__", "__wrapped__")
                              if (inner := getattr(entry, name, None)) is not None), None)
            except BaseException:  # noqa: BLE001 - a property of the learner's own object
                return

    def _refuse(self) -> OracleWithheld:
        """Called by a stub: who called it (learner code, or the harness by mistake) is noted."""
        stub = sys._getframe(1)
        name = getattr(stub.f_code, "co_qualname", stub.f_code.co_name)
        caller = stub.f_back
        by_harness = (caller is not None and id(caller.f_code) in self._kept_codes
                      and id(stub.f_code) not in self._entry_codes)
        calls = self.harness_calls if by_harness else self.learner_calls
        if name not in calls and len(calls) < 20:
            calls.append(name)
        return OracleWithheld(f"{name} belongs to the grader and is withheld from submissions")


def _forget_cases(value: object, depth: int = 0) -> None:
    """Drop what the objects a drill keeps (its cases, in dicts and lists) hold in `extra`."""
    if depth > CONTAINER_DEPTH + 1:
        return
    if isinstance(value, dict):
        for item in list(value.values()):
            _forget_cases(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _forget_cases(item, depth + 1)
    else:
        extra = vars(value).get("extra") if hasattr(value, "__dict__") else None
        if isinstance(extra, dict):
            extra.clear()
