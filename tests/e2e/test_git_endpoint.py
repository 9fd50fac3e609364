"""The service's git endpoint (`/git/WS.git`) driven by the real git program and the real
`self` CLI against a real `self serve` process: clones and fetches, pushes that reach the
API and the live stream, who may do what, every hostile push refused with the remote's
message and nothing moved, a large pack, and a kill -9 in the middle of a push."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.adapters.store import Store
from tests.support import gitclient as gc
from tests.support.forge import GITLINK, SEGMENT, SYMLINK, forge, hostile_trees
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Listener, Service, admin, token, token_id

WS, OTHER, SLUG = "acme", "other", "app"


class Hosted:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        admin(self.data, "workspace", "add", WS)
        admin(self.data, "workspace", "add", OTHER)
        admin(self.data, "user", "add", "ann")
        self.writer = token(self.data, "ann", WS, "writer")
        self.reader = token(self.data, "ann", WS, "reader")
        self.other = token(self.data, "ann", OTHER, "admin")
        self.revoked = token(self.data, "ann", WS, "writer")
        admin(self.data, "token", "revoke", token_id(self.data, self.revoked))
        self.cli("project", "add", SLUG)
        self.cli("goal", "add", "serve the team over git")
        self.service = Service(self.data, tmp / "serve.log")
        self.service.wait("/readyz")
        self.clones = 0

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    def cli(self, *args: str) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.store), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def url(self, secret: str | None = None, workspace: str = WS) -> str:
        return gc.url(self.service.url, secret if secret is not None else self.writer, workspace)

    def clone(self, secret: str | None = None) -> Path:
        self.clones += 1
        target = self.tmp / f"clone{self.clones}"
        gc.ok(self.tmp, "clone", "-q", self.url(secret), str(target))
        return target

    def head(self) -> str | None:
        with Store.open(self.store) as store:
            return store.head()

    def ids(self) -> list[str]:
        with self.service.client(self.reader) as client:
            path = f"/api/v1/workspaces/{WS}/projects/{SLUG}/events"
            answer = client.get(path, params={"limit": 10_000})
            assert answer.status_code == 200, answer.text
            return [e["id"] for e in answer.json()["events"]]


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    made = Hosted(tmp_path_factory.mktemp("git"))
    yield made
    assert made.service.stop() == 0


def test_git_clones_and_fetches_what_the_store_holds(hosted: Hosted) -> None:
    clone = hosted.clone(hosted.reader)
    assert gc.ok(hosted.tmp, "rev-parse", "HEAD", cwd=clone).strip() == hosted.head()
    ours = (hosted.store / "projects" / SLUG / "log" / "000000.jsonl").read_bytes()
    assert (clone / "projects" / SLUG / "log" / "000000.jsonl").read_bytes() == ours
    hosted.cli("goal", "add", "fetched later")
    gc.ok(hosted.tmp, "pull", "-q", "--ff-only", cwd=clone)
    assert gc.ok(hosted.tmp, "rev-parse", "HEAD", cwd=clone).strip() == hosted.head()


def test_a_git_push_lands_in_the_api_and_the_stream(hosted: Hosted) -> None:
    clone = hosted.clone()
    hosted.ids()  # a CLI's write before this one is folded (and streamed) by this read
    listener = Listener(hosted.service, hosted.reader, workspace=WS)
    time.sleep(0.2)  # subscribed before the push
    made, text = gc.event(SLUG, "pushed with plain git")
    gc.append(clone, SLUG, [text])
    gc.ok(hosted.tmp, "commit", "-qam", "one event", cwd=clone)
    pushed = gc.git(hosted.tmp, "push", "origin", "main", cwd=clone)
    assert pushed.returncode == 0, pushed.stderr
    assert "remote: main is at" in pushed.stderr and "1 new event" in pushed.stderr
    got = listener.until(1)
    listener.close()
    assert [d["id"] for _, d in got] == [made]
    assert made in hosted.ids()
    assert hosted.head() == gc.ok(hosted.tmp, "rev-parse", "HEAD", cwd=clone).strip()
    rows = json_rows(hosted)
    assert any(r["id"] == made and r["text"] == "pushed with plain git" for r in rows)


def json_rows(hosted: Hosted) -> list[dict[str, object]]:
    with hosted.service.client(hosted.reader) as client:
        answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"})
        assert answer.status_code == 200, answer.text
        rows: list[dict[str, object]] = answer.json()
        return rows


def test_self_clone_and_sync_go_through_the_endpoint(hosted: Hosted) -> None:
    env = base_env() | {"SELF_TOKEN": hosted.writer}
    url = f"{hosted.service.url}/git/{WS}.git"
    target = hosted.tmp / "selfclone"
    done = run_self(("clone", url, str(target)), env)
    assert done.returncode == 0, describe(done)
    mine = env | {"SELF_WORKSPACE": str(target), "SELF_PROJECT": SLUG}
    assert run_self(("idea", "add", "synced through the service"), mine).returncode == 0
    synced = run_self(("sync",), mine)
    assert synced.returncode == 0, describe(synced)
    assert "1 pushed" in synced.stdout
    rows = json_rows(hosted)
    assert any(r["text"] == "synced through the service" for r in rows)
    hosted.cli("idea", "add", "written on the service's store")
    again = run_self(("sync",), mine)
    assert again.returncode == 0 and "1 pulled" in again.stdout, describe(again)


@pytest.mark.parametrize(
    ("who", "service", "status"),
    [
        ("none", "git-upload-pack", 401),
        ("bad", "git-upload-pack", 401),
        ("revoked", "git-receive-pack", 401),
        ("other", "git-upload-pack", 403),
        ("reader", "git-receive-pack", 403),
        ("writer", "git-receive-pack", 200),
        ("reader", "git-upload-pack", 200),
    ],
)
def test_who_may_fetch_and_push(hosted: Hosted, who: str, service: str, status: int) -> None:
    secrets = {
        "none": None,
        "bad": "shb_" + "x" * 43,
        "revoked": hosted.revoked,
        "other": hosted.other,
        "reader": hosted.reader,
        "writer": hosted.writer,
    }
    secret = secrets[who]
    auth = ("ann", secret) if secret is not None else None
    path = f"{hosted.service.url}/git/{WS}.git/info/refs"
    answer = httpx.get(path, params={"service": service}, auth=auth, timeout=10)
    assert answer.status_code == status, answer.text
    if status == 401:
        assert answer.headers["www-authenticate"].startswith("Basic")
    if who in ("none", "bad", "revoked", "other"):  # a workspace that does not exist: the same answer
        elsewhere = path.replace(f"/{WS}.git", "/nowhere.git")
        missing = httpx.get(elsewhere, params={"service": service}, auth=auth, timeout=10)
        assert (missing.status_code, missing.text) == (answer.status_code, answer.text)


def test_git_without_a_token_or_with_a_reader_token_cannot_push(hosted: Hosted) -> None:
    failed = gc.git(hosted.tmp, "clone", "-q", hosted.url("").replace("ann:@", ""), str(hosted.tmp / "anon"))
    assert failed.returncode != 0
    assert "Authentication failed" in failed.stderr or "could not read Username" in failed.stderr
    clone = hosted.clone(hosted.reader)
    gc.append(clone, SLUG, [gc.event(SLUG, "a reader's")[1]])
    gc.ok(hosted.tmp, "commit", "-qam", "reader", cwd=clone)
    before = hosted.head()
    pushed = gc.git(hosted.tmp, "push", "origin", "main", cwd=clone)
    assert pushed.returncode != 0 and "403" in pushed.stderr
    assert hosted.head() == before


def _refused(hosted: Hosted, clone: Path, *push: str) -> str:
    before, ids = hosted.head(), hosted.ids()
    pushed = gc.git(hosted.tmp, "push", *(push or ("origin", "main")), cwd=clone)
    assert pushed.returncode != 0, pushed.stderr
    assert hosted.head() == before and hosted.ids() == ids
    assert not list((hosted.store / ".git" / "objects").glob("incoming-*")), "the quarantine is gone"
    return pushed.stderr


@pytest.mark.parametrize(
    "case",
    [
        *("dot", "dotdot", "dot-git", "symlink", "gitlink"),
        *("unknown-path", "bad-settings", "leaky-event", "other-log"),
    ],
)
def test_a_hostile_tree_is_refused_with_the_remotes_message(hosted: Hosted, case: str) -> None:
    clone = hosted.clone()
    tree = hostile_trees(clone)[case]
    if case in ("symlink", "gitlink"):
        tree = {k: v for k, v in tree.items() if v[0] in (SYMLINK, GITLINK)}
    forge(clone, tree)
    said = _refused(hosted, clone)
    assert "[remote rejected]" in said or "unpack" in said, said
    assert "remote:" in said, said
    assert "ghp_" not in said


def test_an_edited_event_is_refused(hosted: Hosted) -> None:
    clone = hosted.clone()
    segment = clone.joinpath(*(p.decode() for p in SEGMENT)).read_bytes()
    edited = segment.replace(b"serve the team over git", b"serve the team over fax")
    forge(clone, {SEGMENT: (0o100644, edited)})
    said = _refused(hosted, clone)
    assert "already published was changed" in said and "projects/app/log/000000.jsonl" in said


def test_a_removed_event_and_a_duplicate_are_refused(hosted: Hosted) -> None:
    clone = hosted.clone()
    segment = clone.joinpath(*(p.decode() for p in SEGMENT)).read_bytes()
    forge(clone, {SEGMENT: (0o100644, b"".join(segment.splitlines(keepends=True)[1:]))})
    assert "already published was changed" in _refused(hosted, clone)
    clone = hosted.clone()
    first = segment.splitlines(keepends=True)[0]
    forge(clone, {SEGMENT: (0o100644, segment + first)})
    assert "is in the log already" in _refused(hosted, clone)


def test_a_rewrite_and_a_delete_of_main_are_refused(hosted: Hosted) -> None:
    clone = hosted.clone()
    gc.ok(hosted.tmp, "reset", "-q", "--hard", "HEAD~1", cwd=clone)
    gc.append(clone, SLUG, [gc.event(SLUG, "on an older main")[1]])
    gc.ok(hosted.tmp, "commit", "-qam", "rewrite", cwd=clone)
    said = _refused(hosted, clone, "--force", "origin", "main")
    assert "does not build on main" in said, said
    said = _refused(hosted, clone, "origin", ":main")
    assert "never deleted" in said, said
    said = _refused(hosted, clone, "origin", "HEAD:refs/heads/other")
    assert "only refs/heads/main" in said, said


def test_an_id_from_the_future_is_refused(hosted: Hosted) -> None:
    from service.core.events import ids

    clone = hosted.clone()
    future = ids.next_id(None, int(time.time() * 1000) + 30 * 86_400_000, 7)
    gc.append(clone, SLUG, [gc.event(SLUG, "from next month", future)[1]])
    gc.ok(hosted.tmp, "commit", "-qam", "future", cwd=clone)
    assert "ahead of the service's clock" in _refused(hosted, clone)


def test_a_large_push_lands_whole(hosted: Hosted) -> None:
    clone = hosted.clone()
    lines = [gc.event(SLUG, f"large {n} " + "x" * 2000)[1] for n in range(3000)]
    gc.append(clone, SLUG, lines)
    gc.ok(hosted.tmp, "add", "-A", cwd=clone)
    gc.ok(hosted.tmp, "commit", "-qm", "three thousand events", cwd=clone)
    pushed = gc.git(hosted.tmp, "push", "origin", "main", cwd=clone)
    assert pushed.returncode == 0, pushed.stderr
    assert "3000 new events" in pushed.stderr
    assert hosted.head() == gc.ok(hosted.tmp, "rev-parse", "HEAD", cwd=clone).strip()
    fsck = gc.git(hosted.tmp, "fsck", "--strict", cwd=hosted.store)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_push_leaves_a_valid_store(tmp_path: Path) -> None:
    hosted = Hosted(tmp_path)
    try:
        clone = hosted.clone()
        noise = [gc.event(SLUG, f"big {n} " + _random_text(6000))[1] for n in range(3000)]
        gc.append(clone, SLUG, noise)
        gc.ok(hosted.tmp, "add", "-A", cwd=clone)
        gc.ok(hosted.tmp, "commit", "-qm", "big", cwd=clone)
        before = hosted.head()
        env = gc.git_env(hosted.tmp) | {"GIT_TRACE": "0"}
        push = subprocess.Popen(
            ["git", "-c", "http.postBuffer=65536", "push", "origin", "main"],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        objects = hosted.store / ".git" / "objects"
        while not list(objects.glob("incoming-*")) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert list(objects.glob("incoming-*")), f"the push reached the quarantine: {push.poll()}"
        hosted.service.proc.send_signal(signal.SIGKILL)
        push.wait(30)
        hosted.service.stop()
        assert hosted.head() == before
        fsck = gc.git(hosted.tmp, "fsck", cwd=hosted.store)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        hosted.service = Service(hosted.data, tmp_path / "again.log")
        hosted.service.wait("/readyz")
        gc.ok(hosted.tmp, "remote", "set-url", "origin", hosted.url(), cwd=clone)  # another port now
        again = gc.git(hosted.tmp, "push", "origin", "main", cwd=clone)
        assert again.returncode == 0, again.stderr
        assert hosted.head() == gc.ok(hosted.tmp, "rev-parse", "HEAD", cwd=clone).strip()
        assert not list(objects.glob("incoming-*")), "the quarantine the kill left was swept"
        assert len(hosted.ids()) >= 3001
    finally:
        hosted.service.stop()


def _random_text(size: int) -> str:
    """Words picked at random: text no compression shrinks much, and no secret."""
    import random

    words = [a + b for a in ("ka", "lo", "mi", "nu", "pe", "ra", "so", "tu") for b in "bdgx"]
    picked = random.choices(words, k=size // 4)
    return " ".join(picked)


def test_the_endpoint_serves_only_gits_smart_protocol(hosted: Hosted) -> None:
    auth = ("ann", hosted.writer)
    base = f"{hosted.service.url}/git/{WS}.git"
    for path in ("/HEAD", "/objects/info/packs", "/info/refs", "/../../auth.sqlite"):
        assert httpx.get(base + path, auth=auth).status_code == 404, path
    bad = httpx.post(base + "/git-receive-pack", auth=auth, content=b"zzzz")
    assert bad.status_code == 400 and "pkt-line" in bad.text


def test_pushes_are_counted_by_outcome(hosted: Hosted) -> None:
    clone = hosted.clone()
    gc.append(clone, SLUG, [gc.event(SLUG, "counted")[1]])
    gc.ok(hosted.tmp, "commit", "-qam", "counted", cwd=clone)
    gc.ok(hosted.tmp, "push", "-q", "origin", "main", cwd=clone)
    forge(clone, hostile_trees(clone)["unknown-path"])
    _refused(hosted, clone)
    exposed = httpx.get(f"{hosted.service.url}/metrics", timeout=10).text
    counted = {
        line.split("{")[1].split("}")[0]: float(line.rsplit(" ", 1)[1])
        for line in exposed.splitlines()
        if line.startswith("selfhub_git_pushes_total{")
    }
    assert counted.get('outcome="accepted",workspace="acme"', 0) >= 1, counted
    assert counted.get('outcome="gate",workspace="acme"', 0) >= 1, counted


def test_a_pushed_event_older_than_its_logs_last_folds_as_a_refold_does(hosted: Hosted) -> None:
    from service.core.events import ids

    clone = hosted.clone()
    older = ids.next_id(None, int(time.time() * 1000) - 3_600_000, 11)  # written offline an hour ago
    gc.append(clone, SLUG, [gc.event(SLUG, "written offline", older)[1], gc.event(SLUG, "written now")[1]])
    gc.ok(hosted.tmp, "commit", "-qam", "late", cwd=clone)
    gc.ok(hosted.tmp, "push", "-q", "origin", "main", cwd=clone)
    served = {r["id"]: r for r in json_rows(hosted)}
    assert served[older]["text"] == "written offline"
    import json

    printed = {r["id"]: r for r in json.loads(hosted.cli("state", "list", "--all", "--json"))}
    assert served == printed, "the served rows are what a refold of the store gives"


def test_an_outside_write_that_edits_an_event_is_refused_and_kept_aside(hosted: Hosted) -> None:
    """A write into the store's git directory (as a push over ssh or to its path would make)
    passes the same gate before it is served: refused, main goes back and the commit is kept."""
    before, rows = hosted.head(), json_rows(hosted)
    segment = hosted.store.joinpath(*(p.decode() for p in SEGMENT)).read_bytes()
    forged = forge(hosted.store, {SEGMENT: (0o100644, segment.replace(b"serve the team", b"serve the fax"))})
    assert json_rows(hosted) == rows  # the read that finds main moved judges it first
    assert hosted.head() == before
    kept = hosted.store / ".git" / "refs" / "selfhub" / "refused" / forged.decode()
    assert kept.read_text().strip() == forged.decode()
    assert hosted.store.joinpath(*(p.decode() for p in SEGMENT)).read_bytes() == segment
    exposed = httpx.get(f"{hosted.service.url}/metrics", timeout=10).text
    assert f'selfhub_outside_writes_total{{outcome="push-not-append",workspace="{WS}"}} 1.0' in exposed
    assert "outside-write-refused" in (hosted.tmp / "serve.log").read_text()


def test_an_outside_append_is_folded_and_streamed(hosted: Hosted) -> None:
    listener = Listener(hosted.service, hosted.reader, workspace=WS)
    time.sleep(0.2)  # subscribed before the write
    last = sorted((hosted.store / "projects" / SLUG / "log").glob("*.jsonl"))[-1]
    held = last.read_bytes()
    made, text = gc.event(SLUG, "written straight into the store")
    forged = forge(
        hosted.store, {(b"projects", SLUG.encode(), b"log", last.name.encode()): (0o100644, held + text)}
    )
    assert any(r["id"] == made for r in json_rows(hosted))
    assert [d["id"] for _, d in listener.until(1)] == [made]
    listener.close()
    assert hosted.head() == forged.decode()
    assert last.read_bytes() == held + text
