"""The walls around a student's file when ``check-code`` checks a class folder.

Two halves. The parent's: which walls this machine allows (``unshare`` for a network and process
namespace of its own; Landlock, the Linux kernel's unprivileged file-access rules), asked once.
The child's: ``enter``, called first thing in the child, before the student's file is read:
resource limits (address space, CPU seconds, file size, no core files), each with its hard limit
lowered too so the student's code cannot raise it back; then Landlock rules, so that nothing
outside the child's own empty working folder can be written, created or removed, no TCP
connection made or port bound, and no signal sent to a process outside it; last a seccomp filter,
so that it starts no process of its own (threads are allowed).

Standard library only (ctypes for the three Landlock system calls): the child imports this
before numpy, and ``--help`` never imports it.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass

UNSHARE = ("unshare", "-rnpfm", "--kill-child")  # own user, network, process, mount namespaces


@dataclass(frozen=True)
class Walls:
    """What the parent asks of each child: limits in bytes and seconds, and how to start it."""

    memory: int  # bytes of address space (RLIMIT_AS)
    cpu: int  # CPU seconds (RLIMIT_CPU), the --timeout rounded up and one more
    fsize: int  # bytes any file it writes may grow to (RLIMIT_FSIZE)
    unshare: bool  # started under ``unshare -rnpfm --kill-child``
    landlock: int  # the kernel's Landlock ABI (0: none)
    space: int  # bytes its working folder holds, all files together (a tmpfs; with unshare)
    no_fork: str = ""  # the machine whose seccomp filter refuses new processes ("": none)


FSIZE = 16 * 1024 * 1024  # bytes: more than any honest attention() writes
SPACE = 64 * 1024 * 1024  # bytes of its working folder: many files of FSIZE cannot fill a disk


@functools.cache
def unshare_works() -> str | None:
    """None when ``unshare -rnpfm --kill-child`` runs here, else why not (one line)."""
    try:
        done = subprocess.run(
            [*UNSHARE, "true"], capture_output=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as err:
        return f"unshare cannot be run ({type(err).__name__})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"unshare is not permitted here ({said[-1] if said else f'exit {done.returncode}'})"
    return None


@functools.cache
def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers, 0 when it has none (or not Linux)."""
    if not sys.platform.startswith("linux"):  # the system call numbers are Linux's
        return 0
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def walls(memory: int, timeout: float) -> Walls:
    """The walls this machine allows, for a memory cap and a --timeout; a ``TutorError`` where
    there are none to put up (Windows has no resource limits)."""
    if os.name != "posix":
        from tutor.core.errors import TutorError

        raise TutorError("checking a class folder needs Linux or macOS (resource limits)")
    return Walls(
        memory=memory,
        cpu=int(timeout) + 2,  # the wall clock ends it first; this stops a CPU-bound child too
        fsize=FSIZE,
        unshare=unshare_works() is None,
        landlock=landlock_abi(),
        space=SPACE if unshare_works() is None else 0,
        no_fork=seccomp_machine(),
    )


def missing(w: Walls) -> list[str]:
    """A line for each wall this machine does not allow, said once in the output."""
    out = []
    if not w.unshare:
        why = unshare_works()
        net = (
            "TCP is still blocked by Landlock"
            if w.landlock >= 4
            else "the students' files can reach the network"
        )
        out.append(f"no namespaces: {why}; {net}; a process that leaves the process group "
                   "is ended only while it still names its working folder; and its working "
                   "folder's total size is not capped")  # fmt: skip
    if not w.no_fork:
        out.append(
            "no seccomp filter for this machine: a student's file can start processes (they "
            "are ended with it)"
        )
    if w.landlock == 0:
        out.append(
            "no Landlock in this kernel: a student's file can write wherever you can "
            "(its working folder is still a fresh empty one)"
        )
    return out


def describe(w: Walls) -> dict[str, object]:
    """The walls as JSON-ready data (``check-code DIR --json``)."""
    return {
        "memory_bytes": w.memory,
        "cpu_seconds": w.cpu,
        "file_size_bytes": w.fsize,
        "namespaces": w.unshare,
        "landlock_abi": w.landlock,
        "folder_bytes": w.space or None,
        "no_new_processes": bool(w.no_fork),
    }


# --- the child's half -------------------------------------------------------------------------

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_PR_SET_NO_NEW_PRIVS = 38
# what a write is, by ABI: write, remove, make (char, dir, file, socket, fifo, block, link); then
# refer (2), truncate (3)
_WRITES = {1: 0b1_1111_1111_0010, 2: 0b11_1111_1111_0010, 3: 0b111_1111_1111_0010}
_NET = 0b11  # bind and connect over TCP (ABI 4)
_SCOPES = 0b11  # abstract unix sockets and signals outside the domain (ABI 6)


