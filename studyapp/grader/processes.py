"""Find and kill every process a submission left behind, even ones that left its session."""

from __future__ import annotations

import os
import signal
import time


def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: fields start after the last ')'
        fields = text[text.rindex(")") + 2:].split()
        parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(root: int) -> set[int]:
    """All processes below `root` (the worker is a subreaper, so orphans stay below it)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants(spare: frozenset[int] = frozenset(), deadline: float = 3.0) -> bool:
    """SIGKILL everything below this process except `spare` (and what is below those); reap it.

    Repeats until nothing is left, since a fork bomb may fork between a scan and a kill.
    Returns False if processes still remained after `deadline` seconds.
    """
    me = os.getpid()
    protected = set(spare)
    for pid in spare:
        protected |= descendants(pid)
    end = time.monotonic() + deadline
    while True:
        targets = descendants(me) - protected
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_zombies()
        if not targets:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
