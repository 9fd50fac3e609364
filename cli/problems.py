"""How the CLI words a model error: each field as the flag (or argument) that sets it, and
the hint that names the command to run next. The model's messages name neither."""

from __future__ import annotations

from service.core.errors import ModelError

FLAGS = {  # a field whose flag is not `--` + the field with dashes
    "labels": "--label",
    "criteria": "--criterion",
    "alternatives": "--alternative",
    "applies_to": "--scope",
    "options": "--option",
    "pinned": "--pin",
    "link_type": "--type",
    "description": "--desc",
    "tokens_per_char": "--set",
    "n": "-n",
    "record": "RECORD",
    "units": "UNITS",
    "slug": "SLUG",
    "verb": "VERB",
    "action": "ACTION",
}
VERBS = {"run-exited": "exited"}  # a command whose `self work` verb is another word
STATE_VERBS = ("start", "unblock", "done", "retire", "restore")  # what `self state` offers too
COMMANDS = {"doctor": "`self doctor`"}  # what a store's or sync's message names by its slot
RECORD_FIELDS = ("record", "target", "supports", "depends_on", "answers", "supersedes", "demote", "units")
HINTS = {  # (code, field) → what to run; formatted with the error's `about`
    ("not-found", "slug"): "; `self project list` shows them",
    ("exists", "slug"): "; `self project list` shows them",
    ("not-found", "verb"): "; `self alias add {verb} --label L` adds one",
    ("exists", "verb"): "; `self alias set {verb} …` changes it",
    ("invalid-value", "text"): ' (`self question add "…"`)',
    (
        "wrong-state",
        "options",
    ): '; add them with `self question add "…" --option "ANSWER=ACTION"` (superseding it)',
    ("wrong-kind", "reads"): " (`self work add`)",
    ("missing-value", "units"): ": `self work parallel ID ID...`",
    ("person-required", "proposed"): " with `self state confirm {id}`",
    (
        "evidence-required",
        "report",
    ): ": add a report with --commit or --artifact, or pass --report with the done",
    ("criteria-uncovered", None): " (cover each with `self state cover`)",
    ("sanitize", None): " (see `self help sanitize`)",
    ("not-found", "preset"): "; `self alias` lists verbs",
    ("not-found", "project"): "; `self project add` registers one",
    ("no-checkout", None): ": run `self project link` in it",
    ("not-a-store", None): "; run `self init` to create one, or pass --workspace PATH to use another",
    ("already-a-store", None): "; open it instead of running `self init`",
    ("not-empty", None): "; run `self init` in an empty folder",
    ("not-a-folder", None): "; give `self init` a new or empty folder you can write",
    ("no-checkout", "record"): " (`self project link` before `self work start`)",
    ("bad-marker", None): "; run `self project link <slug>` here to rewrite it",
    ("no-remote", None): ": add one with `self remote add URL` (a bare repository will do)",
    ("unknown-remote", None): "; add one with `self remote add URL --name {name}`",
    ("remote-exists", None): "; `self remote remove {name}` first, or pick another --name",
    ("empty-remote", None): (
        ". Publish a workspace there with `self remote add URL` and `self sync` from the store that has it"
    ),
    ("kept-moving", None): "; run `self sync` again, or raise --tries",
    ("declined", None): "; settle it with the server's owner, then `self sync`",
    ("unknown-workspace", None): "; `self admin workspace add NAME --data DIR` creates one",
    ("not-a-data-dir", None): (
        "; check the path, or make one with `self admin workspace add NAME --data DIR` "
        "(an empty folder will do too)"
    ),
    ("format-older", None): "; run `self admin upgrade --data {path}` (it backs the data up first)",
    ("unknown-user", None): "; `self admin user add {name} --data DIR` adds one",
    ("missing-value", "token"): "; `self login URL` reads one from stdin or a prompt and keeps it",
    ("auth-failed", None): "; `self login URL` keeps a token for a team service",
    ("not-found", "login"): ": run `self login URL` (`self whoami` lists the logins)",
    ("invalid-value", "user"): "; `self config user NAME` sets the name your writes carry",
    ("unknown-token", None): "; `self admin token list --data DIR` shows the ids",
    ("no-workspace", None): (
        ": run `self init DIR`, then pass --workspace DIR or set SELF_WORKSPACE=DIR "
        "(or `self clone URL DIR` to make one from a remote)"
    ),
    (
        "no-project",
        None,
    ): ": pass --project SLUG, set SELF_PROJECT, or run `self project link SLUG` in the checkout",
}


def flag(field: str) -> str:
    return FLAGS.get(field, "--" + field.replace("_", "-"))


def message(exc: ModelError) -> str:
    """The error's message with flags for fields and the CLI's hint."""
    return exc.detail(flag) + hint(exc)


def adapter_message(exc: BaseException) -> str:
    """An adapter error's message (the store's, sync's, the data directory's, auth's) with the
    CLI's flags and commands in its slots, and the hint its code has."""
    from service.app.errors import adapter_code, adapter_detail

    return adapter_detail(exc, slot) + adapter_hint(adapter_code(exc) or "store", getattr(exc, "about", {}))


def slot(field: str) -> str:
    """A slot of an adapter's message: the command it names, else the flag of the option."""
    return COMMANDS.get(field) or flag(field)


def adapter_hint(code: str, about: dict[str, str] | None = None) -> str:
    """What to run after an adapter's error (`code`: its class's; `about`: what it names)."""
    return HINTS.get((code, None), "").format(**(about or {}))


def hint(exc: ModelError) -> str:
    about = exc.about
    if exc.code == "not-found" and exc.field in RECORD_FIELDS:
        return "; `self state list --all` lists ids"
    if exc.code == "wrong-kind" and "verb" in about:
        verb, record = VERBS.get(about["verb"], about["verb"]), about.get("id", "ID")
        other = f"; `self state {verb} {record}` acts on any record" if verb in STATE_VERBS else ""
        return f": `self work {verb}` acts on work units{other}"
    if exc.code == "other-log" and about.get("log") == "workspace":
        return " (--workspace)"
    if exc.code == "wrong-state" and about.get("state") in ("done", "retired"):
        return "; `self state restore` reopens done or retired work"
    found = HINTS.get((exc.code, exc.field))
    return "" if found is None else found.format(**about)
