"""Errors of the on-disk store. Every message says what is wrong and names no front end: an
option appears in it as `{field}` (`str()` gives its name, the CLI its flag), and a front end adds
what to run next (the CLI: `cli/problems.py`, by the error's `code` and its `about`)."""

from __future__ import annotations

from collections.abc import Callable

from service.core.errors import SelfhubError, fill, plain


class StoreError(SelfhubError):
    """Root of every error the store raises."""

    code = "store"

    def __init__(self, message: str = "", *, field: str | tuple[str, ...] = (), **about: str) -> None:
        self.template = message
        self.fields: tuple[str, ...] = (field,) if isinstance(field, str) else tuple(field)
        super().__init__(self.detail(), **about)

    def detail(self, name: Callable[[str], str] = plain) -> str:
        """The message with each of its fields rendered by `name` (the CLI passes its flags)."""
        return fill(self.template, self.fields, name)


class NotAStore(StoreError):
    """The path holds no workspace store."""

    code = "not-a-store"

    def __init__(self, path: object) -> None:
        super().__init__(f"{path} is not a selfhub workspace (no workspace.json and .git there)")


class AlreadyAStore(StoreError):
    """`init` on a path that already holds a store."""

    code = "already-a-store"

    def __init__(self, path: object) -> None:
        super().__init__(f"{path} is already a selfhub workspace")


class NotEmpty(StoreError):
    """A store is to be made where a git repository or a settings file already is."""

    code = "not-empty"


class NotAFolder(StoreError):
    """A path the store needs as a folder is a file, or no folder can be made there."""

    code = "not-a-folder"


class NotWritable(StoreError):
    """A write where this user may not write: a store (or a data directory) whose files are
    another account's, or on a read-only mount. Reads go on; nothing was written."""

    code = "not-writable"

    def __init__(self, path: object, what: str = "the store") -> None:
        super().__init__(
            f"cannot write {path}: permission denied ({what} is read-only for you); nothing was "
            "written. Write from the account that owns it, or make it writable for yours",
            path=str(path),
        )


def not_writable(exc: OSError) -> bool:
    """Whether the filesystem refused `exc`'s write for want of permission or a writable mount."""
    import errno

    return exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)


class StoreLocked(StoreError):
    """Another process holds the store lock for longer than the timeout."""

    code = "store-locked"

    def __init__(self, lock_file: object, timeout: float) -> None:
        super().__init__(
            f"the workspace is locked by another process ({lock_file}, waited {timeout:g} s); "
            "wait for it to finish and retry, or raise the lock timeout"
        )


class RefMoved(StoreError):
    """refs/heads/main moved while a commit was being built (compare-and-swap failed)."""

    code = "ref-moved"

    def __init__(self, expected: str | None, found: str | None) -> None:
        super().__init__(
            f"refs/heads/main moved during the commit (expected {expected or 'no commit'}, "
            f"found {found or 'no commit'}); something outside selfhub wrote the branch. "
            "Nothing was appended; retry the command"
        )


class CorruptFile(StoreError):
    """A machine-local or settings file cannot be read."""

    code = "corrupt-file"


class BadMarker(CorruptFile):
    """A checkout's `.selfhub` marker cannot be read (linking the checkout again rewrites it)."""

    code = "bad-marker"


class NotRegular(StoreError):
    """A log segment that is a symbolic link or not a regular file."""

    code = "not-regular"

    def __init__(self, path: object) -> None:
        super().__init__(
            f"{path} is a symbolic link or not a regular file; a store's logs are regular files "
            "only, so nothing was read or written through it: remove it, and restore the file "
            "from git (`git checkout -- FILE`) or clone the workspace again"
        )


class NewerStore(StoreError):
    """A store of a format this release does not read (`layout.check_format`)."""

    code = "format-newer"

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path} {problem}")
