"""Lets one response be framed by, or post to, a named list of origins only."""

from django.http import HttpResponse


def allow_framing(response: HttpResponse, *, origins: list[str]) -> HttpResponse:
    """Replace "deny all framing" with "only these origins" on this response."""
    response.xframe_options_exempt = True
    overrides = dict(getattr(response, "csp_overrides", None) or {})
    overrides["frame-ancestors"] = ["'self'", *origins]
    response.csp_overrides = overrides
    return response


def allow_form_posts(response: HttpResponse, *, origins: list[str]) -> HttpResponse:
    """Let a form on this page submit to these origins (e.g. MTurk's externalSubmit)."""
    overrides = dict(getattr(response, "csp_overrides", None) or {})
    overrides["form-action"] = ["'self'", *origins]
    response.csp_overrides = overrides
    return response
