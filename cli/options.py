"""The global options every `self` command takes (`--workspace DIR`, `--project X`, from
anywhere in the arguments), kept free of typer: the fast dispatch (cli/fast.py) reads them
before it knows whether typer runs at all."""

from __future__ import annotations

import os


class Options:
    workspace: str | None = None
    project: str | None = None


OPTIONS = Options()


def split_globals(argv: list[str]) -> list[str]:
    """Take `--project X` and `--workspace DIR` from anywhere in the arguments.

    `--workspace` without a store directory after it stays where it is: on a preset verb
    it is the flag that records the entry at workspace scope. Under `self admin` it always
    stays: there it names a workspace of the service's data directory.
    """
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg.startswith("--project="):
            OPTIONS.project = arg.split("=", 1)[1]
        elif arg == "--project" and nxt is not None:
            OPTIONS.project = nxt
            i += 1
        elif arg.startswith("--workspace=") and rest[:1] != ["admin"]:
            OPTIONS.workspace = arg.split("=", 1)[1]
        elif arg == "--workspace" and nxt is not None and _is_store_dir(nxt, rest):
            OPTIONS.workspace = nxt
            i += 1
        else:
            rest.append(arg)
        i += 1
    return rest


def _is_store_dir(value: str, before: list[str]) -> bool:
    """Whether `--workspace VALUE`, after the arguments `before`, names the store. Under
    `self admin`, `--workspace` names a workspace of the data directory, never a store."""
    if value.startswith("-") or before[:1] == ["admin"]:
        return False
    return not before or os.path.isfile(os.path.join(os.path.expanduser(value), "workspace.json"))
