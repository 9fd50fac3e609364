"""The managed block's text and the JSON rewrite under it (pure): a member added and taken
out again leaves any layout byte for byte; a block appended and removed leaves the text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from service.core.agent import block, jsontext

keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3)
)
docs = st.dictionaries(keys, values, max_size=4)
layouts = st.sampled_from([None, 2, 4, "\t"])


@given(docs, layouts, values)
def test_a_member_added_and_taken_out_leaves_the_text(
    doc: dict[str, object], indent: object, extra: object
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"  # type: ignore[arg-type]
    grown = {**doc, "selfhub-added": extra} if "selfhub-added" not in doc else doc
    added = jsontext.rewrite(text, grown)
    assert json.loads(added) == grown
    assert jsontext.rewrite(added, doc) == text


@given(st.text(max_size=40).filter(lambda t: "<!--" not in t), st.lists(st.text(max_size=20), max_size=3))
def test_a_block_appended_then_removed_leaves_the_text(text: str, conventions: list[str]) -> None:
    rendered = block.render("0.1.0", conventions)
    placed = block.upsert(text, rendered, block.PROJECT)
    assert block.upsert(placed.text, rendered, block.PROJECT).text == placed.text
    assert block.remove(placed.text, block.PROJECT, placed.separator) == text


def test_a_later_stamp_is_newer() -> None:
    assert block.newer("0.10.0", "0.9.1") and not block.newer("0.1.0", "0.1.0") and not block.newer(None, "1")
