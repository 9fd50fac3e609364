"""Two stores made independently that register the same project, joined by a sync over a
real bare remote: no project description is lost without a word."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.sync import remotes, sync
from service.core.events.events import ProjectAdded, make
from tests.support.sync_support import FAST, ORIGIN, TS, bare, close_all, track


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_all()


def registering(path: Path, slug: str, description: str | None) -> Store:
    store = track(Store.init(path))
    with store.transaction("") as tx:
        tx.append([make(tx.new_id(), TS, "project.added", ORIGIN, "", ProjectAdded(slug, description))])
    return store


def joined(tmp_path: Path, first: str | None, second: str | None) -> tuple[Store, Store]:
    """Store a registers `app` with `first`, then store b, made on its own, with `second`;
    a publishes, b syncs into the same remote, a syncs again."""
    remote = bare(tmp_path / "remote.git")
    a = registering(tmp_path / "a", "app", first)
    b = registering(tmp_path / "b", "app", second)
    for store in (a, b, a):
        if not remotes.listed(store.repo):
            remotes.add(store.repo, str(remote))
        sync(store, options=FAST)
    return a, b


def test_a_description_only_the_later_store_gave_is_kept(tmp_path: Path) -> None:
    a, b = joined(tmp_path, None, "the api service")
    for store in (a, b):
        state, _ = store.state("")
        assert state.projects["app"].description == "the api service"
        assert state.signals == []


def test_two_descriptions_keep_the_first_and_raise_a_signal(tmp_path: Path) -> None:
    a, b = joined(tmp_path, "the api", "the public api service")
    for store in (a, b):
        state, _ = store.state("")
        assert state.projects["app"].description == "the api"
        [signal] = state.signals
        assert signal.kind == "project-registered-twice"
        assert "the public api service" in signal.detail and "the api" in signal.detail


def test_the_same_registration_twice_is_quiet(tmp_path: Path) -> None:
    a, b = joined(tmp_path, "the api", "the api")
    for store in (a, b):
        state, _ = store.state("")
        assert state.projects["app"].description == "the api" and state.signals == []
