"""A project's document read from a workspace on a team service, for the agent's commands that
take `--service` (session context, the managed block's conventions): the URL checked as a
hook's is, the token from SELF_TOKEN or the credentials file (where a login keeps it), one GET."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.core.errors import Invalid

if TYPE_CHECKING:
    import httpx

TIMEOUT_S = 10.0


def get(
    service: str, project: str | None, resource: str, params: dict[str, str] | None = None
) -> httpx.Response:
    """`GET …/projects/PROJECT/RESOURCE` of the workspace at `service`; Invalid without a
    project, a token or a 200, OSError when the service does not answer."""
    import httpx

    from service.adapters.sync import credentials
    from service.core.agent.hooks import service_parts

    base, workspace = service_parts(service)
    if not project:
        raise Invalid("no project is selected here (SELF_PROJECT, or a checkout marked for one)")
    found = credentials.lookup(service)
    if found is None:
        raise Invalid("no token: set SELF_TOKEN, or log in to the service (a reader token suffices)")
    try:
        answer = httpx.get(
            f"{base}/api/v1/workspaces/{workspace}/projects/{project}/{resource}",
            params=params,
            headers={"Authorization": f"Bearer {found.token}"},
            timeout=TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise OSError(f"unreachable ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise Invalid(f"HTTP {answer.status_code}")
    return answer
