"""What can end a quiz or a course from outside its loop: its output failing, SIGTERM, SIGHUP."""

import contextlib
import io
import sys
from collections.abc import Callable
from typing import TextIO

from tutor.cli.common import make_console
from tutor.cli.exits import drop_stdout, on_sigterm


class QuizOutput:
    """The quiz's stdout. A write that fails (the reader of a pipe went away, a full disk, a
    closed terminal) is remembered and everything after it is dropped, so the quiz can end
    and save its record instead of dying mid-print."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                return self.stream.write(text)
            except OSError as err:
                self.error = err
                drop_stdout()  # what is still buffered goes nowhere
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as err:
                self.error = err
                drop_stdout()

    def __getattr__(self, name: str) -> object:  # isatty, encoding, fileno...: the stream's
        return getattr(self.stream, name)


class GuardedInput:
    """A stream whose ``readline`` is another function; everything else is the stream's."""

    def __init__(self, stream: TextIO, readline: Callable[..., str]) -> None:
        self.stream, self.readline = stream, readline

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP while the quiz waited for an answer: it ends as after Ctrl-C."""


class QuizSession:
    """What can end a quiz from outside its loop: its output failing, SIGTERM, SIGHUP (the
    terminal was closed). Each ends it at the next prompt, with the record saved; a signal
    arriving while the student is typing ends the wait at once, and with ``at_once`` (the
    quiz) a signal while an answer is judged too; never while the record is written."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self, at_once: bool = False, plain: bool = False) -> None:
        self.at_once = at_once
        # no stdout at all (>&-): a console on nothing, that cannot fail
        self.output = QuizOutput(sys.stdout if sys.stdout is not None else io.StringIO())
        self.console = make_console(file=self.output, plain=plain)
        self.console.input = self.guard(self.console.input)  # type: ignore[method-assign]
        self.signal: int | None = None
        self.ended: str | None = None  # "output-failed" when this session ended the quiz so
        self.waiting = False
        self.saving = False  # writing the record: a signal must not cut it short

    def guard(self, read: Callable[..., str]) -> Callable[..., str]:
        """``read``, but ending the quiz first when something outside it has."""

        def guarded(*args: object, **kwargs: object) -> str:
            self.stop_if_signalled()
            if self.output.error is not None:
                self.ended = "output-failed"
                raise EOFError  # nobody sees the questions: end as at the end of input
            self.waiting = True
            try:
                return read(*args, **kwargs)
            finally:
                self.waiting = False

        return guarded

    def stop_if_signalled(self) -> None:
        if self.signal is not None:
            raise Stopped

    def how_it_ended(self, ended: str) -> str:
        """The quiz loop's word for its end, or the cause this session knows better: a signal
        (a closed terminal ends the input, ctrl-d, and sends SIGHUP at the same moment), or the
        output failing."""
        if self.signal is not None and ended != "finished":
            import signal

            return signal.Signals(self.signal).name.lower()  # "sigterm", "sighup"
        return self.ended or ended

    def saving_now(self, ended: str) -> str:
        """The record is about to be written: a signal now waits until it is (no cutting it
        short); the word for how the quiz ended, as ``how_it_ended``."""
        self.saving = True
        return self.how_it_ended(ended)

    def on_signal(self, signum: int, frame: object) -> None:
        self.signal = signum
        # reading an answer (or, at_once, judging one): stop now; else at the next prompt
        if self.waiting or (self.at_once and not self.saving):
            self.stop_if_signalled()

    def guard_input(self, stream: TextIO) -> TextIO:
        """A piped stdin whose every line is read through ``guard``."""
        return GuardedInput(stream, self.guard(stream.readline))  # type: ignore[return-value]

    @contextlib.contextmanager
    def signals(self):  # type: ignore[no-untyped-def]
        """Catch SIGTERM and SIGHUP for the quiz and the saving of its record. A signal that
        was ignored when attn-tutor started (``nohup``) stays ignored; ``terminable``'s
        SIGTERM handler gives way to this one for the session."""
        import signal

        old = {}
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            if number is None:  # Windows has no SIGHUP
                continue
            with contextlib.suppress(ValueError):  # only the main thread may set handlers
                if signal.getsignal(number) in (signal.SIG_DFL, on_sigterm):
                    old[number] = signal.signal(number, self.on_signal)
        try:
            yield
        finally:
            for number, handler in old.items():
                signal.signal(number, handler)
