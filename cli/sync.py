"""Sync commands: remote add/list/remove, sync, clone."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cli.common import OPTIONS, JsonOpt, echo, emit_json, fail

if TYPE_CHECKING:  # imported where called, as every command does
    from service.store import Store
    from service.sync import Options, Summary

PROGRESS_FROM = 256 * 1024  # bytes moved before a sync shows progress (a clone always does)


def _store() -> Store:
    from service.app import store_root
    from service.store import Store

    return Store.open(store_root(OPTIONS.workspace))


MAX_TRIES = 100
MAX_SECONDS = 86400.0


def _setting(flag: str, given: float | None, env: str, default: float) -> tuple[float, str]:
    """The value of a sync setting (the flag, else the environment, else the default) and how
    the user wrote it, for the message that refuses it."""
    from service.model.errors import Invalid

    if given is not None:
        return float(given), f"{flag} {given:g}"
    raw = os.environ.get(env)
    if not raw:
        return float(default), f"{flag} {default:g}"
    try:
        return float(raw), f"{env}={raw}"
    except ValueError:
        raise Invalid(f"{env}={raw!r} is not a number") from None


def _seconds(flag: str, given: float | None, env: str, default: float) -> float:
    from service.model.errors import Invalid

    value, shown = _setting(flag, given, env, default)
    if not 0 < value <= MAX_SECONDS:  # NaN fails too
        raise Invalid(f"{shown}: give seconds above 0 and at most {MAX_SECONDS:g}")
    return value


def _tries(given: int | None) -> int:
    from service.model.errors import Invalid
    from service.sync.engine import DEFAULT_TRIES

    value, shown = _setting("--tries", given, "SELF_SYNC_TRIES", DEFAULT_TRIES)
    if not (value.is_integer() and 1 <= value <= MAX_TRIES):
        raise Invalid(f"{shown}: give a number of pushes from 1 to {MAX_TRIES}")
    return int(value)


class Progress:
    """One self-rewriting line on stderr: the step under way as a bar (the server counts
    objects, dulwich copies and indexes them, each with a known total), then bytes received
    and sent, and the rate.

    Only on a terminal and never with --json; a sync shows it once `start` bytes have moved.
    Plain writes, no rich: it costs a sync nothing when it is not drawn.
    """

    def __init__(self, label: str, enabled: bool = True, start: int = PROGRESS_FROM) -> None:
        self.label = label
        self.start = start
        self.enabled = enabled and sys.stderr.isatty()
        self.shown = False
        self._began = time.monotonic()
        self._last = 0.0
        self._moved = (0, 0)
        self._step: tuple[str, int, int] | None = None

    def __call__(self, received: int, sent: int) -> None:
        self._moved = (received, sent)
        if self._step is not None and self._step[1] >= self._step[2]:
            self._step = None  # a finished step: bytes moving now belong to the next one
        self._tick()

    def stage(self, what: str, done: int, total: int) -> None:
        self._step = (what[:1].upper() + what[1:], done, total)
        self._tick()

    def _tick(self) -> None:
        if not self.enabled or sum(self._moved) < self.start:
            return
        now = time.monotonic()
        if now - self._last >= 0.1:
            self._last = now
            self._draw(now)

    def done(self) -> None:
        received, sent = self._moved
        if self.enabled and (self.shown or received + sent >= self.start):
            self._draw(time.monotonic())
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _draw(self, now: float) -> None:
        self.shown = True
        moved = _moved(*self._moved, now - self._began)
        step = f"{_bar(*self._step)} · " if self._step is not None else ""
        sys.stderr.write(f"\r\x1b[K{self.label}: {step}{moved}")
        sys.stderr.flush()


def _moved(received: int, sent: int, seconds: float) -> str:
    rate = (received + sent) / seconds if seconds > 0 else 0.0
    return f"{_size(received)} received, {_size(sent)} sent, {_size(rate)}/s"


def _bar(what: str, done: int, total: int, width: int = 20) -> str:
    share = min(1.0, done / total) if total > 0 else 0.0
    filled = round(share * width)
    return f"{what} [{'#' * filled}{'-' * (width - filled)}] {share:4.0%} ({done}/{total})"


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _options(tries: int | None, timeout: float | None, deadline: float | None, progress: Progress) -> Options:
    """The sync options, each checked before anything is opened or sent."""
    from service.sync import Options
    from service.sync.engine import DEFAULT_DEADLINE, DEFAULT_TIMEOUT

    return Options(
        tries=_tries(tries),
        timeout=_seconds("--timeout", timeout, "SELF_SYNC_TIMEOUT", DEFAULT_TIMEOUT),
        deadline=_seconds("--deadline", deadline, "SELF_SYNC_DEADLINE", DEFAULT_DEADLINE),
        activity=progress,
        stage=progress.stage if progress.enabled else None,
    )


TriesOpt = typer.Option(None, "--tries", help="Pushes to try before giving up (default 8, SELF_SYNC_TRIES).")
TimeoutOpt = typer.Option(
    None, "--timeout", help="Seconds any one wait for the remote may take (default 30, SELF_SYNC_TIMEOUT)."
)
DeadlineOpt = typer.Option(
    None,
    "--deadline",
    help="Seconds the whole sync or clone may take, however the remote answers "
    "(default 600, SELF_SYNC_DEADLINE).",
)


def register(app: typer.Typer) -> None:
    remote = typer.Typer(no_args_is_help=True, add_completion=False, help="Git remotes to sync with.")
    app.add_typer(remote, name="remote")

    @remote.command("add")
    def remote_add(
        url: str = typer.Argument(..., help="A path, file://, git://, ssh:// or user@host:path, http(s)://."),
        name: str = typer.Option("origin", "--name", help="The remote's name."),
        init: bool = typer.Option(False, "--init", help="Make an empty bare repository at a local path."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Add a remote (kept in the store's .git/config; tokens never go in the URL)."""
        from service.sync import remotes

        with _store() as store:
            stored = remotes.add(store.repo, url, name, init=init)
        if as_json:
            return emit_json({"name": name, "url": stored})
        echo(f"added remote {name}: {stored}; run `self sync` to publish or fetch")

    @remote.command("list")
    def remote_list(as_json: bool = JsonOpt) -> None:
        """Every remote with its URL and the head the last sync left."""
        from service.sync import last_synced, remotes

        with _store() as store:
            rows = [dict(row, synced=last_synced(store, row["name"])) for row in remotes.listed(store.repo)]
        if as_json:
            return emit_json(rows)
        if not rows:
            echo("no remotes; add one with `self remote add URL` (a bare repository will do)")
        for row in rows:
            synced = f"  (synced at {row['synced'][:12]})" if row["synced"] else "  (never synced)"
            echo(f"{row['name']}  {row['url']}{synced}")

    @remote.command("remove")
    def remote_remove(name: str, as_json: bool = JsonOpt) -> None:
        """Forget a remote (the remote itself is not touched)."""
        from service.sync import remotes
        from service.sync.engine import forget

        with _store() as store:
            url = remotes.remove(store.repo, name)
            forget(store, name)
        if as_json:
            return emit_json({"name": name, "url": url})
        echo(f"removed remote {name} ({url})")

    @app.command("sync")
    def sync_command(
        name: str | None = typer.Argument(None, help="The remote (default: every remote, in name order)."),
        tries: int | None = TriesOpt,
        timeout: float | None = TimeoutOpt,
        deadline: float | None = DeadlineOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Fetch, add the local events the remote lacks after its own, push; retry if others pushed first."""
        from service.sync.every import Round, sync_selected

        progress = Progress("sync", enabled=not as_json)
        options = _options(tries, timeout, deadline, progress)
        with _store() as store:
            try:
                result = sync_selected(store, name, options)
            finally:
                progress.done()
        if as_json:
            emit_json(result)
        elif isinstance(result, Round):
            for summary in result.syncs:
                _print_summary(summary)
        else:
            _print_summary(result)
        if isinstance(result, Round) and result.failed:
            *first, last = result.failed
            for failure in first:  # one line per remote
                typer.echo(f"self: {failure.remote}: {failure.error}", err=True)
            fail(f"{last.remote}: {last.error}", 1)

    @app.command("doctor")
    def doctor_command(
        repair: bool = typer.Option(
            False,
            "--repair",
            help="Set torn lines aside, remove merge leftovers, lay segments out again, commit.",
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Check the logs for what a crash or a plain-git merge leaves (torn lines, markers, repeats),
        and list the remotes that hold an event in other bytes than this store."""
        import msgspec

        from service.sync import doctor

        with _store() as store:
            report = doctor.repair(store) if repair else doctor.examine(store)
        if as_json:
            data = msgspec.to_builtins(report)
            for row, log in zip(data["logs"], report.logs, strict=True):
                row["damaged"] = log.damaged
            return emit_json(data)
        for log in report.logs:
            name = "workspace" if log.log == "" else log.log
            state = "needs repair" if log.damaged else "ok"
            echo(
                f"{name}: {log.events} events, {log.torn} torn lines, {log.markers} conflict markers, "
                f"{log.duplicates} repeated ({log.conflicting} with other bytes), {log.unreadable} "
                f"unreadable lines, segments {'laid out' if log.laid_out else 'not laid out'} — {state}"
            )
        for path in report.set_aside:
            echo(f"torn lines moved to {path}")
        if report.uncommitted:
            echo(f"uncommitted: {', '.join(report.uncommitted)}")
        for flag in report.remotes:
            echo(
                f"remote {flag.remote} ({flag.url}) holds {len(flag.ids)} event(s) in other bytes than this "
                f"store (seen {flag.seen}): {', '.join(flag.ids)}; this store keeps its copies and will not "
                "sync with it until the remote's copies are put back as they were"
            )
        for lock in report.locks:
            echo(f"lock file: {lock} (a crashed git write leaves one; --repair removes it if no git runs)")
        if report.repaired:
            echo(f"repaired; head {str(report.head)[:12]}. Run `self sync` to publish the repair")
        elif any(log.damaged for log in report.logs) or report.uncommitted or report.locks:
            echo("run `self doctor --repair` to fix (no event is dropped)")

    @app.command("clone")
    def clone_command(
        url: str = typer.Argument(..., help="The remote holding a selfhub workspace."),
        directory: str | None = typer.Argument(None, help="Where to put the store (default: from the URL)."),
        timeout: float | None = TimeoutOpt,
        deadline: float | None = DeadlineOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Make a new workspace store from a remote (its remote `origin` is set)."""
        from service.sync import clone

        progress = Progress("clone", enabled=not as_json, start=0)
        options = _options(None, timeout, deadline, progress)
        try:
            target = Path(directory) if directory else None
            store, summary = clone(url, target, options)
        finally:
            progress.done()
        with store:
            root = store.root
        if as_json:
            return emit_json({"workspace": str(root), **_as_dict(summary)})
        echo(f"cloned {summary.url} into {root}: {summary.pulled} events, head {str(summary.head)[:12]}")
        echo(f"export SELF_WORKSPACE={root}")


def _as_dict(summary: object) -> dict[str, object]:
    import msgspec

    found: dict[str, object] = msgspec.to_builtins(summary)
    return found


def _print_summary(summary: Summary) -> None:
    head = (summary.head or "")[:12]
    if summary.created:
        echo(f"published the local history to {summary.url}: {summary.pushed} events, head {head}")
    else:
        echo(
            f"synced with {summary.remote}: {summary.pulled} pulled, {summary.pushed} pushed, "
            f"{summary.retries} retries, head {head}"
        )
    if summary.rewritten:
        echo(
            "warning: the remote's history was rewritten (a force-push elsewhere); "
            f"{summary.restored} events it had lost were appended again"
        )
    if summary.merged:
        echo("the local history is published on another remote too: pushed the merge of both heads")
    if summary.repaired:
        echo(f"repaired the remote's logs: {summary.repaired} conflict markers or repeated events removed")
    if summary.quarantined:
        echo(f"warning: {summary.quarantined} lines of the remote's logs are not events (kept as they are)")
    if summary.kept_aside:
        echo(f"warning: {summary.kept_aside} unreadable local lines kept in .local/quarantine/, not pushed")
    if summary.config == "kept-remote":
        echo(
            "warning: workspace.json differs from the remote's and both changed; kept the remote's, "
            "yours is in .local/sync/workspace.json.local"
        )
