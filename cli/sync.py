"""Sync commands: remote add/list/remove, sync, clone."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import typer

from cli.common import OPTIONS, JsonOpt, fail, show

if TYPE_CHECKING:  # imported where called, as every command does
    from service.app.remotes import Options, RemoteLine, Report, Summary

PROGRESS_FROM = 256 * 1024  # bytes moved before a sync shows progress (a clone always does)


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
    from cli.problems import adapter_message
    from service.app import remotes

    stage = progress.stage if progress.enabled else None
    return remotes.options(tries, timeout, deadline, progress, stage, adapter_message)


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
        from service.app import remotes

        added = remotes.add(OPTIONS.workspace, url, name, init)
        show(added, as_json, lambda r: f"added remote {r.name}: {r.url}; run `self sync` to publish or fetch")

    @remote.command("list")
    def remote_list(as_json: bool = JsonOpt) -> None:
        """Every remote with its URL and the head the last sync left."""
        from service.app import remotes

        show(remotes.listed(OPTIONS.workspace), as_json, _remote_lines)

    @remote.command("remove")
    def remote_remove(name: str, as_json: bool = JsonOpt) -> None:
        """Forget a remote (the remote itself is not touched)."""
        from service.app import remotes

        show(remotes.remove(OPTIONS.workspace, name), as_json, lambda r: f"removed remote {r.name} ({r.url})")

    @app.command("sync")
    def sync_command(
        name: str | None = typer.Argument(None, help="The remote (default: every remote, in name order)."),
        tries: int | None = TriesOpt,
        timeout: float | None = TimeoutOpt,
        deadline: float | None = DeadlineOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Fetch, add the local events the remote lacks after its own, push; retry if others pushed first."""
        from service.app import remotes

        progress = Progress("sync", enabled=not as_json)
        options = _options(tries, timeout, deadline, progress)
        try:
            result = remotes.sync(OPTIONS.workspace, name, options)
        finally:
            progress.done()
        show(result, as_json, lambda r: "\n".join(_summary_lines(s) for s in remotes.summaries(r)))
        if failed := remotes.failures(result):
            *first, (remote, error) = failed
            for other, why in first:  # one line per remote
                typer.echo(f"self: {other}: {why}", err=True)
            fail(f"{remote}: {error}", 1)

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
        from service.app import remotes

        report = remotes.doctor(OPTIONS.workspace, repair)
        show(remotes.doctor_document(report), as_json, lambda _: _doctor_text(report))

    @app.command("clone")
    def clone_command(
        url: str = typer.Argument(..., help="The remote holding a selfhub workspace."),
        directory: str | None = typer.Argument(None, help="Where to put the store (default: from the URL)."),
        timeout: float | None = TimeoutOpt,
        deadline: float | None = DeadlineOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Make a new workspace store from a remote (its remote `origin` is set)."""
        from service.app import remotes

        progress = Progress("clone", enabled=not as_json, start=0)
        options = _options(None, timeout, deadline, progress)
        try:
            root, summary = remotes.clone(url, directory, options)
        finally:
            progress.done()
        show(
            remotes.clone_document(root, summary),
            as_json,
            lambda _: (
                f"cloned {summary.url} into {root}: {summary.pulled} events, "
                f"head {str(summary.head)[:12]}\nexport SELF_WORKSPACE={root}"
            ),
        )


def _summary_lines(summary: Summary) -> str:
    lines: list[str] = []
    echo = lines.append
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
    return "\n".join(lines)


def _doctor_text(report: Report) -> str:
    lines: list[str] = []
    echo = lines.append  # one line each, as the other renders
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
    if report.read_only:
        echo(
            f"read-only for you: {', '.join(report.read_only)}; reads work, writes are refused: "
            "write from the account that owns the store, or make it writable for yours"
        )
    if report.repaired:
        echo(f"repaired; head {str(report.head)[:12]}. Run `self sync` to publish the repair")
    elif any(log.damaged for log in report.logs) or report.uncommitted or report.locks:
        echo("run `self doctor --repair` to fix (no event is dropped)")
    return "\n".join(lines)


def _remote_lines(rows: list[RemoteLine]) -> str:
    if not rows:
        return "no remotes; add one with `self remote add URL` (a bare repository will do)"
    synced = [f"  (synced at {row.synced[:12]})" if row.synced else "  (never synced)" for row in rows]
    return "\n".join(f"{row.name}  {row.url}{mark}" for row, mark in zip(rows, synced, strict=True))
