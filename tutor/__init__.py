"""attn-tutor: learn the arithmetic of self-attention by working it by hand."""

__version__ = "0.1.0"
