"""Learner code may open IP sockets only. The filter refused AF_UNIX alone, so code in the child
could open an AF_VSOCK socket (a line to the hypervisor's host, which no network namespace or
Landlock rule governs), AF_NETLINK (the kernel's routing and audit interfaces), AF_ALG (the
kernel's crypto API, a known way into kernel bugs) or AF_PACKET. No drill needs any of them."""

from __future__ import annotations

import errno
import socket
import textwrap

import pytest
from grader_helpers import grade_limits
from test_grader_seccomp_gaps import run_bpf

from studyapp.grader import confine
from studyapp.grader.confine import Protection

pytest.importorskip("torch")

AF_VSOCK, AF_ALG, AF_NETLINK, AF_PACKET = 40, 38, 16, 17
REFUSED = (socket.AF_UNIX, AF_VSOCK, AF_ALG, AF_NETLINK, AF_PACKET, 3, 4, 5, 9, 31, 44, 45)
"""AF_UNIX, AF_VSOCK, AF_ALG, AF_NETLINK, AF_PACKET, AX25, IPX, APPLETALK, X25, BLUETOOTH, XDP, MCTP."""


@pytest.mark.parametrize("machine", sorted(confine._SECCOMP_ARCH))
def test_the_filter_lets_only_ip_sockets_be_made(machine):
    calls = confine._SECCOMP_ARCH[machine]
    allow, eacces = 0x7FFF0000, 0x50000 | errno.EACCES
    for abi in (0, 1, 7):
        program = confine.seccomp_program(calls, True, abi)
        for family in (socket.AF_INET, socket.AF_INET6):
            assert run_bpf(program, calls.audit_arch, calls.socket, family, socket.SOCK_STREAM) == allow
        for family in REFUSED:
            assert run_bpf(program, calls.audit_arch, calls.socket, family, socket.SOCK_STREAM) == eacces, family
            assert run_bpf(program, calls.audit_arch, calls.socket, family | 1 << 32) == eacces, family  # high half ignored


OPENS = textwrap.dedent("""
    import socket

    def add(a, b):
        seen = []
        for family in FAMILIES:
            try:
                socket.socket(family, socket.SOCK_DGRAM if family != 16 else socket.SOCK_RAW).close()
                seen.append(f"{family} opened")
            except PermissionError:
                pass
            except OSError as exc:  # not built into this kernel: EAFNOSUPPORT, EINVAL...
                if exc.errno in (13, 1):
                    seen.append(f"{family} {exc.errno}")
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        if seen:
            raise RuntimeError(", ".join(seen))
        return a + b
""")


def test_learner_code_opens_no_vsock_netlink_or_alg_socket(warm_fake_grader, tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(f"FAMILIES = {[AF_VSOCK, AF_NETLINK, AF_ALG]!r}\n" + OPENS)
    verdict = warm_fake_grader.grade("add", path, device="cpu", limits=grade_limits(timeout=10.0))
    if Protection.UNIX_SOCKETS.value not in verdict["sandbox"]["active"]:
        pytest.skip("no seccomp filter on this machine")
    assert verdict["status"] == "pass", (verdict["summary"], verdict.get("output"), verdict.get("detail"))
