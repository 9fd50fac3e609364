"""Errors the web view raises itself; every other error (a refused token, a record that is
not there) is the API's or the application's, rendered as a page by `routes.refusal`."""

from __future__ import annotations

from service.server.api.errors import ApiError


class WebError(ApiError):
    """Root of the web view's own errors: an answer with a status, a code and a detail."""

    code = "web"


class CrossOrigin(WebError):
    """A form posted from another site (its `Origin` is not this service's): the sign-in and
    sign-out forms take no request another page made a browser send."""

    code = "cross-origin"

    def __init__(self) -> None:
        super().__init__(
            "this form was sent from another site; open the service's own page and send it there"
        )


class NoToken(WebError):
    """The sign-in form came without a token."""

    code = "unauthenticated"
    title = "A valid token is needed"

    def __init__(self) -> None:
        super().__init__("paste a token an admin made for you (`self admin token create`)")


class StaleForm(WebError):
    """A form that writes came without its session's token (`session.check_form`)."""

    code = "cross-origin"
    title = "A form not from this session's page"

    def __init__(self) -> None:
        super().__init__(
            "this form is not from a page of your current session; reload the page and send it again"
        )
