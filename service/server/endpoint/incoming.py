"""A pushed pack, held apart from the store's objects until its push is accepted.

git's own `index-pack --strict` reads the pack as it arrives into a quarantine directory
(`.git/objects/incoming-*`), checking every object's form and that every object it names
exists, with the store's objects as an alternate: memory stays flat however large the pack.
The push gate then reads the pushed commits through `repo` (quarantine first, then the
store). Accepted, the pack moves into the store's pack directory (index first: a git reader
skips an index whose pack is not there yet, dulwich finds packs by their .pack file);
refused, the directory goes, and the store never held any of it.

A quarantine a stopped service left behind is removed at the next start (`sweep`).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID
from dulwich.repo import Repo

from service.server.endpoint import gitprog
from service.server.endpoint.errors import BadRequest, TooLarge

PREFIX = "incoming-"
MAX_PACK_BYTES = 2 * 1024**3
_ORDER = {".idx": 0, ".rev": 1, ".pack": 2}  # moved last to first as git readers need them


class Incoming:
    def __init__(self, store_root: Path) -> None:
        self.store_root = store_root
        self.objects = store_root / ".git" / "objects"
        self.path = self.objects / f"{PREFIX}{secrets.token_hex(8)}"
        (self.path / "pack").mkdir(parents=True)
        (self.path / "info").mkdir()
        (self.path / "info" / "alternates").write_text(f"{self.objects}\n")
        self._repo: Repo | None = None
        self._own: DiskObjectStore | None = None

    async def receive(self, chunks: AsyncIterator[bytes], most: int = MAX_PACK_BYTES) -> None:
        """Index the pack of `chunks` into the quarantine; BadRequest with git's reason when
        it is not a whole, well-formed pack whose objects are all at hand."""
        env = gitprog.environment(
            {"core.fsync": "pack,pack-metadata"},
            GIT_DIR=str(self.store_root / ".git"),
            GIT_OBJECT_DIRECTORY=str(self.path),
            GIT_ALTERNATE_OBJECT_DIRECTORIES=str(self.objects),
        )
        args = ["index-pack", "--stdin", "--strict", "--fix-thin", f"--max-input-size={most}"]
        proc = await asyncio.create_subprocess_exec(
            gitprog.program(),
            *args,
            cwd=self.path,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        said = asyncio.gather(proc.stdout.read(), proc.stderr.read())
        taken = 0
        try:
            async for chunk in chunks:
                taken += len(chunk)
                if taken > most:
                    raise TooLarge(f"a pushed pack may hold at most {most:,} bytes")
                if proc.stdin.is_closing():
                    break
                proc.stdin.write(chunk)
                await proc.stdin.drain()
            proc.stdin.close()
        except (OSError, RuntimeError):
            pass  # index-pack stopped reading (a closed pipe; uvloop says RuntimeError): why is on stderr
        except BaseException:
            proc.kill()
            await proc.wait()
            said.cancel()
            raise
        _, err = await said
        if await proc.wait() != 0:
            raise BadRequest(_reason(err))

    @property
    def repo(self) -> Repo:
        """The store as seen with the pushed objects in it."""
        if self._repo is None:
            store = DiskObjectStore(str(self.path), alternates=[str(self.objects)])
            self._repo = Repo(str(self.store_root), object_store=store)
        return self._repo

    def holds(self, sha: ObjectID) -> bool:
        """Whether `sha` came with the push (not from the store)."""
        if self._own is None:
            self._own = DiskObjectStore(str(self.path))
        return self._own.contains_packed(sha) or self._own.contains_loose(sha)  # `in` reads the alternates

    def known(self, sha: str) -> bool:
        """Whether the store or the push holds the object `sha` (hex)."""
        return ObjectID(sha.encode("ascii")) in self.repo.object_store

    def keep(self) -> None:
        """Move the pushed pack into the store's objects (the push was accepted)."""
        target = self.objects / "pack"
        files = sorted((self.path / "pack").iterdir(), key=lambda p: _ORDER.get(p.suffix, -1))
        for found in files:
            if found.suffix in _ORDER:
                os.replace(found, target / found.name)

    def drop(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None
        if self._own is not None:
            self._own.close()
            self._own = None
        shutil.rmtree(self.path, ignore_errors=True)


def sweep(store_root: Path) -> int:
    """Remove the quarantines a stopped service left behind (none is in use: call at start)."""
    gone = 0
    for found in (store_root / ".git" / "objects").glob(f"{PREFIX}*"):
        shutil.rmtree(found, ignore_errors=True)
        gone += 1
    return gone


def _reason(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    said = "; ".join(lines[-3:]) or "no reason given"
    return f"the pushed pack was not taken: {said[:500]}"
