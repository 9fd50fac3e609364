"""Every error selfhub defines is a `SelfhubError` (`service/core/errors.py`), directly or
through its package's root, and carries a code of the problem table; an API error answers with
that code's status.

Every module of `service` and `cli` is imported, found by its file rather than by
`pkgutil.walk_packages`, which skips a folder without `__init__.py` (`service/server/live`). Warnings
(`SetAside`, `StaleLock`, …) are not errors: `warnings.warn` takes a `Warning` category, and
none is raised as an error, so they keep that base and nothing else.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from service.core.errors import SelfhubError
from service.core.problems import CODES
from service.server.api.errors import ApiError

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> list[ModuleType]:
    found = []
    for top in ("service", "cli"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts)))
    return found


def _defined() -> list[type[BaseException]]:
    """Every exception class a module of the project defines (not the ones it imports)."""
    return [
        obj
        for module in _modules()
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__
    ]


def test_the_walk_sees_every_family() -> None:
    names = {cls.__name__ for cls in _defined()}
    roots = {"ModelError", "StoreError", "SyncError", "DataError", "AuthError", "SearchIndexError"}
    assert roots | {"LiveError", "EndpointError", "ApiError", "WebError", "SetAside"} <= names


def test_every_error_is_a_selfhub_error() -> None:
    strays = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _defined()
        if not issubclass(cls, SelfhubError | Warning)
    ]
    assert not strays, "derive these from SelfhubError (or their package's root): " + ", ".join(strays)


def test_no_warning_is_an_error() -> None:
    both = [cls for cls in _defined() if issubclass(cls, Warning) and issubclass(cls, SelfhubError)]
    assert not both


def test_every_error_class_has_a_code_in_the_table() -> None:
    unknown = [
        f"{cls.__qualname__}: {cls.code}"
        for cls in _defined()
        if issubclass(cls, SelfhubError) and cls.code not in CODES
    ]
    assert not unknown


def test_an_api_error_answers_with_its_codes_status() -> None:
    api = [cls for cls in _defined() if issubclass(cls, ApiError)]
    assert len(api) > 5
    assert all(cls.status == CODES[cls.code].status for cls in api)
    with pytest.raises(TypeError, match="problem table"):

        class Teapot(ApiError):
            code = "forbidden"
            status = 418
