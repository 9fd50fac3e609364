"""The service's git endpoint (`/git/WS.git`) as a team member's git uses it, in each mode
one meets: full, depth-1 (as CI runners check out) and `--filter=blob:none` clones over
protocol v0 and v2; pushes of one commit, several, an empty one, `--force` and `--atomic`.
What is taken lands; what is not is told as a `remote:` line and a rejected ref, never a
bare disconnect, and main does not move."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.adapters.store import Store
from tests.support import gitclient as gc
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service, admin, token

WS, SLUG = "acme", "app"
DISCONNECT = "unexpected disconnect"


class Hosted:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        admin(self.data, "workspace", "add", WS)
        admin(self.data, "user", "add", "ann")
        self.writer = token(self.data, "ann", WS, "writer")
        self.cli("project", "add", SLUG)
        self.cli("goal", "add", "serve every git client")
        self.cli("goal", "add", "and its every mode")
        self.service = Service(self.data, tmp / "serve.log")
        self.service.wait("/readyz")
        self.clones = 0

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    @property
    def url(self) -> str:
        return gc.url(self.service.url, self.writer, WS)

    def cli(self, *args: str) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.store), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def clone(self, *how: str, version: str = "2", source: str | None = None) -> tuple[Path, str]:
        """A clone made with clone options `how` over protocol `version`; it and what git said."""
        self.clones += 1
        target = self.tmp / f"clone{self.clones}"
        done = self.git(*_v(version), "clone", *how, source or self.url, str(target))
        assert done.returncode == 0, done.stderr
        return target, done.stderr

    def git(self, *args: str, cwd: Path | None = None) -> gc.Done:
        return gc.git(self.tmp, *args, cwd=cwd)

    def head(self) -> str | None:
        with Store.open(self.store) as store:
            return store.head()

    def commit(self, clone: Path, *texts: str) -> str:
        """A commit in `clone` appending an event per text; its id."""
        gc.append(clone, SLUG, [gc.event(SLUG, text)[1] for text in texts])
        gc.ok(self.tmp, "commit", "-qam", f"{len(texts)} events", cwd=clone)
        return gc.ok(self.tmp, "rev-parse", "HEAD", cwd=clone).strip()

    def pushed(self, clone: Path, *args: str) -> str:
        """`git push ARGS` (origin main when none), required to land; what git said."""
        done = self.git(*(args or ("push", "origin", "main")), cwd=clone)
        assert done.returncode == 0, done.stderr
        assert self.head() == gc.ok(self.tmp, "rev-parse", "HEAD", cwd=clone).strip()
        return done.stderr

    def refused(self, clone: Path, *args: str) -> str:
        """`git push ARGS`, required to be refused with a remote line; main unmoved."""
        before = self.head()
        done = self.git(*args, cwd=clone)
        assert done.returncode != 0, done.stderr
        assert self.head() == before
        assert DISCONNECT not in done.stderr and "remote:" in done.stderr, done.stderr
        assert not list((self.store / ".git" / "objects").glob("incoming-*")), "the quarantine is gone"
        return done.stderr


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    made = Hosted(tmp_path_factory.mktemp("clients"))
    yield made
    assert made.service.stop() == 0


def _v(version: str) -> tuple[str, str]:
    return ("-c", f"protocol.version={version}")


@pytest.mark.parametrize("version", ["0", "2"])
def test_a_depth_1_clone_pushes_an_event(hosted: Hosted, version: str) -> None:
    clone, _ = hosted.clone("--depth", "1", version=version)
    assert (clone / ".git" / "shallow").is_file()
    hosted.commit(clone, f"from a shallow clone over v{version}")
    said = hosted.pushed(clone, *_v(version), "push", "origin", "main")
    assert "remote: main is at" in said and "1 new event" in said, said


def test_a_depth_1_clone_pushes_several_commits(hosted: Hosted) -> None:
    clone, _ = hosted.clone("--depth", "1")
    for n in range(3):
        hosted.commit(clone, f"shallow commit {n}", f"and another {n}")
    said = hosted.pushed(clone)
    assert "6 new events" in said, said


def test_a_depth_1_clone_fetches_and_pushes_again(hosted: Hosted) -> None:
    clone, _ = hosted.clone("--depth", "1")
    hosted.cli("goal", "add", "written on the service meanwhile")
    gc.ok(hosted.tmp, "pull", "-q", "--ff-only", cwd=clone)
    hosted.commit(clone, "after a shallow pull")
    assert "1 new event" in hosted.pushed(clone)


def test_a_shallow_clone_cut_at_a_commit_main_lacks_pushes_when_its_pack_connects(hosted: Hosted) -> None:
    """Cut at a commit the push brings, whose parent is main's head: the pack connects."""
    full, _ = hosted.clone()
    hosted.commit(full, "cut here, on main's head")
    cut, _ = hosted.clone("--depth", "1", "--no-local", source=f"file://{full}")
    gc.ok(hosted.tmp, "remote", "set-url", "origin", hosted.url, cwd=cut)
    hosted.commit(cut, "after the cut")
    said = hosted.pushed(cut, "push", "--force", "origin", "main")  # git cannot tell it is a fast-forward
    assert "2 new events" in said, said


