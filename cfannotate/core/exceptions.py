"""The one exception tree of cfannotate.

Services raise these; the API turns them into `{"message", "fields"}` with the
status below, htmx views render them as an error fragment, and management
commands print the message as one line.
"""


class CfannotateError(Exception):
    """A request that cannot be carried out, with a message meant for the user."""

    status_code = 400

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or {}


class InvalidInput(CfannotateError):
    """The input is malformed or breaks a rule; `fields` says where."""


class NotFound(CfannotateError):
    status_code = 404


class Forbidden(CfannotateError):
    status_code = 403


class Conflict(CfannotateError):
    """The request does not fit the current state (out of order, already done)."""

    status_code = 409


class Expired(CfannotateError):
    """The thing asked for existed but is no longer available (an expired lease)."""

    status_code = 410


class MethodNotAllowed(CfannotateError):
    """The URL exists but not for this HTTP method (a page posted to, a form fetched)."""

    status_code = 405
