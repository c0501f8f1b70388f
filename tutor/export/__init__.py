"""Documents: walk --json, Markdown and LaTeX worksheets, SVG/HTML."""