def test_a_shallow_history_the_service_lacks_is_refused_with_what_to_do(hosted: Hosted) -> None:
    """A shallow clone whose cut commit the service never held: its pack cannot be checked."""
    full, _ = hosted.clone()
    hosted.commit(full, "never pushed, one")
    hosted.commit(full, "never pushed, two")
    cut, _ = hosted.clone("--depth", "1", "--no-local", source=f"file://{full}")
    gc.ok(hosted.tmp, "remote", "set-url", "origin", hosted.url, cwd=cut)
    hosted.commit(cut, "on a cut history")
    said = hosted.refused(cut, "push", "--force", "origin", "main")
    assert "shallow" in said and "--unshallow" in said, said


@pytest.mark.parametrize("version", ["0", "1", "2"])
def test_a_full_clone_pushes_several_commits(hosted: Hosted, version: str) -> None:
    clone, _ = hosted.clone(version=version)
    hosted.commit(clone, f"full over v{version}")
    hosted.commit(clone, f"full again over v{version}")
    said = hosted.pushed(clone, *_v(version), "push", "origin", "main")
    assert "2 new events" in said, said


@pytest.mark.parametrize("version", ["0", "2"])
def test_a_blobless_clone_is_partial_without_a_warning_and_pushes(hosted: Hosted, version: str) -> None:
    clone, said = hosted.clone("--filter=blob:none", version=version)
    assert "warning" not in said.lower(), said
    missing = gc.ok(hosted.tmp, "rev-list", "--objects", "--all", "--missing=print", cwd=clone)
    gone = [line[1:] for line in missing.splitlines() if line.startswith("?")]
    assert gone, "the older blobs were left out"
    lazy = hosted.git(*_v(version), "cat-file", "-p", gone[0], cwd=clone)
    assert lazy.returncode == 0, lazy.stderr
    hosted.commit(clone, f"from a blobless clone over v{version}")
    assert "1 new event" in hosted.pushed(clone, *_v(version), "push", "origin", "main")


@pytest.mark.parametrize("kind", ["blob:limit=100", "tree:0"])
def test_the_other_served_filters_clone_without_a_warning(hosted: Hosted, kind: str) -> None:
    clone, said = hosted.clone(f"--filter={kind}")
    assert "warning" not in said.lower(), said
    assert gc.ok(hosted.tmp, "config", "remote.origin.partialclonefilter", cwd=clone).strip() == kind


def test_a_filter_the_service_does_not_serve_is_refused_by_name(hosted: Hosted) -> None:
    target = hosted.tmp / "sparse"
    done = hosted.git("clone", "--filter=sparse:oid=HEAD:x", hosted.url, str(target))
    assert done.returncode != 0
    assert "sparse" in done.stderr and "not supported" in done.stderr, done.stderr


def test_a_force_push_that_rewrites_main_is_refused(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    gc.ok(hosted.tmp, "commit", "-q", "--amend", "-m", "rewritten", cwd=clone)
    said = hosted.refused(clone, "push", "--force", "origin", "main")
    assert "remote: refused: the pushed commit does not build on main" in said, said
    assert "[remote rejected] main -> main" in said, said


def test_an_atomic_push_lands(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    hosted.commit(clone, "pushed atomically")
    assert "1 new event" in hosted.pushed(clone, "push", "--atomic", "origin", "main")


def test_an_atomic_push_with_a_refused_ref_moves_nothing(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    hosted.commit(clone, "in a push that fails as one")
    said = hosted.refused(clone, "push", "--atomic", "origin", "main", "HEAD:refs/heads/other")
    assert "only refs/heads/main" in said, said
    assert "main -> main" in said and "atomic" in said, said


def test_an_empty_commit_is_taken(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    gc.ok(hosted.tmp, "commit", "-q", "--allow-empty", "-m", "nothing changed", cwd=clone)
    assert "0 new events" in hosted.pushed(clone)


def test_a_ref_name_the_service_does_not_keep_is_told_not_cut(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    hosted.commit(clone, "to a branch")
    said = hosted.refused(clone, "push", "origin", "HEAD:refs/heads/feature+x")
    assert "only refs/heads/main" in said and "[remote rejected]" in said, said


def test_a_push_of_too_many_refs_is_refused_whole_with_a_remote_line(hosted: Hosted) -> None:
    clone, _ = hosted.clone()
    hosted.commit(clone, "in a push of many refs")
    refs = [f"HEAD:refs/heads/b{n}" for n in range(65)]
    said = hosted.refused(clone, "push", "origin", "main", *refs)
    assert "at most 64 refs" in said and "[remote rejected] main -> main" in said, said


def test_a_v2_request_the_endpoint_cannot_read_is_answered_as_git_reads_an_error(hosted: Hosted) -> None:
    """An ERR packet (git prints "remote error: …"), not an HTTP status git does not show."""
    asked = b"0014command=ls-refs\n0001" + b"000bnewarg\n" + b"0000"
    answer = httpx.post(
        f"{hosted.service.url}/git/{WS}.git/git-upload-pack",
        content=asked,
        auth=("ann", hosted.writer),
        headers={"Git-Protocol": "version=2", "Content-Type": "application/x-git-upload-pack-request"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    assert answer.content[4:].startswith(b"ERR ls-refs has no argument 'newarg'"), answer.content


def test_a_v0_fetch_sees_main_alone(hosted: Hosted) -> None:
    """A commit an outside write left aside (`refs/selfhub/refused/`) is never served."""
    head = hosted.head()
    assert head is not None
    gc.ok(hosted.tmp, "update-ref", f"refs/selfhub/refused/{head}", head, cwd=hosted.store)
    listed = hosted.git(*_v("0"), "ls-remote", hosted.url)
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[1] for line in listed.stdout.splitlines()] == ["HEAD", "refs/heads/main"]
