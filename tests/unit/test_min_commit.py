"""`Selfhub-Min-Commit`'s value (`service/server/api/fresh.py: wanted`): a commit id, none, or
a 422 that says what to send."""

from __future__ import annotations

import pytest

from service.server.api.fresh import NotACommit, NotYet, wanted

SHA = "0123456789abcdef0123456789ABCDEF01234567"


def test_a_commit_id_is_taken_in_lower_case() -> None:
    assert wanted(SHA) == SHA.lower()
    assert wanted(f"  {SHA} ") == SHA.lower()


@pytest.mark.parametrize("value", [None, "", "   "])
def test_no_value_names_no_commit(value: str | None) -> None:
    assert wanted(value) is None


@pytest.mark.parametrize("value", ["main", SHA[:39], SHA + "0", "g" * 40, "HEAD~1", "x" * 500])
def test_anything_else_is_a_422_naming_what_to_send(value: str) -> None:
    with pytest.raises(NotACommit) as refused:
        wanted(value)
    assert refused.value.status == 422
    assert "40 hex digits" in str(refused.value)
    assert len(str(refused.value)) < 200  # a long value is cut when shown


def test_not_yet_is_a_503_with_retry_after() -> None:
    late = NotYet(SHA, 5.0)
    assert late.status == 503
    assert late.headers() == {"Retry-After": "1"}
    assert SHA in str(late)
