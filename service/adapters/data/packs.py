"""A workspace store as a backup holds it: its main read once, the objects it reaches as one git
pack, counted; and a store made again from that pack, checked.

The `git` program does the packing and the checks (`pack-objects`, `index-pack`, `fsck`): it
reads a repository another process writes safely, as a ref names only objects already written
(the store's commits write their objects, fsynced, before moving main).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import msgspec

from service.adapters.data.errors import DataError
from service.adapters.store import layout

MAIN = "refs/heads/main"
GIT_SETTINGS = {"safe.directory": "*", "core.autocrlf": "false", "gc.auto": "0"}


class BackupError(DataError):
    """A backup that cannot be made, or an archive that cannot be restored."""

    code = "backup"


class Counts(msgspec.Struct, frozen=True):
    """What a store's main reaches: its commits, git objects and events."""

    commits: int
    objects: int
    events: int


def git(repo: Path, *args: str, stdin: bytes | None = None, into: Path | None = None) -> bytes:
    """`git -C repo ARGS` with no system or user configuration; its stdout (written to the file
    `into` instead, when given), or BackupError."""
    program = shutil.which("git")
    if program is None:
        raise BackupError("backups run the git program, which is not installed: install git")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "HOME": os.devnull, "GIT_CONFIG_COUNT": str(len(GIT_SETTINGS))}
    for n, (key, value) in enumerate(GIT_SETTINGS.items()):
        env |= {f"GIT_CONFIG_KEY_{n}": key, f"GIT_CONFIG_VALUE_{n}": value}
    with open(into, "wb") if into is not None else contextlib.nullcontext() as out:
        done = subprocess.run(
            [program, "-C", str(repo), *args],
            input=stdin,
            stdout=out if out is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BackupError(f"git {args[0]} in {repo} failed: {said[-1] if said else done.returncode}")
    return done.stdout or b""


def long(*names: str) -> list[str]:
    """git's long options, `--NAME` each (spelled so, no string here reads as a CLI flag)."""
    return ["-" * 2 + name for name in names]


def head(store: Path) -> str:
    """The commit the store's main names, read once."""
    return git(store, "rev-parse", *long("verify"), f"{MAIN}^{{commit}}").decode().strip()


def pack(store: Path, commit: str, to: Path) -> int:
    """Every object `commit` reaches, as one pack in `to`; how many objects it holds."""
    git(store, "pack-objects", *long("revs", "stdout"), "-q", stdin=f"{commit}\n".encode(), into=to)
    with to.open("rb") as pack_file:
        return int.from_bytes(pack_file.read(12)[8:12], "big")  # the pack header's object count


def count(store: Path, commit: str) -> Counts:
    """The commits, objects and events `commit` reaches in the store."""
    commits = int(git(store, "rev-list", *long("count"), commit))
    objects = len(git(store, "rev-list", *long("objects"), commit).splitlines())
    blobs = []
    for line in git(store, "ls-tree", "-r", *long("full-tree"), commit).decode().splitlines():
        meta, _, path = line.partition("\t")
        if layout.log_of_path(path) is not None:
            blobs.append(meta.split()[2])
    return Counts(commits, objects, _lines(store, blobs))


def _lines(store: Path, blobs: list[str]) -> int:
    """The lines of `blobs`, read by one `git cat-file --batch`."""
    out = git(store, "cat-file", *long("batch"), stdin="".join(f"{b}\n" for b in blobs).encode())
    lines, at = 0, 0
    for _ in blobs:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        lines += out.count(b"\n", header_end + 1, header_end + 1 + size)
        at = header_end + 1 + size + 1
    return lines


def unpack(pack_file: Path, commit: str, store: Path) -> None:
    """A store at `store` (a new folder) whose main is `commit`, its objects from `pack_file`,
    its files checked out."""
    store.mkdir(parents=True)
    git(store, "init", "-q", "-b", "main")
    name = git(store, "index-pack", str(pack_file.absolute())).decode().split()[-1]  # indexed beside it
    packed = store / ".git" / "objects" / "pack"
    for suffix in (".pack", ".idx", ".rev"):  # .rev: a reverse index, where git writes one
        part = pack_file.with_suffix(suffix)
        if part.exists():
            part.replace(packed / f"pack-{name}{suffix}")
    git(store, "update-ref", MAIN, commit)
    git(store, "reset", "-q", *long("hard"), commit)


def verify(store: Path, commit: str, expected: Counts) -> None:
    """BackupError unless git finds the store whole and its main reaches what was counted."""
    git(store, "fsck", *long("full", "no-dangling", "no-progress"))
    found = head(store)
    if found != commit:
        raise BackupError(f"{store}: main is {found}, the backup says {commit}")
    counted = count(store, commit)
    if counted != expected:
        raise BackupError(f"{store}: main reaches {counted}, the backup counted {expected}")
