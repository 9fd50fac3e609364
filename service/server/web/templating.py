"""The view's templates (Jinja2, shipped in this package): every value escaped (autoescape),
an undefined name an error rather than an empty string; `href` for a path of parts,
`compact` for a value of a document on one line, `plain` for one in words; `page`, a template
with who is signed in and the session's form token."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.template.config import TemplateConfig

from service.core.commands.team import allows
from service.server.api import guard
from service.server.web import session

if TYPE_CHECKING:
    from litestar import Request

    from service.adapters.auth.tokens import Grant


def href(*parts: object) -> str:
    """`/a/b/c` with every part quoted: a value never adds a path segment or a query."""
    return "/" + "/".join(quote(str(p), safe="") for p in parts)


def compact(value: object) -> str:
    """A value of a document as one line: text as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def plain(value: object) -> str:
    """A value of an event's payload in words: a list as its items, a link as its type and
    target, a mapping as its keys and values."""
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    if isinstance(value, dict):
        if {"type", "target"} <= value.keys():
            return f"{value['type']} {value['target']}"
        return ", ".join(f"{k} {plain(v)}" for k, v in value.items())
    return compact(value)


def page(name: str, request: Request[Any, Any, Any], status: int = 200, **context: Any) -> Template:
    """Template `name` with who is signed in (none on the sign-in form): their user, workspace
    and role, whether the role writes (its pages show forms), and the session's form token."""
    given: Grant | None = request.state.get(guard.GRANT)
    who = None
    if given:
        writes = allows(given.role, "command")
        who = {"user": given.user, "workspace": given.workspace, "role": given.role, "writes": writes}
    form_token = session.form_token(request) if given else None
    return Template(name, context={"who": who, "form_token": form_token, **context}, status_code=status)


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("service.server.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["href"] = href
    env.filters["compact"] = compact
    env.filters["plain"] = plain
    return env


def config() -> TemplateConfig[JinjaTemplateEngine]:
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment()))
