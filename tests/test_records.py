"""``tutor.core.records.record``: a frozen dataclass whose comparison, hash and repr are made
without compiling source (start-up, issue 43 item 6). Each case is declared twice, with
``@dataclass(frozen=True, …)`` and with ``@record(…)``, and must behave the same."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from tutor.core.records import record


def pair(**options: Any) -> tuple[type, type]:
    """The same class made by dataclass and by record (``options``: eq, slots)."""

    def body(deco: Any) -> type:
        @deco
        class Point:
            """A point."""

            x: Any
            y: Any = 0
            label: str = field(default="", compare=False)
            secret: str = field(default="s", repr=False)
            quiet: int = field(default=0, hash=False)
            kind: ClassVar[str] = "point"

        return Point

    return body(dataclass(frozen=True, **options)), body(record(**options))


NAN = math.nan
VALUES = [
    (1, 2),
    (1.0, 2),
    (NAN, NAN),
    ((1, [2]), "a"),
    ((), None),
]


OPTIONS = [{}, {"slots": True}, {"eq": False}, {"eq": False, "slots": True}]


def outcome(f: Any) -> Any:
    """What calling ``f`` gives, or the class of what it raises."""
    try:
        return f()
    except Exception as e:
        return type(e)


@pytest.mark.parametrize("options", OPTIONS)
def test_a_record_compares_hashes_and_shows_itself_as_a_dataclass_does(options: dict) -> None:
    want_cls, got_cls = pair(**options)
    for x, y in VALUES:
        for label, secret, quiet in (("", "s", 0), ("b", "t", 1)):
            want = want_cls(x, y, label, secret, quiet)
            got = got_cls(x, y, label, secret, quiet)
            assert repr(got) == repr(want)
            for other in (
                (x, y, "other", secret, quiet),
                (x, y, label, "other", quiet),
                (x, y, label, secret, 9),
                (x, 99, label, secret, quiet),
            ):
                assert (got == got_cls(*other)) == (want == want_cls(*other)), (x, y, other)
                assert (got != got_cls(*other)) == (want != want_cls(*other)), (x, y, other)
            assert (got == got) == (want == want)
            assert (got == (x, y)) == (want == (x, y))  # another class: never equal
            assert (got_cls.__hash__ is None) == (want_cls.__hash__ is None)
            if options.get("eq", True):  # by value: the same hash, or the same refusal
                assert outcome(lambda: hash(got)) == outcome(lambda: hash(want))  # noqa: B023
            else:  # by identity
                assert hash(got) == object.__hash__(got) and hash(want) == object.__hash__(want)


def test_the_same_instance_with_nan_is_equal_to_itself_and_another_is_not() -> None:
    """dataclass compares tuples of fields, and a tuple holding the same nan is equal."""
    want_cls, got_cls = pair()
    want, got = want_cls(NAN), got_cls(NAN)
    assert (got == got) is (want == want) is True
    assert (got == got_cls(float("nan"))) is (want == want_cls(float("nan"))) is False


def test_a_record_is_a_frozen_dataclass() -> None:
    want_cls, got_cls = pair(slots=True)
    got = got_cls(1, 2)
    assert dataclasses.is_dataclass(got)
    assert [f.name for f in dataclasses.fields(got)] == [
        f.name for f in dataclasses.fields(want_cls)
    ]
    assert got_cls.__match_args__ == want_cls.__match_args__
    assert dataclasses.replace(got, y=5) == got_cls(1, 5)
    assert dataclasses.asdict(got) == dataclasses.asdict(want_cls(1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del got.x  # type: ignore[misc]
    assert got_cls.__doc__ == "A point."
    assert got_cls.__eq__.__qualname__ == "pair.<locals>.body.<locals>.Point.__eq__"
    assert not hasattr(got, "__dict__")  # slots


def test_no_fields_and_one_field() -> None:
    @dataclass(frozen=True)
    class WantEmpty:
        pass

    @record
    class Empty:
        pass

    @dataclass(frozen=True)
    class WantOne:
        a: Any

    @record
    class One:
        a: Any

    assert (Empty() == Empty(), hash(Empty()), repr(Empty())) == (
        WantEmpty() == WantEmpty(),
        hash(WantEmpty()),
        repr(WantEmpty()).replace("WantEmpty", "Empty"),
    )
    assert hash(One(3)) == hash(WantOne(3)) == hash((3,))
    assert (One((1, 2)) == One((1, 2))) and One(1) != One(2)
    assert repr(One("x")) == "test_no_fields_and_one_field.<locals>.One(a='x')"


def test_a_mutable_record_is_not_hashable_and_a_recursive_repr_stops() -> None:
    @dataclass
    class WantBox:
        items: list

    @record(frozen=False)
    class Box:
        items: list

    box, want = Box([]), WantBox([])
    box.items.append(box)
    want.items.append(want)
    assert Box.__hash__ is None and WantBox.__hash__ is None
    assert repr(box) == repr(want).replace("WantBox", "Box")
    assert repr(box).endswith("Box(items=[...])")
    box.items = [1]  # mutable
    assert box == Box([1])


def test_a_records_own_repr_is_kept_and_its_own_eq_is_refused() -> None:
    @record
    class Shown:
        a: int

        def __repr__(self) -> str:
            return "shown"

    assert repr(Shown(1)) == "shown" and Shown(1) == Shown(1)
    with pytest.raises(TypeError, match="its own __eq__"):

        @record
        class Equal:
            a: int

            def __eq__(self, other: object) -> bool:
                return True
