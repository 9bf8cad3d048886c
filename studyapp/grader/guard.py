"""Work learner code may not take out of the harness's sight in the child.

The drills' watches (fused calls, autograd, memory, the device probe) see the thread and the
process they run in. A full score matrix computed in a forked process, or in a thread started
through a fresh copy of `_thread` (`_imp.create_builtin`, which `child.one_thread`'s replaced
starters do not reach), passed flash_attention. So, from the moment the learner's module runs:

- starting a process is refused (fork, exec, spawn, `subprocess`, `_posixsubprocess`), by an
  audit hook (`sys.addaudithook`: CPython raises these events from C, which no copy of a module
  gets round) and by replacing the one starter that raises none;
- a built-in module cannot be made again (`_imp.create_builtin`), so `_thread` and `_signal`
  stay as the child left them (every built-in is imported first, so importing `tracemalloc` or
  `faulthandler` still works);
- signal handlers, tracing and profiling are refused: each is handed the frame it interrupts or
  traces, a way into the harness's data beside the code;
- ctypes is refused (every `ctypes.*` audit event: loading a library, finding a symbol, calling a
  foreign function, reading or writing memory by address): through it libc's `pthread_create`
  ran autograd on a thread no watch sees, and libc's `fork` a process no audit event announces,
  and both passed attention_backward. No drill needs native code;
- no further audit hook may be added.

What this does not stop: learner code reading the harness's objects through its own frames or
the garbage collector (the parent's checks, `grading.harness_altered`, catch what leaves a trace
in the results; the README says what remains).
"""

from __future__ import annotations

import errno
import os
import sys

from studyapp.grader.confine import WITHOUT_ENV

ONE_PROCESS = ("drill code runs in one process: the grader watches it (for fused calls, autograd, "
               "memory), so work in a process of its own would go unseen")
REFUSED = "not allowed in drill code"
PROCESS_EVENTS = frozenset({"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
                            "os.system", "os.startfile", "subprocess.Popen", "pty.spawn"})
OTHER_EVENTS = frozenset({"sys.settrace", "sys.setprofile", "sys.addaudithook"})
NATIVE_EVENTS = "ctypes."
"""The prefix of every audit event ctypes raises (CPython raises them from C)."""
_TURNED_OFF = {n.strip() for n in os.environ.get(WITHOUT_ENV, "").split(",")}
PROCESSES_ALLOWED = "processes" in _TURNED_OFF
"""Tests of the sandbox's fallbacks turn the process wall off ("processes" in
STUDYAPP_GRADER_WITHOUT, read as the worker starts) to see what contains a process that got out."""
NATIVE_ALLOWED = "native" in _TURNED_OFF
"""Likewise "native" lets learner code use ctypes, for the tests that make raw syscalls to see what
the kernel's walls (seccomp, Landlock) stop on their own."""


for _name in sys.builtin_module_names:  # once, in the worker: every child inherits them, so a
    if _name not in sys.modules:  # first `import tracemalloc` works after `_imp.create_builtin` goes
        try:
            __import__(_name)
        except ImportError:
            pass


def install() -> None:
    """Guard the rest of this process's life (see the module's docstring)."""
    import _imp
    import signal

    def hook(event: str, _args: tuple) -> None:
        if event in PROCESS_EVENTS and not PROCESSES_ALLOWED:
            raise BlockingIOError(errno.EAGAIN, ONE_PROCESS)
        if event in OTHER_EVENTS or (event.startswith(NATIVE_EVENTS) and not NATIVE_ALLOWED):
            raise RuntimeError(f"{event}: {REFUSED}")

    def no_processes(*_args, **_kwargs):
        raise BlockingIOError(errno.EAGAIN, ONE_PROCESS)

    def no_handlers(*_args, **_kwargs):
        raise RuntimeError(f"signal handlers: {REFUSED}")

    def no_new_builtins(*_args, **_kwargs):
        raise ImportError(f"loading a built-in module now: {REFUSED}")

    for module in (signal, sys.modules.get("_signal")):
        for name in ("signal", "set_wakeup_fd", "siginterrupt"):
            if module is not None and hasattr(module, name):
                setattr(module, name, no_handlers)
    _imp.create_builtin = no_new_builtins  # the only way to a fresh `_thread` or `_signal`
    if not PROCESSES_ALLOWED:
        import _posixsubprocess

        _posixsubprocess.fork_exec = no_processes  # raises no audit event of its own
    sys.addaudithook(hook)
