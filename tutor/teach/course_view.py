"""What ``learn`` shows before a stage's questions: the softmax warm-up when the stage has one,
then the walk's own explanation of the stage's steps. Returns renderables; never prints."""

from __future__ import annotations

from rich.console import RenderableType
from rich.rule import Rule
from rich.text import Text

from tutor.core.course import Stage
from tutor.core.engine import Derivation
from tutor.teach.colours import COLOURS, PLAIN
from tutor.teach.walk import WalkOptions, softmax_warmup, step_section
from tutor.teach.warmup import softmax_row
from tutor.text import format as fmt
from tutor.text import steps, words


def stage_intro(d: Derivation, stage: Stage, width: int) -> list[RenderableType]:
    """The warm-up (if any), each step of ``stage.show`` as the walk shows it (one head), then
    what each step asked about is and why, in the walk's words, without its table."""
    places = d.lesson.precision
    out: list[RenderableType] = []
    if stage.warmup:
        weights = softmax_row(list(stage.warmup))
        numbers = ", ".join(fmt.operand(c, places) for c in weights.args[0].cells[0])
        out.append(Text(f"Warm-up: softmax of {numbers}, worked by hand", style="bold"))
        out += softmax_warmup(weights, places)
        out.append(Text())
    opts = WalkOptions(steps=stage.show, head=1, width=width)
    for step in d.steps:
        if step.name in stage.show and step.head in (None, 1):
            out.append(step_section(d, step, opts))
    for name in stage.steps:  # the steps asked: the walk's words, not its tables (the answers)
        colour = COLOURS.get(name, PLAIN)
        step = next((s for s in d.steps if s.name == name), None)
        turned = d.lesson.layout == "columns"
        if step is None:  # a step this lesson does not work: its plain words
            heading, why = steps.said(name, "title"), steps.said(name, "why")
        else:
            heading = words.step_title(step, d.lesson, turned)
            why = steps.say(step, "why", d.lesson, turned)
        title = Text(heading, style=f"bold {colour}")
        out += [Rule(title, style=colour, align="left"), Text(why)]
        note = d.lesson.notes.get(name)
        if note:
            out.append(Text.assemble(("What to notice: ", "bold"), (note, "italic")))
    return out
