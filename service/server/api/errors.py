"""Errors the HTTP front end raises itself, and the one way any error becomes a problem
document (RFC 9457, `application/problem+json`)."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from service.core.errors import SelfhubError
from service.core.problems import problem

if TYPE_CHECKING:
    from litestar import Request, Response

PROBLEM_JSON = "application/problem+json"


class ApiError(SelfhubError):
    """Root of every error the HTTP front end raises: an answer with a code, and the status and
    title of the code's row in the problem table (`service.core.problems.CODES`); a class may
    word its own title, never its own status."""

    code = "server"
    status: ClassVar[int] = problem(code).status
    title: ClassVar[str] = problem(code).title

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "status" in vars(cls):
            raise TypeError(f"{cls.__name__}: an API error's status is its code's row in the problem table")
        row = problem(cls.code)
        cls.status = row.status
        if "title" not in vars(cls):
            cls.title = row.title

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def document(self) -> dict[str, object]:
        return {
            "type": f"urn:selfhub:problem:{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }

    def headers(self) -> dict[str, str]:
        """Headers the answer carries besides the document's (`Retry-After`, …)."""
        return {}


class Unauthenticated(ApiError):
    """No token, a malformed, unknown or revoked one: one answer for all."""

    code = "unauthenticated"

    def __init__(self) -> None:
        super().__init__(
            "send `Authorization: Bearer TOKEN` with a token that is valid; ask an admin for one"
        )


class Forbidden(ApiError):
    """The token does not open that workspace; the same answer whether it exists or not."""

    code = "forbidden"

    def __init__(self, detail: str = "this token does not open that workspace") -> None:
        super().__init__(detail)


class BadParameter(ApiError):
    """A query parameter missing or out of its range; the document names it (`field`)."""

    code = "bad-parameter"

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"query parameter `{field}`: {detail}")
        self.field = field

    def document(self) -> dict[str, object]:
        return super().document() | {"field": self.field}


def respond(
    status: int, document: dict[str, object], headers: dict[str, str] | None = None
) -> Response[bytes]:
    from litestar import Response

    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="selfhub"'
    return Response(
        msgspec.json.encode(document), status_code=status, media_type=PROBLEM_JSON, headers=headers
    )


def invalid_parameter(exc: Any) -> dict[str, object] | None:
    """The problem of a query or path value litestar could not read as its type (a
    ValidationException): `malformed`, naming each parameter and what was expected, instead of
    litestar's "Validation failed for URL" (which says neither)."""
    from service.core.problems import document

    errors = [e for e in exc.extra or () if isinstance(e, dict) and e.get("key")]
    if not errors:
        return None
    detail = "; ".join(f"{_source(e)} parameter `{e['key']}`: {e.get('message', 'invalid')}" for e in errors)
    return document("malformed", detail, field=str(errors[0]["key"]))


def _source(error: dict[str, Any]) -> str:
    source = error.get("source", "a")
    return str(getattr(source, "value", source))  # litestar's ParamType is an enum


def problem_response(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """Every error's answer as a problem document (`problem_of`)."""
    status, document, headers = problem_of(request, exc)
    return respond(status, document, headers)


def problem_of(
    request: Request[Any, Any, Any], exc: Exception
) -> tuple[int, dict[str, object], dict[str, str]]:
    """Every error's status, problem document and headers: ours, the application's (its code's
    status) or litestar's own (an oversized body, an unknown route); anything else is a bug, a
    500 that says nothing more. The web view renders the same document as a page.

    A detail may name what the request named (`no project 'NAME'`): every string of the
    document is masked as the logs mask theirs, so a token put in a path never comes back."""
    status, document, headers = _problem_of(request, exc)
    return status, masked(document), headers


def masked(document: dict[str, object]) -> dict[str, object]:
    """`document` with every secret-shaped string masked, nested ones too, as the logs mask."""
    return {key: _masked(value) for key, value in document.items()}


def _masked(value: object) -> object:
    from service.core.gates.secret_formats import mask_secrets

    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, list | tuple):
        return [_masked(v) for v in value]
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    return value


def _problem_of(
    request: Request[Any, Any, Any], exc: Exception
) -> tuple[int, dict[str, object], dict[str, str]]:
    from litestar.exceptions import HTTPException, ValidationException

    from service.app import problem
    from service.core.problems import document
    from service.server.live.errors import LiveError

    if isinstance(exc, ApiError):
        return exc.status, exc.document(), exc.headers()
    doc = document(exc.code, str(exc)) if isinstance(exc, LiveError) else problem(exc)
    if doc is not None:
        return int(str(doc["status"])), doc, {}
    if isinstance(exc, ValidationException) and (named := invalid_parameter(exc)) is not None:
        return 400, named, {}
    if isinstance(exc, HTTPException):  # litestar's: no route, an oversized body…
        status = exc.status_code
        title = HTTPStatus(status).phrase
        detail = exc.detail
        if status == 413 and request.app.request_max_body_size:  # litestar's says no more than its title
            detail = f"the body is over the service's cap of {request.app.request_max_body_size:,} bytes"
        return status, {"type": "about:blank", "title": title, "status": status, "detail": detail}, {}
    logging.getLogger("uvicorn.error").exception("unexpected error answered with 500")
    return 500, ApiError("the service failed; its log says why").document(), {}
