"""Every error code, what the CLI exits with and which HTTP status an RFC 9457 problem
document carries for it. One table for every front end: a code raised anywhere is here
(`tests/unit/test_problems.py` checks).

`tests/unit/test_problems.py` also checks that no message of the model, the application layer,
the store, sync, the data directory or auth names a flag or a command: their errors carry
`{field}` slots and an `about` from which the CLI words its hint (`cli/problems.py`).
"""

from __future__ import annotations

import msgspec

BAD_INPUT = 1  # the CLI's exit code: the input cannot be understood
REFUSED = 2  # the CLI's exit code: a rule says no
NOT_STARTED = 3  # `self serve`'s exit code: the service could not start listening (uvicorn's own)


class Problem(msgspec.Struct, frozen=True):
    exit: int
    status: int
    title: str


CODES: dict[str, Problem] = {
    # bad input (model.errors.Invalid)
    "invalid-value": Problem(BAD_INPUT, 422, "A value is not one the command accepts"),
    "missing-value": Problem(BAD_INPUT, 422, "A value the command needs is missing"),
    "malformed": Problem(BAD_INPUT, 400, "The input cannot be read"),
    "not-found": Problem(BAD_INPUT, 404, "Nothing has that name"),
    "ambiguous-prefix": Problem(BAD_INPUT, 409, "An id prefix names more than one record"),
    "wrong-kind": Problem(BAD_INPUT, 422, "The record named is not of the kind the command acts on"),
    "wrong-state": Problem(BAD_INPUT, 409, "The record's state does not allow the command"),
    "exists": Problem(BAD_INPUT, 409, "It exists already"),
    "other-log": Problem(BAD_INPUT, 409, "A relation names a record of another log"),
    "too-large": Problem(BAD_INPUT, 413, "An event is over the size cap"),
    "no-workspace": Problem(BAD_INPUT, 400, "No workspace is selected"),
    "no-project": Problem(BAD_INPUT, 400, "No project is selected"),
    "no-checkout": Problem(BAD_INPUT, 409, "No code checkout is linked to the project"),
    # refused by a rule (model.errors.Refused)
    "refused": Problem(REFUSED, 403, "A rule refuses the command"),
    "cap-exceeded": Problem(REFUSED, 409, "A retention cap would be exceeded"),
    "sanitize": Problem(REFUSED, 422, "The record would hold a machine-local or secret fact"),
    "evidence-required": Problem(REFUSED, 409, "Done needs evidence"),
    "criteria-uncovered": Problem(REFUSED, 409, "Done needs every declared criterion covered"),
    "person-required": Problem(REFUSED, 403, "The change is a person's call"),
    "duplicate": Problem(REFUSED, 409, "A live record says the same already"),
    # the store and sync adapters (service.adapters.store.errors, service.adapters.sync.errors)
    "store": Problem(BAD_INPUT, 500, "The workspace store cannot do that"),
    "not-a-store": Problem(BAD_INPUT, 404, "No workspace store there"),
    "already-a-store": Problem(BAD_INPUT, 409, "A workspace store exists there already"),
    "not-empty": Problem(BAD_INPUT, 409, "The folder holds a repository or settings already"),
    "not-a-folder": Problem(BAD_INPUT, 409, "The path is not a folder that can be made or written"),
    "store-locked": Problem(BAD_INPUT, 503, "The workspace is locked by another process"),
    "not-writable": Problem(BAD_INPUT, 503, "The store or data directory is read-only for this user"),
    "ref-moved": Problem(BAD_INPUT, 409, "The branch moved during the commit"),
    "corrupt-file": Problem(BAD_INPUT, 500, "A store file cannot be read"),
    "not-regular": Problem(BAD_INPUT, 500, "A log segment is not a regular file"),
    "bad-marker": Problem(BAD_INPUT, 500, "A checkout's marker cannot be read"),
    "not-a-data-dir": Problem(BAD_INPUT, 404, "No service data directory there"),
    "unknown-workspace": Problem(BAD_INPUT, 404, "No workspace of that name in the data directory"),
    "format-newer": Problem(BAD_INPUT, 503, "The data was written by a newer release"),
    "format-older": Problem(BAD_INPUT, 503, "The data must be upgraded first"),
    "backup": Problem(BAD_INPUT, 422, "The backup cannot be made or restored"),
    "unknown-user": Problem(BAD_INPUT, 404, "No user of that name"),
    "unknown-token": Problem(BAD_INPUT, 404, "No token with that id"),
    "identity-unavailable": Problem(BAD_INPUT, 503, "The identity database cannot be reached"),
    "sync": Problem(BAD_INPUT, 502, "The sync failed"),
    "unknown-remote": Problem(BAD_INPUT, 404, "No remote of that name"),
    "no-remote": Problem(BAD_INPUT, 404, "The workspace has no remote"),
    "remote-exists": Problem(BAD_INPUT, 409, "A remote of that name exists already"),
    "empty-remote": Problem(BAD_INPUT, 404, "The remote holds no workspace yet"),
    "unreachable": Problem(BAD_INPUT, 502, "The remote cannot be reached"),
    "auth-failed": Problem(BAD_INPUT, 502, "The remote refused the credentials"),
    "not-selfhub": Problem(BAD_INPUT, 422, "The remote is not a selfhub workspace"),
    "kept-moving": Problem(BAD_INPUT, 503, "Others kept pushing first"),
    "declined": Problem(BAD_INPUT, 502, "The remote declined the push"),
    "remote-refused": Problem(BAD_INPUT, 422, "The remote holds what intake refuses"),
    "push-refused": Problem(BAD_INPUT, 422, "The push is not taken"),
    "push-stale": Problem(BAD_INPUT, 409, "Main moved since the push's fetch"),
    "push-not-forward": Problem(BAD_INPUT, 409, "The push does not build on main"),
    "push-not-append": Problem(BAD_INPUT, 422, "The push changes published events"),
    "push-not-admitted": Problem(BAD_INPUT, 422, "The push holds an event a post could not write"),
    "push-ahead-of-clock": Problem(BAD_INPUT, 422, "The push holds an id from the future"),
    # the HTTP front end (service.server.api.errors): no CLI command raises these
    "unauthenticated": Problem(BAD_INPUT, 401, "A valid bearer token is needed"),
    "forbidden": Problem(BAD_INPUT, 403, "The token does not allow this"),
    "bad-parameter": Problem(BAD_INPUT, 400, "A query parameter is missing or out of its range"),
    "server": Problem(BAD_INPUT, 500, "Unexpected error"),
    "rate-limited": Problem(BAD_INPUT, 429, "Too many requests"),
    "timeout": Problem(BAD_INPUT, 503, "The answer took too long"),
    "webhook-refused": Problem(BAD_INPUT, 401, "The delivery is not accepted"),
    "webhook-replayed": Problem(BAD_INPUT, 409, "The delivery was received before"),
    "webhook-body": Problem(BAD_INPUT, 400, "The delivery's body is not a push event"),
    "webhook-too-large": Problem(BAD_INPUT, 413, "The delivery's body is over the cap"),
    # the web view (service.server.web.errors)
    "web": Problem(BAD_INPUT, 400, "The web view cannot do this"),
    "cross-origin": Problem(BAD_INPUT, 403, "A form from another site"),
    # `self serve --config FILE` refused (service.server.api.config)
    "config": Problem(REFUSED, 500, "The service's configuration is refused"),
    # `self serve` could not listen (cli/serve.py)
    "not-listening": Problem(NOT_STARTED, 503, "The service cannot listen on its address"),
    # the service's live workspaces (service.server.live.errors)
    "stopping": Problem(BAD_INPUT, 503, "The service is stopping"),
    "write-timeout": Problem(BAD_INPUT, 504, "The write was not committed in time"),
    "commit-failed": Problem(BAD_INPUT, 503, "The commit failed; nothing was written"),
    "not-replicated": Problem(BAD_INPUT, 503, "The backend did not take the write; it is not acknowledged"),
    # a read naming `Selfhub-Min-Commit` (service.server.api.fresh)
    "not-yet": Problem(BAD_INPUT, 503, "This instance does not hold that commit yet"),
}


def problem(code: str) -> Problem:
    """The row of `code`; an unknown code is a bug, reported as a server error."""
    return CODES.get(code, Problem(BAD_INPUT, 500, "Unexpected error"))


def document(code: str, detail: str, field: str | None = None) -> dict[str, object]:
    """The RFC 9457 problem document of an error (`application/problem+json`)."""
    row = problem(code)
    doc: dict[str, object] = {"type": f"urn:selfhub:problem:{code}", "title": row.title}
    doc |= {"status": row.status, "detail": detail, "code": code}
    return doc if field is None else doc | {"field": field}
