"""Join PDFs into one file as they come, holding one of them in memory at a time.

A class's answer keys are compiled one student at a time (typst holds a whole document); pypdf's
``PdfWriter.append`` then kept every student's objects until the end, about 1.3 MB a student
(1,000 students: 1.4 GB). Here each PDF is read with pypdf, the objects its pages and its
outline reach are renumbered past the last PDF's and written out at once, and only their file
offsets are kept; the catalog, the page tree above each PDF's own and the outline above each
PDF's own are written at the end. Each PDF's outline hangs under an entry of its own (a
student's name), so the class's bookmarks read student by student.

The objects a PDF's catalog alone reaches (typst's tagging structure, its XMP metadata) are
left out: they describe one document, not the joined one.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from tutor.core.errors import TutorError
from tutor.core.install import install_command

_CATALOG, _PAGES, _OUTLINES = 1, 2, 3  # the joined file's own objects


def reader(data: bytes):  # type: ignore[no-untyped-def]
    """A pypdf reader of ``data``; pypdf missing is said as the pdf extra's install."""
    try:
        from pypdf import PdfReader
    except ImportError:
        raise TutorError(
            "a PDF in parts (a class, or a long key) needs pypdf, part of the pdf extra: "
            f"{install_command('pdf')}"
        ) from None
    return PdfReader(io.BytesIO(data))


class Joiner:
    """``add`` PDFs in order, then ``close``: ``out`` holds them as one PDF, page after page."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.start = out.tell()
        self.offsets: list[int] = []  # of objects 1, 2, …
        self.next = _OUTLINES + 1
        self.kids: list[int] = []  # each PDF's own page tree, under ours
        self.pages = 0
        self.items: list[dict] = []  # each PDF's outline entry (its title, first page, children)
        self.info: int | None = None
        out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")

    def _number(self) -> int:
        self.next += 1
        return self.next - 1

    def add(self, pdf, title: str) -> int:  # type: ignore[no-untyped-def]
        """Append one PDF's pages (``pdf``, a ``reader``; and its outline, under an entry called
        ``title``); the number of pages it had."""
        from pypdf.generic import IndirectObject, NameObject

        catalog = pdf.trailer["/Root"].get_object()
        numbers: dict[int, int] = {}  # its object numbers → ours
        queue: list[int] = []

        def ours(ref: IndirectObject) -> IndirectObject:
            if ref.idnum not in numbers:
                numbers[ref.idnum] = self._number()
                queue.append(ref.idnum)
            return IndirectObject(numbers[ref.idnum], 0, None)  # type: ignore[arg-type]

        tree = catalog.raw_get("/Pages")
        self.kids.append(ours(tree).idnum)
        outline = catalog.raw_get("/Outlines") if "/Outlines" in catalog else None
        item: dict = {"title": title, "count": 0}
        if outline is not None:
            ours(outline)
        if self.info is None and "/Info" in pdf.trailer:
            self.info = ours(pdf.trailer.raw_get("/Info")).idnum
        while queue:
            old = queue.pop(0)
            obj = pdf.get_object(old)
            new = _copy(obj, ours)
            if old == tree.idnum:
                new[NameObject("/Parent")] = IndirectObject(_PAGES, 0, None)  # type: ignore[arg-type]
            if outline is not None and old == outline.idnum:  # becomes this PDF's entry
                item.update(number=numbers[old], entries=new)
                continue
            self._write(numbers[old], new)
        count = len(pdf.pages)
        first = pdf.pages[0].indirect_reference
        item["first"] = numbers[first.idnum]
        self.items.append(item)
        self.pages += count
        return count

    def _write(self, number: int, obj) -> None:  # type: ignore[no-untyped-def]
        while len(self.offsets) < number:
            self.offsets.append(0)
        self.offsets[number - 1] = self.out.tell() - self.start
        self.out.write(f"{number} 0 obj\n".encode())
        obj.write_to_stream(self.out)
        self.out.write(b"\nendobj\n")

    def close(self) -> None:
        """The catalog, the page tree, the outline and the cross-reference table."""
        from pypdf.generic import (
            ArrayObject,
            DictionaryObject,
            IndirectObject,
            NameObject,
            NullObject,
            NumberObject,
            TextStringObject,
        )

        def ref(n: int) -> IndirectObject:
            return IndirectObject(n, 0, None)  # type: ignore[arg-type]

        def name(text: str) -> NameObject:
            return NameObject(text)

        numbered = [it if "number" in it else {**it, "number": self._number()} for it in self.items]
        for k, it in enumerate(numbered):
            entry = DictionaryObject()
            old = it.get("entries") or DictionaryObject()
            for key in ("/First", "/Last"):
                if key in old:
                    entry[name(key)] = old.raw_get(key)
            if "/Count" in old:  # closed: the student's own headings fold under their name
                entry[name("/Count")] = NumberObject(-abs(int(old["/Count"])))
            entry[name("/Title")] = TextStringObject(it["title"])
            entry[name("/Parent")] = ref(_OUTLINES)
            if k:
                entry[name("/Prev")] = ref(numbered[k - 1]["number"])
            if k + 1 < len(numbered):
                entry[name("/Next")] = ref(numbered[k + 1]["number"])
            entry[name("/Dest")] = ArrayObject(
                [ref(it["first"]), name("/XYZ"), NullObject(), NullObject(), NullObject()]
            )
            self._write(it["number"], entry)
        outlines = DictionaryObject(
            {
                name("/Type"): name("/Outlines"),
                name("/First"): ref(numbered[0]["number"]),
                name("/Last"): ref(numbered[-1]["number"]),
                name("/Count"): NumberObject(len(numbered)),
            }
        )
        pages = DictionaryObject(
            {
                name("/Type"): name("/Pages"),
                name("/Kids"): ArrayObject([ref(k) for k in self.kids]),
                name("/Count"): NumberObject(self.pages),
            }
        )
        catalog = DictionaryObject(
            {
                name("/Type"): name("/Catalog"),
                name("/Pages"): ref(_PAGES),
                name("/Outlines"): ref(_OUTLINES),
            }
        )
        for number, obj in ((_CATALOG, catalog), (_PAGES, pages), (_OUTLINES, outlines)):
            self._write(number, obj)
        size = self.next
        while len(self.offsets) < size - 1:  # numbers given out but never written
            self.offsets.append(0)
        xref = self.out.tell() - self.start
        lines = [f"xref\n0 {size}\n", "0000000000 65535 f \n"]
        lines += [f"{at:010d} 00000 n \n" for at in self.offsets]
        self.out.write("".join(lines).encode())
        info = f"/Info {self.info} 0 R " if self.info is not None else ""
        trailer = f"trailer\n<< /Size {size} /Root {_CATALOG} 0 R {info}>>\nstartxref\n{xref}\n"
        self.out.write(trailer.encode() + b"%%EOF\n")


def _copy(obj, ours):  # type: ignore[no-untyped-def]
    """``obj`` with every reference to another object made one of ours (``ours``)."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject

    if isinstance(obj, IndirectObject):
        return ours(obj)
    if isinstance(obj, StreamObject):
        new = obj.__class__()
        new._data = obj._data  # the stream's bytes as stored (still compressed)
        for key, value in obj.items():
            new[key] = _copy(value, ours)
        return new
    if isinstance(obj, DictionaryObject):
        return DictionaryObject({key: _copy(value, ours) for key, value in obj.items()})
    if isinstance(obj, ArrayObject):
        return ArrayObject([_copy(value, ours) for value in obj])
    return obj
