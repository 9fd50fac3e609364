"""`Store.advance`, the checkout of a hosted store's push: only what the two trees differ in is
written, `.git/index` follows when asked, and a crash between main's move and the files is
finished by the next open, as a checkout's is."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.store import store as store_module
from service.adapters.sync import sync
from tests.support.sync_support import FAST, append, files, pair, same, status_clean, track


def _fetched(tmp_path: Path) -> tuple[Store, Store, str, str]:
    """Replica a, and b three appends ahead of it whose objects a holds (as a push brings)."""
    _, a, b = pair(tmp_path)
    append(b, 3)
    append(b, 2, log="web")
    sync(b, options=FAST)
    old, new = a.head(), b.head()
    assert old is not None and new is not None
    b.repo.fetch(a.repo)
    return a, b, old, new


def test_advance_writes_what_changed_and_the_index_follows(tmp_path: Path) -> None:
    a, b, old, new = _fetched(tmp_path)
    changed, written = a.advance(new, old, "push")
    assert changed == ["app", "web"]
    assert sorted(written) == ["projects/app/log/000000.jsonl", "projects/web/log/000000.jsonl"]
    assert a.head() == new and files(a) == files(b)
    assert not (a.local_dir / "checkout").exists()
    a.update_index(written)
    assert status_clean(a)
    same(track(Store.open(a.root)), b)


def test_a_crash_after_main_moved_is_finished_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, old, new = _fetched(tmp_path)

    def dies(self: Store, *args: object, **kwargs: object) -> tuple[list[str], list[str]]:
        raise OSError("disk gone")

    monkeypatch.setattr(store_module.Store, "_write_files", dies)
    with pytest.raises(OSError):
        a.advance(new, old, "push")
    monkeypatch.undo()
    assert a.head() == new and (a.local_dir / "checkout").exists()
    reopened = track(Store.open(a.root))
    assert not (a.local_dir / "checkout").exists()
    same(reopened, b)
