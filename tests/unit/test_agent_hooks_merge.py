"""Merging a coding agent's hooks into its settings and taking them out again (pure)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core.agent import hooks as agent_hooks
from service.core.agent.hooks import Hook
from service.core.errors import Invalid

WANTED = agent_hooks.claude_hooks("http://selfhub.example:8765/git/acme.git")
names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
entry = st.fixed_dictionaries({"type": st.just("command"), "command": names})
group = st.fixed_dictionaries({"hooks": st.lists(entry, max_size=3)}, optional={"matcher": names})
settings = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(
            st.sampled_from(["PreToolUse", "SessionStart", "Stop"]), st.lists(group, max_size=3)
        ),
        "permissions": st.dictionaries(names, st.lists(names, max_size=2), max_size=2),
        "model": names,
    },
)


@given(settings)
def test_uninstall_takes_out_exactly_what_install_added(before: dict[str, object]) -> None:
    kept = copy.deepcopy(before)
    merged, added = agent_hooks.install(before, WANTED)
    assert before == kept, "the input is not changed in place"
    again, more = agent_hooks.install(merged, WANTED)
    assert (again, more.hooks) == (merged, []), "installing twice adds nothing"
    assert agent_hooks.uninstall(merged, added) == before


@given(settings)
def test_every_wanted_hook_is_there_after_install(before: dict[str, object]) -> None:
    merged, _ = agent_hooks.install(before, WANTED)
    hooks = merged["hooks"]
    assert isinstance(hooks, dict)
    for hook in WANTED:
        groups = [g for g in hooks[hook.event] if g.get("matcher") == hook.matcher]
        assert any(e.get("command") == hook.command for g in groups for e in g["hooks"])


def test_the_session_hook_names_the_service_and_the_tool_hook_the_gate() -> None:
    assert [
        Hook("SessionStart", None, "self agent context --service http://selfhub.example:8765/git/acme.git"),
        Hook("PreToolUse", "*", "self gate"),
    ] == WANTED
    assert agent_hooks.claude_hooks(None)[0].command == "self agent context"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://h/git/a.git", "not a workspace's URL"),
        ("http://h/api/v1/workspaces/a", "not a workspace's URL"),
        ("http://ann:tok@h/git/a.git", "must not hold credentials"),
        ("http://h/git/a.git; rm -rf ~", "not a workspace's URL"),
    ],
)
def test_a_service_url_that_names_no_workspace_is_refused(url: str, says: str) -> None:
    with pytest.raises(Invalid, match=says):
        agent_hooks.claude_hooks(url)


def test_settings_of_the_wrong_shape_are_refused_not_rewritten() -> None:
    with pytest.raises(Invalid, match="not an object"):
        agent_hooks.install({"hooks": []}, WANTED)
    with pytest.raises(Invalid, match="not a list"):
        agent_hooks.install({"hooks": {"PreToolUse": {}}}, WANTED)