def enter(
    memory: int, cpu: int, fsize: int, writable: str, abi: int, space: int = 0, no_fork: str = ""
) -> None:
    """Put the walls up around this process and all it starts: a tmpfs of ``space`` bytes on
    ``writable`` (in a mount namespace of its own: ``space`` is 0 without one), the limits,
    Landlock (writes only under ``writable``, and ``/dev/null``), then a seccomp filter that
    refuses any new process (threads stay allowed) on the ``no_fork`` machine. Raises OSError
    when a wall that the parent found cannot be put up."""
    import resource

    if space:
        _tmpfs(writable, space)
    for limit, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, fsize),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            if sys.platform.startswith("linux"):  # macOS refuses some: its limits are looser
                raise
    if abi > 0:
        _landlock(writable, abi)
    if no_fork:
        _no_new_processes(no_fork)


def _tmpfs(folder: str, space: int) -> None:
    """Mount a tmpfs of ``space`` bytes on ``folder`` (no devices, no set-uid, no programs run
    from it) and enter it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    flags = ctypes.c_ulong(0x2 | 0x4 | 0x8)  # MS_NOSUID | MS_NODEV | MS_NOEXEC
    options = f"size={space},mode=700".encode()
    if libc.mount(b"tmpfs", folder.encode(), b"tmpfs", flags, options) < 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {folder}")
    os.chdir(folder)  # the cwd was the folder under the mount


def _landlock(writable: str, abi: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    writes = _WRITES[min(abi, 3)]
    net, scopes = (_NET if abi >= 4 else 0), (_SCOPES if abi >= 6 else 0)
    attr = (ctypes.c_uint64 * 3)(writes, net, scopes)
    size = 8 * (3 if abi >= 6 else 2 if abi >= 4 else 1)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    try:
        for path, allowed in ((writable, writes), ("/dev/null", 0b10 | (writes & 1 << 14))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = PathBeneath(allowed, fd)
                if libc.syscall(_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


# seccomp: fork, vfork and clone without CLONE_THREAD refused (EPERM); clone3, whose flags a
# filter cannot read, said to be missing (ENOSYS: the C library falls back to clone); another
# architecture's calls, and x32's, refused outright
_SYSCALLS = {  # machine: (audit arch, fork, vfork, clone, clone3); -1: the machine has none
    "x86_64": (0xC000003E, 57, 58, 56, 435),
    "aarch64": (0xC00000B7, -1, -1, 220, 435),
}
_CLONE_THREAD = 0x10000


def seccomp_machine() -> str:
    """This machine's name when the seccomp filter knows its system calls, else ""."""
    import platform

    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return machine if sys.platform.startswith("linux") and machine in _SYSCALLS else ""


def _no_new_processes(machine: str) -> None:
    import ctypes

    arch, fork, vfork, clone, clone3 = _SYSCALLS[machine]
    allow, kill = 0x7FFF0000, 0x80000000  # SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS
    eperm, enosys = 0x50000 | 1, 0x50000 | 38  # SECCOMP_RET_ERRNO | errno
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    # (code, label if true, label if false, k); a label is the index of a ret below
    prog: list[tuple[int, str | int, str | int, int]] = [
        (ld, 0, 0, 4),  # the architecture
        (jeq, 0, "kill", arch),
        (ld, 0, 0, 0),  # the call's number
        (jge, "eperm", 0, 0x40000000),  # x32 numbers
        (jeq, "enosys", 0, clone3),
        (jeq, "eperm", 0, fork),
        (jeq, "eperm", 0, vfork),
        (jeq, 0, "allow", clone),
        (ld, 0, 0, 16),  # clone's flags (the low half of its first argument)
        (jset, "allow", "eperm", _CLONE_THREAD),
    ]
    rets = {"allow": allow, "eperm": eperm, "enosys": enosys, "kill": kill}
    at = {name: len(prog) + i for i, name in enumerate(rets)}

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]  # fmt: skip

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    def jump(i: int, to: str | int) -> int:
        return at[to] - i - 1 if isinstance(to, str) else to

    code = [
        Filter(c, jump(i, t), jump(i, f), k & 0xFFFFFFFF) for i, (c, t, f, k) in enumerate(prog)
    ]
    code += [Filter(ret, 0, 0, k) for k in rets.values()]
    table = (Filter * len(code))(*code)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    program = Program(len(code), table)
    if libc.prctl(22, 2, ctypes.byref(program), 0, 0) < 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
