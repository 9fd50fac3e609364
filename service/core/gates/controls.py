"""Control characters: the ones no synced text may hold (the sanitize gate refuses them) are
the ones the CLI escapes in anything it prints, so a terminal never obeys text it shows.

C0 but tab and newline, DEL and C1 move the cursor, recolour or rewrite the screen; the
bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069)
reorder what a reader sees (`approve \u202egnp.exe` shows as `approve exe.png`). The
direction marks U+200E and U+200F pass: they place one neutral character and reorder
nothing else.
"""

from __future__ import annotations

import re

_C0_C1 = r"\x00-\x08\x0b-\x1f\x7f-\x9f"
_BIDI_RANGE = r"\u202a-\u202e\u2066-\u2069"
CONTROL = re.compile(f"[{_C0_C1}]")
BIDI = re.compile(f"[{_BIDI_RANGE}]")
# A key (a name, never prose) may hold no control character at all, not even a newline.
KEY_CONTROL = re.compile(f"[\\t\\n{_C0_C1}{_BIDI_RANGE}]")
_SHOWN = re.compile(f"[{_C0_C1}{_BIDI_RANGE}]")


def control_fact(text: str) -> str | None:
    """The control character `text` holds, as a refusal names it, or None."""
    control = CONTROL.search(text)
    if control is not None:
        return f"holds a control character (U+{ord(control.group()):04X})"
    bidi = BIDI.search(text)
    if bidi is not None:
        return f"holds a bidirectional control character (U+{ord(bidi.group()):04X})"
    return None


def escape(text: str) -> str:
    """`text` with every such control character written out as `\\uXXXX` (tab and newline
    kept), for a terminal."""
    if text.isprintable():
        return text
    return _SHOWN.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
