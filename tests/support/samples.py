"""Where the test suite keeps real data written by the systems selfhub replaces.

`fixtures/conformance/` is a copy of the conformance sample: stores written by those systems'
own code, with what they printed for them. It lives in the repository so that a fresh clone
runs every test that reads it.
"""

from __future__ import annotations

from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
SUPERSELF_SAMPLE = CONFORMANCE / "superself-sample"
SUPERSELF_SAMPLE_LOG = SUPERSELF_SAMPLE / "store" / "projects" / "app" / "log.jsonl"
