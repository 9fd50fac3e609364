"""The human terminal render of context: every row, no budget, styled by rich.

rich is imported inside the function, never at module import, so the pure core loads
without it and the agent render never pays for it.
"""

from __future__ import annotations

import io


def render_markdown(markdown: str, width: int = 100, color: bool = True) -> str:
    """The whole context document's markdown as terminal text (ANSI-styled when `color`). Its
    control characters are escaped first, so the only ones printed are rich's own styles."""
    from rich.console import Console
    from rich.markdown import Markdown

    from service.app.texts import escape

    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="standard" if color else None)
    console.print(Markdown(escape(markdown)))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"
