"""The command line: parse, call the library, print, and translate errors to exit codes.

One module per group of commands (``teach``, ``quiz``, ``export``, ``classroom``, ``author``);
``common`` holds what they share (the console factory, finding a lesson, writing output) and
``exits`` the one place that turns an error into a message and an exit code. The commands are
registered here, in the order ``--help`` lists them.

Heavy modules (sympy, numpy, the engine) are imported inside the commands that need them, so
``attn-tutor --help`` and ``attn-tutor list`` start quickly.
"""

import functools
import gc
import importlib
import sys
from typing import Any

# Importing typer and click makes tens of thousands of objects that the cyclic collector walks
# for nothing (about 5 ms of a command's start-up): it is off while they load, as it is for the
# whole run when the console script runs (``main``), and back as it was afterwards.
_collecting = gc.isenabled()
gc.disable()
try:
    import typer
    import typer.core

    from tutor.cli.common import make_console
    from tutor.cli.exits import run_command, tolerant_streams
finally:
    if _collecting:
        gc.enable()

__all__ = ["app", "main", "make_console"]

SETTINGS = {
    "name": "attn-tutor",
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}
HELP = (
    "Learn the arithmetic of self-attention by working it by hand.\n\n"
    "\b\n"  # (click: keep these lines as they are, so no command is broken at a hyphen)
    "New here? Start with:  attn-tutor learn\n"
    "  the course, stage by stage, from one dot product to grouped heads\n"
    "A walk one step a screen:  attn-tutor walk --pause"
)

# every command, in the order --help lists them: (its module in tutor.cli, its function there,
# app.command's settings). A run imports only its command's module (``app_for``).
COMMANDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "walk": ("teach", "walk", {}),
    "list": ("teach", "list_lessons", {}),
    "export": ("export", "export", {}),
    "quiz": ("quiz", "quiz", {}),
    "learn": ("quiz", "learn", {}),
    "progress": ("quiz", "progress", {}),
    "grade": ("classroom", "grade", {}),
    "autograder": ("classroom", "autograder", {}),
    "explain": ("teach", "explain", {}),
    "code": ("export", "code", {}),
    "check-code": ("classroom", "check_code", {}),
    "explore": ("teach", "explore", {}),
    "softmax": ("teach", "softmax", {"context_settings": {"ignore_unknown_options": True}}),
    "schema": ("author", "schema", {}),
    "check": ("author", "check", {}),
    "new": ("author", "new", {}),
    "variants": ("author", "variants", {}),
}


# the commands that work a lesson's arithmetic, and so import sympy (``list``, ``schema`` and
# ``progress`` do not): the console script imports it before it runs them (``main``)
EXACT = frozenset(COMMANDS) - {"list", "schema", "progress"}


def _register(app: typer.Typer, name: str) -> None:
    """Add the command ``name`` to ``app``, importing its module."""
    module, function, settings = COMMANDS[name]
    command = getattr(importlib.import_module(f"tutor.cli.{module}"), function)
    app.command(name, **settings)(command)


class TutorGroup(typer.core.TyperGroup):
    """The app's click group: every run, from a shell or a CliRunner, goes through
    ``run_command``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[no-untyped-def, override]
        tolerant_streams()
        code = run_command(
            lambda: super(TutorGroup, self).main(
                args, prog_name, complete_var, standalone_mode=False, **extra
            )
        )
        sys.exit(code)


def app_for(args: list[str]) -> typer.Typer:
    """The app to run ``args`` (``sys.argv[1:]``): when they start with a command's name, a
    group of that command alone. Typer turns every registered command into a click command
    before it parses anything (16 ms of 60 for ``list`` on a quiet machine, bench/README.md);
    a run needs one. Anything else (``--help``, no command, a misspelt one) gets the app."""
    if not args or args[0] not in COMMANDS:
        return _whole_app()
    one = typer.Typer(**SETTINGS)  # type: ignore[arg-type]
    one.callback()(_group)  # a group, as the app is: ``attn-tutor walk …``, not ``attn-tutor …``
    _register(one, args[0])
    one.info.cls = TutorGroup
    return one


@functools.cache
def _whole_app() -> typer.Typer:
    """The app with every command (``tutor.cli.app``): made, and its modules imported, when
    first asked for."""
    app = typer.Typer(help=HELP, no_args_is_help=True, **SETTINGS)  # type: ignore[arg-type]
    for name in COMMANDS:
        _register(app, name)
    app.info.cls = TutorGroup
    return app


def __getattr__(name: str) -> object:
    if name == "app":  # ``from tutor.cli import app``: the whole app, made on first use
        return _whole_app()
    raise AttributeError(f"module 'tutor.cli' has no attribute {name!r}")


def _group() -> None:
    """(the group of one command has no options of its own)"""


def _quiet_exit() -> None:
    """At interpreter exit: no collector pass over what sympy left alive."""
    gc.disable()
    gc.freeze()


def _import_sympy() -> None:
    """Import sympy here, near the bottom of the stack, as ``import sympy`` at a prompt does.

    CPython 3.11 keeps its frames in chunks of 16 KiB and frees a chunk as soon as the call
    that opened it returns. sympy's import nests some 150 frames deep; started from inside
    the command, a dozen frames of click further down, one of those boundaries fell where
    the import goes up and down all the time: about 740 chunks mapped and unmapped (28 from
    here), about 30 ms of CPU of ``walk cats-chase-mice`` (bench/README.md)."""
    import sympy  # noqa: F401


def main() -> None:
    """Console-script entry point.

    Importing sympy creates several hundred thousand long-lived objects, and the cyclic garbage
    collector walks them again and again while it loads and once more at exit, for nothing: a
    command's own work makes few reference cycles. So the collector is off for the run (``quiz``
    turns it back on for its session), and everything alive is frozen when the interpreter
    shuts down, which skips that last walk; exit handlers and file flushes still run. About a
    third of the time of ``walk cats-chase-mice``; see bench/bench.py.

    Only this entry point does that, and it puts the collector back as it found it when it
    returns: a Python caller (a notebook, a test) keeps a normal collector, and the freeze
    happens at the process's exit (an ``atexit`` handler), not before.
    """
    import atexit

    was_enabled = gc.isenabled()
    gc.disable()
    atexit.register(_quiet_exit)
    args = sys.argv[1:]
    if args and args[0] in EXACT and "--help" not in args:
        _import_sympy()
    try:
        app_for(args)()
    finally:
        if was_enabled:
            gc.enable()
