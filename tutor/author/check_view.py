"""``check``'s output: each problem as ``file:line:col: message`` (warnings marked), and the
summary line. Returns Rich ``Text``; never prints (``tutor.cli`` does)."""

from __future__ import annotations

from rich.text import Text

from tutor.author.check import Report, summary
from tutor.text import theme
from tutor.text.words import visible


def check_lines(report: Report) -> list[Text]:
    """One line per problem; a path and a message may quote a file name or a value, so their
    control characters are spelled out."""
    lines = []
    for p in report.problems:
        tag = ("warning: ", theme.WARN) if p.severity == "warning" else ""
        place = (f"{visible(p.where)}:", "bold")
        lines.append(Text.assemble(place, " ", tag, visible(p.message)))
    return lines


def summary_line(reports: list[Report]) -> Text:
    ok = all(r.valid for r in reports)
    return Text(summary(reports), style=theme.GOOD if ok else f"bold {theme.BAD}")
