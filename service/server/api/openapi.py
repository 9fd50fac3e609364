"""The service's OpenAPI document (litestar's, at `/schema`): its configuration, and what the
routes' decorators pass so that every body is documented as the struct it is.

The handlers answer bytes (`Response[bytes]`), so each route names its bodies: `answers(…)`
gives its `responses=` (the success body and the problem documents it may answer), and
`operation(…)` its `operation_class=` for what litestar cannot infer — the command body, which
the route decodes itself (`requests.decode`) so that a bad one stays our problem document,
and a second media type (`text/plain` context). The command body's schema is msgspec's own of
`AnyCommand`, the type `requests.decode` decodes with, so the document and the decoder agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.spec import (
    Components,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    RequestBody,
    Schema,
    SecurityScheme,
)

from service.server.api.bodies import Problem
from service.server.api.errors import PROBLEM_JSON

BEARER = "bearer"
SECURITY: list[dict[str, list[str]]] = [{BEARER: []}]
# What each status means on any route; each route lists the ones it may answer.
MEANING = {
    400: "the input cannot be read (a query value of the wrong type, a body that is not JSON)",
    401: "no token, or one that is malformed, unknown or revoked: one and the same answer",
    403: "the token does not open that workspace (the same answer whether it exists or not), "
    "its role does not allow the route, or a rule refuses the command",
    404: "no project, record or workspace of that name",
    409: "the state does not allow it (an ambiguous id prefix, a record in the wrong state, a cap)",
    413: "the body is over the size cap",
    422: "a value is not one the route accepts (out of range, a machine-local or secret fact)",
    429: "the token's rate limit is spent: retry after the seconds `Retry-After` names",
    503: "the workspace is busy (locked by another writer), the service is loading or stopping, "
    "an answer did not start in time, a write's backend did not take it (`--replicated`: not "
    "acknowledged), or the commit `Selfhub-Min-Commit` names is not here yet (`Retry-After`)",
    504: "the write was not committed in time; it may still land: retry with the same event ids",
}
READ_ERRORS = (400, 401, 403, 404, 409, 422)
# What every route that checks a token may answer besides: its rate limit and the time limit
# (service/server/api/limits.py, service/server/api/observe.py).
OPERATIONS = (429, 503)
COMMAND_ERRORS = (400, 401, 403, 404, 409, 413, 422, 503)


def config() -> OpenAPIConfig:
    from service import __version__

    return OpenAPIConfig(
        title="selfhub",
        version=__version__,
        description="The team service: workspaces' shared state over HTTP. Every error is an "
        "RFC 9457 problem document (`application/problem+json`).",
        path="/schema",
        components=Components(
            security_schemes={BEARER: SecurityScheme(type="http", scheme="bearer", description="`shb_…`")}
        ),
    )


def answers(
    ok: Any, *errors: int, status: int = 200, media_type: str = "application/json"
) -> dict[int, ResponseSpec]:
    """`responses=` of a route: its success body (`ok`, a struct or a list of them) and a
    problem document for each of `errors` (and, on a route that checks a token, that is one
    that lists 401, for each of `OPERATIONS`)."""
    found = {
        status: ResponseSpec(ok, description="the answer", media_type=media_type, generate_examples=False)
    }
    for code in dict.fromkeys([*errors, *(OPERATIONS if 401 in errors else ())]):
        found[code] = ResponseSpec(
            Problem, description=MEANING[code], media_type=PROBLEM_JSON, generate_examples=False
        )
    return found


def operation(*, body: Any = None, plain: bool = False) -> type[Operation]:
    """`operation_class=` of a route whose request body (`body`, a type) litestar does not
    decode, or whose success answer is also `text/plain` (`plain`)."""
    schema = inline(body) if body is not None else None

    @dataclass
    class Documented(Operation):
        def __post_init__(self) -> None:
            if schema is not None:
                content = {"application/json": OpenAPIMediaType(schema=schema)}  # type: ignore[arg-type]
                self.request_body = RequestBody(content=content, required=True)
            ok = (self.responses or {}).get("200")
            if plain and isinstance(ok, OpenAPIResponse) and ok.content is not None:
                ok.content["text/plain"] = OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING))

    return Documented


def inline(kind: Any) -> dict[str, Any]:
    """msgspec's JSON Schema of `kind` with every `$ref` replaced by its definition (litestar
    keeps only the components it made itself, and the command structs hold no cycle)."""
    import msgspec

    schema = msgspec.json.schema(kind)
    defs = schema.pop("$defs", {})
    schema.pop("discriminator", None)  # its mapping names the $defs just inlined

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def protected(action: str) -> dict[str, Any]:
    """The decorator arguments of a route the token guard checks for `action` (read, search,
    command, admin: `service/core/commands/team.py`): the guard (`guard.check`, run before the
    request's input is read; then a `Selfhub-Min-Commit` waited for: `fresh.check`), the action,
    bearer security."""
    from service.server.api.fresh import check

    return {"before_request": check, "opt": {"action": action}, "security": SECURITY}
