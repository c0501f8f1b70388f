"""Writing a file so that a crash or a full disk never leaves half of it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_file(path: Path, text: str | bytes, new: bool = False) -> None:
    """Write ``text`` where ``path`` says, as a user means it: through a symbolic link to the
    file it points at (the link stays a link), to a device or FIFO as it is (opened and written,
    never replaced by a file), and a regular file whole, keeping its mode (``replace_file``).
    ``new``: only when nothing is there (else ``FileExistsError``, atomically)."""
    target = Path(os.path.realpath(path))
    if not new and target.exists() and not target.is_file():  # /dev/null, a FIFO
        with open(target, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        return
    replace_file(target, text, new)


@contextlib.contextmanager
def locked(target: Path):  # type: ignore[no-untyped-def]
    """Hold an exclusive lock on ``target``'s lock file (``NAME.lock`` beside it) while a
    read-merge-replace of ``target`` runs, so two processes saving at once take turns and
    neither loses what the other wrote. Without ``fcntl`` (Windows) or a lock file that cannot
    be made (a read-only folder: the write fails and says so), it runs unlocked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        fd = os.open(target.with_name(target.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the fd closes, even on a crash
        yield
    finally:
        os.close(fd)


def replace_file(target: Path, text: str | bytes, new: bool = False) -> None:
    """Write ``text`` (or bytes, as they are: a PDF) to a new file beside ``target``, then
    rename it over ``target``: a full disk or a crash leaves the old file (or none), never a
    partial one. An old file's permissions are kept; a new one gets the usual ones (the umask's).
    ``new``: linked into place only if no file is there (``FileExistsError`` otherwise)."""
    import secrets
    import stat

    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:  # a name nobody else is using (O_EXCL), in the same folder (rename stays atomic)
        temporary = target.with_name(f".{target.name[:100]}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temporary, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with open(fd, "wb") if isinstance(text, bytes) else open(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        if new:
            os.link(temporary, target)  # fails, atomically, if a file appeared meanwhile
            os.unlink(temporary)
        else:
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def save(path: Path, text: str | bytes, force: bool = False) -> None:
    """Write a command's output to the file ``path`` (``write_file``): never over a folder, nor
    over a file without ``force``; a failure is a ``TutorError`` that names the file."""
    from tutor.core.errors import TutorError

    if path.is_dir():
        raise TutorError(f"{path} is a folder; give a file name to --output")
    if path.exists() and not force:
        raise TutorError(f"{path} already exists; use --force to overwrite it")
    try:  # through a link to the file it points at; a device or FIFO written as it is
        write_file(path, text)
    except OSError as err:
        raise TutorError(f"cannot write {path}: {err.strerror or err}") from None
