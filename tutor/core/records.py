"""Frozen dataclasses that are cheaper to make: ``@record`` is ``@dataclass(frozen=True)``.

On Python 3.11 a dataclass compiles each method it writes from generated source, one ``exec``
each, when its module is imported: a frozen class with equality compiles six (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``). The 41 dataclasses
on the way to ``attn-tutor walk`` took about 18 ms of its start-up that way (bench/README.md).
``record`` lets ``dataclass`` write only what depends on the fields' order and defaults
(``__init__``) or on frozenness (``__setattr__``, ``__delattr__``), and gives the class
``__eq__``, ``__hash__`` and ``__repr__`` made from the fields' names without compiling
anything. They behave as dataclass's own: equal when of the same class with equal fields (in
``compare`` order), the hash of the same tuple, and the same text (``...`` for a recursive
repr). The class is a dataclass in every other way (``fields``, ``replace``, ``asdict``).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

C = TypeVar("C", bound=type)

__all__ = ["record"]


def record(
    cls: C | None = None, /, *, eq: bool = True, slots: bool = False, frozen: bool = True
) -> Any:
    """``@dataclass(frozen=frozen, eq=eq, slots=slots)``, with its comparison, hash and repr
    made without ``exec``. ``@record`` or ``@record(eq=False, slots=True)``."""

    def wrap(cls: C) -> C:
        own = cls.__dict__
        if eq and ("__eq__" in own or "__hash__" in own):
            raise TypeError(f"{cls.__qualname__}: a record with its own __eq__ or __hash__")
        made = dataclasses.dataclass(cls, frozen=frozen, eq=False, repr=False, slots=slots)
        fields = dataclasses.fields(made)
        if "__repr__" not in own:
            _put(made, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))
        if eq:
            _put(made, "__eq__", _eq(_values(tuple(f.name for f in fields if f.compare))))
            if frozen:  # as dataclass: frozen and equal by value, so hashed by value
                hashed = (f.name for f in fields if (f.compare if f.hash is None else f.hash))
                _put(made, "__hash__", _hash(_values(tuple(hashed))))
            else:  # equal by value but mutable: no hash
                made.__hash__ = None  # type: ignore[assignment]
        return made

    return wrap if cls is None else wrap(cls)


def _put(cls: type, name: str, fn: Callable[..., Any]) -> None:
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, fn)


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these fields of an instance (always a tuple, as dataclass compares)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        (name,) = names
        return lambda self: (getattr(self, name),)
    return lambda self: ()


def _eq(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
