"""The endpoint's own `ls-refs` (protocol v2) answers byte for byte as C git's
`git upload-pack` does for a store's refs (main, and HEAD pointing at it), for every argument
a client sends, on a store with commits and on an empty one; a malformed request is refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from service.server.endpoint import lsrefs, pkt
from service.server.endpoint.errors import BadRequest
from tests.support.servers import GIT

ARGUMENTS = [
    [],
    ["symrefs"],
    ["peel", "symrefs", "unborn", "ref-prefix HEAD", "ref-prefix refs/heads/", "ref-prefix refs/tags/"],
    ["symrefs", "unborn"],
    ["unborn"],
    ["ref-prefix refs/heads/main"],
    ["ref-prefix refs/tags/"],
    ["symrefs", "ref-prefix HEAD"],
    ["ref-prefix refs/heads/ma", "peel"],
]


def _request(arguments: list[str]) -> bytes:
    capabilities = pkt.line(b"agent=git/2.39.5\n") + pkt.line(b"object-format=sha1\n")
    said = b"".join(pkt.line(f"{a}\n".encode()) for a in arguments)
    return capabilities + lsrefs.DELIM + said + pkt.FLUSH


def _git_answer(repo: Path, body: bytes) -> bytes:
    env = {
        "PATH": os.environ["PATH"],
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo.parent),
        "GIT_PROJECT_ROOT": str(repo.parent),
        "GIT_HTTP_EXPORT_ALL": "1",
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"/{repo.name}/git-upload-pack",
        "CONTENT_TYPE": "application/x-git-upload-pack-request",
        "GIT_PROTOCOL": "version=2",
        "CONTENT_LENGTH": str(len(body)),
    }
    out = subprocess.run([GIT or "git", "http-backend"], input=body, env=env, capture_output=True, check=True)
    return out.stdout.split(b"\r\n\r\n", 1)[1]


def _repo(tmp_path: Path, commits: bool) -> tuple[Path, str | None]:
    repo = tmp_path / "ws.git"
    subprocess.run([GIT or "git", "init", "-q", "--bare", "--initial-branch=main", str(repo)], check=True)
    if not commits:
        return repo, None
    work = tmp_path / "work"
    subprocess.run([GIT or "git", "clone", "-q", str(repo), str(work)], check=True, capture_output=True)
    (work / "workspace.json").write_text("{}\n")
    for args in (
        ["add", "-A"],
        ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
        ["push", "-q"],
    ):
        subprocess.run([GIT or "git", *args], cwd=work, check=True, capture_output=True)
    head = subprocess.run(
        [GIT or "git", "rev-parse", "main"], cwd=repo, check=True, capture_output=True, text=True
    )
    return repo, head.stdout.strip()


@pytest.mark.parametrize("commits", [True, False], ids=["with commits", "empty"])
def test_ls_refs_answers_as_git_upload_pack(tmp_path: Path, commits: bool) -> None:
    repo, head = _repo(tmp_path, commits)
    for arguments in ARGUMENTS:
        body = _request(arguments)
        git_said = _git_answer(repo, pkt.line(lsrefs.COMMAND) + body)
        assert lsrefs.answer(head, lsrefs.parse(body)) == git_said, arguments


@pytest.mark.parametrize(
    "body",
    [
        b"0008abc",  # cut inside a pkt-line
        pkt.line(b"symrefs\n") + pkt.FLUSH,  # arguments without the delimiter
        lsrefs.DELIM + pkt.line(b"symrefs\n"),  # no flush at the end
        lsrefs.DELIM + pkt.line(b"exec rm -rf /\n") + pkt.FLUSH,  # no such argument
        b"zzzz",
    ],
)
def test_a_malformed_ls_refs_request_is_refused(body: bytes) -> None:
    with pytest.raises(BadRequest):
        lsrefs.parse(body)
