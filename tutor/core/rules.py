"""Every rule of the arithmetic, under one name: ``from tutor.core import rules`` and then
``rules.Product``, ``rules.Mask``, ``rules.Rotate``… A rule is a class (a subclass of
``Step``) that owns what is true of it: its sources, its combine, its NumPy line, its slips;
the consumers ask it (see docs: Adding a rule). The classes live beside the steps that use
them: ``engine`` (the pipeline's own), ``positions`` (Rotate), ``decode`` (Append)."""

from tutor.core.decode import Append
from tutor.core.engine import (
    Concat,
    Given,
    Mask,
    Product,
    Ref,
    RuleSlip,
    Scale,
    Softmax,
    Step,
    Sum,
    Times,
)
from tutor.core.positions import Rotate

__all__ = [
    "Append",
    "Concat",
    "Given",
    "Mask",
    "Product",
    "Ref",
    "Rotate",
    "RuleSlip",
    "Scale",
    "Softmax",
    "Step",
    "Sum",
    "Times",
]
