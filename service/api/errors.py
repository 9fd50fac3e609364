"""Errors the HTTP front end raises itself, and the one way any error becomes a problem
document (RFC 9457, `application/problem+json`)."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from litestar import Request, Response

PROBLEM_JSON = "application/problem+json"


class ApiError(Exception):
    """Root of every error the HTTP front end raises: an answer with a status and a code."""

    status = 500
    code = "server"
    title = "Unexpected error"

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


class Unauthenticated(ApiError):
    """No token, a malformed, unknown or revoked one: one answer for all."""

    status = 401
    code = "unauthenticated"
    title = "A valid bearer token is needed"

    def __init__(self) -> None:
        super().__init__(
            "send `Authorization: Bearer TOKEN` with a token that is valid; ask an admin for one"
        )


class Forbidden(ApiError):
    """The token does not open that workspace; the same answer whether it exists or not."""

    status = 403
    code = "forbidden"
    title = "The token does not allow this"

    def __init__(self, detail: str = "this token does not open that workspace") -> None:
        super().__init__(detail)


class BadParameter(ApiError):
    """A query parameter missing or out of its range; the document names it (`field`)."""

    status = 400
    code = "bad-parameter"
    title = "A query parameter is missing or out of its range"

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field

    def document(self) -> dict[str, object]:
        return super().document() | {"field": self.field}


def respond(status: int, document: dict[str, object]) -> Response[bytes]:
    from litestar import Response

    headers = {"WWW-Authenticate": 'Bearer realm="selfhub"'} if status == 401 else None
    return Response(
        msgspec.json.encode(document), status_code=status, media_type=PROBLEM_JSON, headers=headers
    )


def problem_response(_: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """Every error's answer: ours, the application's (its code's status) or litestar's own
    (an oversized body, an unknown route); anything else is a bug, a 500 that says nothing more."""
    from litestar.exceptions import HTTPException

    from service.app import problem

    if isinstance(exc, ApiError):
        return respond(exc.status, exc.document())
    doc = problem(exc)
    if doc is not None:
        return respond(int(str(doc["status"])), doc)
    if isinstance(exc, HTTPException):  # litestar's: no route, a query value of the wrong type…
        status = exc.status_code
        title = HTTPStatus(status).phrase
        doc = {"type": "about:blank", "title": title, "status": status, "detail": exc.detail}
        return respond(status, doc | _invalid_field(exc.extra))
    logging.getLogger("uvicorn.error").exception("unexpected error answered with 500")
    return respond(500, ApiError("the service failed; its log says why").document())


def _invalid_field(extra: object) -> dict[str, object]:
    """The parameter a litestar validation failure names (`?limit=abc`), as `field`."""
    first = extra[0] if isinstance(extra, list) and extra else None
    if isinstance(first, dict) and isinstance(first.get("key"), str):
        return {"field": first["key"], "detail": f"{first['key']}: {first.get('message', 'invalid value')}"}
    return {}
