"""The view's templates (Jinja2, shipped in this package): every value escaped (autoescape),
an undefined name an error rather than an empty string; `href` for a path of parts and
`compact` for a value of a document on one line."""

from __future__ import annotations

import json
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.template.config import TemplateConfig


def href(*parts: object) -> str:
    """`/a/b/c` with every part quoted: a value never adds a path segment or a query."""
    return "/" + "/".join(quote(str(p), safe="") for p in parts)


def compact(value: object) -> str:
    """A value of a document as one line: text as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


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
    return env


def config() -> TemplateConfig[JinjaTemplateEngine]:
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment()))
