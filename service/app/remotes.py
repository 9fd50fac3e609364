"""Remotes and sync as a front end calls them: the remote table, a sync, a doctor's report, a
clone, and the sync settings (given, else SELF_SYNC_TRIES / _TIMEOUT / _DEADLINE, else the
default), each checked before anything is opened or sent."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from service.core.errors import Invalid

if TYPE_CHECKING:
    from service.adapters.store import Store
    from service.adapters.sync import Options as Options
    from service.adapters.sync import Summary as Summary
    from service.adapters.sync.doctor import Report as Report
    from service.adapters.sync.every import Round

    Synced = Summary | Round

MAX_TRIES = 100
MAX_SECONDS = 86400.0


def _store(given: str | None) -> Store:
    from service.adapters.store import Store
    from service.app.locate import store_root

    return Store.open(store_root(given))


class Remote(msgspec.Struct, frozen=True):
    name: str
    url: str


class RemoteLine(msgspec.Struct, frozen=True):
    """A remote (credentials shown as ***) and the head the last sync with it left."""

    name: str
    url: str
    synced: str | None


def add(given: str | None, url: str, name: str, init: bool) -> Remote:
    """Record a remote (in the store's .git/config; tokens never go in the URL)."""
    from service.adapters.sync import remotes

    with _store(given) as store:
        return Remote(name, remotes.add(store.repo, url, name, init=init))


def listed(given: str | None) -> list[RemoteLine]:
    from service.adapters.sync import last_synced, remotes

    with _store(given) as store:
        rows = remotes.listed(store.repo)
        return [RemoteLine(row["name"], row["url"], last_synced(store, row["name"])) for row in rows]


def remove(given: str | None, name: str) -> Remote:
    """Forget a remote (the remote itself is not touched)."""
    from service.adapters.sync import remotes
    from service.adapters.sync.remembered import forget

    with _store(given) as store:
        url = remotes.remove(store.repo, name)
        forget(store, name)
    return Remote(name, url)


def sync(given: str | None, name: str | None, options: Options) -> Synced:
    """Sync with the remote named; with none named, the only one, or every one."""
    from service.adapters.sync.every import sync_selected

    with _store(given) as store:
        return sync_selected(store, name, options)


def failures(result: Synced) -> list[tuple[str, str]]:
    """(remote, error) of each remote a round could not sync with."""
    from service.adapters.sync.every import Round

    return [(f.remote, str(f.error)) for f in result.failed] if isinstance(result, Round) else []


def summaries(result: Synced) -> list[Summary]:
    from service.adapters.sync.every import Round

    return list(result.syncs) if isinstance(result, Round) else [result]


def doctor(given: str | None, repair: bool) -> Report:
    """The logs checked for what a crash or a plain-git merge leaves; repaired when asked."""
    from service.adapters.sync import doctor as examine

    with _store(given) as store:
        return examine.repair(store) if repair else examine.examine(store)


class LogCheck(msgspec.Struct, frozen=True):
    """One log as `self doctor` found it (`adapters/sync/doctor.py: LogReport`), and whether it is damaged."""

    log: str
    events: int
    markers: int
    duplicates: int
    conflicting: int
    unreadable: int
    laid_out: bool
    torn: int
    damaged: bool


class DifferingRemote(msgspec.Struct, frozen=True):
    """A remote whose last sync stopped on events it holds in other bytes (`identity.Flag`)."""

    remote: str
    url: str
    ids: list[str]
    seen: str


class Doctored(msgspec.Struct, frozen=True):
    """What `self doctor --json` prints: the report (`adapters/sync/doctor.py: Report`), each log with
    whether it is damaged."""

    logs: list[LogCheck]
    uncommitted: list[str]
    repaired: bool
    head: str | None
    remotes: list[DifferingRemote]
    set_aside: list[str]
    locks: list[str]
    read_only: list[str]  # what a write needs that this user may not write


def doctor_document(report: Report) -> Doctored:
    data: dict[str, Any] = msgspec.to_builtins(report)
    for row, log in zip(data["logs"], report.logs, strict=True):
        row["damaged"] = log.damaged
    return msgspec.convert(data, Doctored)


def clone(url: str, directory: str | None, options: Options) -> tuple[str, Summary]:
    """A new store from the remote at `url` (its remote `origin` set): its folder, the sync."""
    from pathlib import Path

    from service.adapters.sync import clone as cloned

    store, summary = cloned(url, Path(directory) if directory else None, options)
    with store:
        return str(store.root), summary


class Cloned(msgspec.Struct, frozen=True):
    """What `self clone --json` prints: the new store's folder, then the sync's summary
    (`adapters/sync/engine.py: Summary`, field for field)."""

    workspace: str
    remote: str
    url: str
    head: str | None
    pulled: int
    pushed: int
    retries: int
    created: bool
    merged: bool
    rewritten: bool
    restored: int
    quarantined: int
    repaired: int
    kept_aside: int
    config: str
    bytes_received: int
    bytes_sent: int
    seconds: float
    paused: float  # of the seconds, the pauses between a rejected push and the next try


def clone_document(root: str, summary: Summary) -> Cloned:
    return msgspec.convert({"workspace": root, **msgspec.to_builtins(summary)}, Cloned)


def options(
    tries: int | None,
    timeout: float | None,
    deadline: float | None,
    activity: Callable[[int, int], None] | None = None,
    stage: Callable[[str, int, int], None] | None = None,
    describe: Callable[[BaseException], str] = str,
) -> Options:
    """The sync options, each checked before anything is opened or sent; `describe` words a
    failed remote's error in a round (the CLI adds its flags and hints)."""
    from service.adapters.sync import Options
    from service.adapters.sync.engine import DEFAULT_DEADLINE, DEFAULT_TIMEOUT

    return Options(
        tries=_tries(tries),
        timeout=_seconds("timeout", timeout, "SELF_SYNC_TIMEOUT", DEFAULT_TIMEOUT),
        deadline=_seconds("deadline", deadline, "SELF_SYNC_DEADLINE", DEFAULT_DEADLINE),
        activity=activity,
        stage=stage,
        describe=describe,
    )


def _setting(field: str, given: float | None, env: str, default: float) -> tuple[float, str]:
    """The value of a sync setting (given, else the environment, else the default) and how the
    user wrote it, for the message that refuses it (the option as its `{field}` slot)."""
    if given is not None:
        return float(given), f"{{{field}}} {given:g}"
    raw = os.environ.get(env)
    if not raw:
        return float(default), f"{{{field}}} {default:g}"
    try:
        return float(raw), f"{env}={raw}"
    except ValueError:
        raise Invalid(f"{env}={raw!r} is not a number") from None


def _seconds(field: str, given: float | None, env: str, default: float) -> float:
    value, shown = _setting(field, given, env, default)
    if not 0 < value <= MAX_SECONDS:  # NaN fails too
        raise Invalid(f"{shown}: give seconds above 0 and at most {MAX_SECONDS:g}", field=field)
    return value


def _tries(given: int | None) -> int:
    from service.adapters.sync.engine import DEFAULT_TRIES

    value, shown = _setting("tries", given, "SELF_SYNC_TRIES", DEFAULT_TRIES)
    if not (value.is_integer() and 1 <= value <= MAX_TRIES):
        raise Invalid(f"{shown}: give a number of pushes from 1 to {MAX_TRIES}", field="tries")
    return int(value)
