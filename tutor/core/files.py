"""Writing a file so that a crash or a full disk never leaves half of it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def replace_file(target: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``target``, then rename it over ``target``: a full
    disk or a crash leaves the old file (or none), never a partial one. An old file's
    permissions are kept; a new one gets the usual ones (the umask's)."""
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
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
