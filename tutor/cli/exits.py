"""The one error path: every failure of a command becomes one message on stderr and an exit
code (0 ok, 1 a bad lesson, sheet or answer, 2 a bad command line, 130 interrupted, 70 a bug)."""

import contextlib
import errno
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

from tutor.cli.common import EXIT_INPUT, EXIT_USAGE, make_console
from tutor.core.errors import TutorError, UsageError


def run_command(invoke: Callable[[], object]) -> int:
    """Run the command; turn every failure into one message on stderr and an exit code."""
    from typer.exceptions import Abort, Exit, TyperException

    err = None
    try:
        with terminable():
            rv = invoke()
        code = rv if isinstance(rv, int) else 0
        if sys.stdout is not None:  # None when stdout was closed (>&-)
            sys.stdout.flush()  # a full disk shows here, not in the interpreter's last flush
    except TutorError as e:
        err, code = str(e), EXIT_USAGE if isinstance(e, UsageError) else EXIT_INPUT
    except Exit as e:
        code = e.exit_code
    except TyperException as e:  # click's errors, vendored by typer: bad options and arguments
        usage = any(c.__name__ == "UsageError" for c in type(e).__mro__)
        if hasattr(e, "show"):
            e.show()
        else:
            err = str(e)
        code = 2 if usage else e.exit_code
    except Terminated:
        err, code = "terminated", 143  # 128 + SIGTERM, as a shell reports a process it ended
    except (Abort, KeyboardInterrupt, EOFError) as e:
        interrupted = isinstance(e, KeyboardInterrupt) or isinstance(
            e.__context__, KeyboardInterrupt
        )
        err, code = ("interrupted", 130) if interrupted else ("aborted", 1)
    except BrokenPipeError:  # the reader went away (| head): it had enough; say nothing
        code = _reader_gone()
    except SystemExit as e:  # click turns a broken pipe into exit 1; here it is one of ours
        if not isinstance(e.__context__, BrokenPipeError):
            raise
        code = _reader_gone()
    except OSError as e:
        if e.filename is not None:  # a path the system refused: too long, no permission...
            err, code = f"{e.filename}: {e.strerror or e}", 1
        elif e.errno in OUTPUT_ERRNOS:  # stdout itself: a full disk, a quota, a device error
            drop_stdout()
            err, code = f"cannot write the output: {e.strerror}", 1
        elif os.environ.get("ATTN_TUTOR_DEBUG"):
            raise
        else:
            err, code = _internal_error()
    except Exception:
        if os.environ.get("ATTN_TUTOR_DEBUG"):
            raise
        err, code = _internal_error()
    if err:
        from rich.text import Text

        from tutor.text import theme
        from tutor.text.words import visible

        # Text, not escaped markup: rich's escape() drops the backslash of "\[" and doubles a
        # trailing one, and messages quote paths and values as the user wrote them; a control
        # character in a file name is spelled out, not sent to the terminal
        message = Text.assemble(("error:", f"bold {theme.BAD}"), " ", visible(err, keep="\n"))
        console = make_console(stderr=True)
        # at a terminal, wrapped at words to its width (the terminal itself would break words);
        # a file or a pipe gets the message on one line, for grep
        console.print(message, soft_wrap=not console.is_terminal)
    return code


class Terminated(BaseException):
    """SIGTERM (``kill``, a shutdown, a time limit): the command stops where it is, and files
    it was writing are cleaned up as after Ctrl-C. Not an Exception: nothing catches it but
    ``run_command``."""


def on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def terminable():  # type: ignore[no-untyped-def]
    """SIGTERM raises ``Terminated`` while a command runs (the default would end the process
    without its cleanup). Left alone when it was ignored at start (``nohup``), off the main
    thread, or already handled (a Python caller's own handler)."""
    import signal

    old = None
    with contextlib.suppress(ValueError):  # only the main thread may set handlers
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            old = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _internal_error() -> tuple[str, int]:
    """The message and exit code of the bug being handled: where it happened, not how."""
    import traceback

    kind, _, tb = sys.exc_info()
    last = traceback.extract_tb(tb)[-1]
    err = (
        f"internal error ({kind.__name__ if kind else '?'} at {Path(last.filename).name}:"
        f"{last.lineno}). This is a bug in attn-tutor; please report it with the command "
        "you ran. Set ATTN_TUTOR_DEBUG=1 to see the traceback."
    )
    return err, 70


def _reader_gone() -> int:
    """Stdout was a pipe whose reader stopped reading (``| head``): every command stops there
    quietly, with exit code 0, as ripgrep and fd do, so ``set -o pipefail`` does not fail a
    pipeline whose reader simply had enough."""
    drop_stdout()  # what is still buffered goes nowhere, and the flush at exit succeeds
    return 0


def drop_stdout() -> None:
    """Stdout failed: point it at the null device, so the flush at exit does not fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (a test's capture): nothing is flushed at exit


# what the output spells instead of a character its encoding lacks (LANG=C, PYTHONIOENCODING=ascii)
PLAIN_SPELLING = {
    "√": "sqrt", "×": "x", "·": "*", "÷": "/", "−": "-", "≈": "~", "≤": "<=", "≥": ">=",
    "∞": "inf", "ᵀ": "^T", "…": "...", "–": "-", "—": "--", "→": "->", "←": "<-", "✓": "ok",
    "✗": "x", "‘": "'", "’": "'", "“": '"', "”": '"', "•": "*", "π": "pi",
}  # fmt: skip


def _plain_spelling(err: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each unencodable character as ASCII (√ as sqrt, é as e), else ?."""
    import unicodedata

    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        name = unicodedata.name(ch, "")
        if name.startswith("BOX DRAWINGS"):  # table borders: ─ │ and the corners between
            ends = name.rsplit(" ", 1)[-1]
            plain = {"HORIZONTAL": "-", "VERTICAL": "|"}.get(ends, "+")
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
        out.append(PLAIN_SPELLING.get(ch) or plain or "?")
    return "".join(out), err.end


def tolerant_streams() -> None:
    """Output in any encoding spells what it cannot show; input that is not valid text is read
    with replacement characters. Neither ever raises a UnicodeError."""
    import codecs

    codecs.register_error("attn-tutor-plain", _plain_spelling)
    for stream in (sys.stdout, sys.stderr):
        try:
            "√─é".encode(stream.encoding)
        except UnicodeEncodeError:
            stream.reconfigure(errors="attn-tutor-plain")  # type: ignore[union-attr]
        except (AttributeError, LookupError, TypeError):
            pass  # no stream, or not a text file (a test's capture)
    if sys.stdin is not None and getattr(sys.stdin, "errors", "replace") == "strict":
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
