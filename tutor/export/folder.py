"""A class's documents: one file per variant of a folder ``attn-tutor variants`` wrote, each
named after its variant (``export DIR --output OUT``), or each variant derived in turn for one
document of the whole class."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.core.errors import TutorError

if TYPE_CHECKING:  # the engine (and sympy) only when a folder is exported
    from tutor.core.engine import Derivation

    # a lesson file of the folder, who it is for and its variant id (None when it has none)
    Found = tuple[Path, str | None, str | None]
    # a variant's document: from its derivation, who it is for and its variant id
    Document = Callable[[Derivation, str | None, str | None], str | bytes]

# the file each variant's document is written to: the variant's name and this ending
SUFFIXES = {
    "md": ".md",
    "tex": ".tex",
    "sheet": "-sheet.yaml",
    "pdf": ".pdf",
    "typ": ".typ",
    "form": "-form.html",
}


def derived(found: Iterable[Found]) -> Iterator[tuple[Derivation, str | None, str | None]]:
    """Each lesson of the folder loaded and derived, one at a time (so a caller that compiles
    and lets go of each holds one in memory at a time)."""
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson

    for path, who, variant in found:
        yield derive(load_lesson(path, name=path.stem)), who, variant


def export_folder(
    found: list[Found], output: Path, format: str, document: Document, force: bool = False
) -> list[Path]:
    """Write ``document`` of each variant in ``found`` into the folder ``output`` (made if
    missing), as the variant's name and the ``format``'s ending; return the files written.
    Nothing is written when a file is in the way (unless ``force``) or a lesson is bad."""
    from tutor.core.files import save
    from tutor.text.format import plural

    targets = [output / (path.stem + SUFFIXES[format]) for path, _, _ in found]
    taken = [t for t in targets if t.exists()]
    if taken and not force:
        raise TutorError(
            f"{taken[0]} already exists ({plural(len(taken), 'file')} would be replaced); use "
            "--force to replace them"
        )
    texts = [document(d, who, variant) for d, who, variant in derived(found)]
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {output}: {err.strerror or err}") from None
    for target, text in zip(targets, texts, strict=True):
        save(target, text, force=True)
    return targets
