"""Content-Security-Policy on every response; the health probe answered before host checks.

Everything is same-origin, nothing may frame us, nothing loads from a CDN. A view
that must be framed by a crowd platform, or must post a form to one, sets
`response.csp_overrides = {"frame-ancestors": [...], "form-action": [...]}`
through `cfannotate.core.framing`.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from cfannotate.core.views import health

HEALTH_PATH = "/healthz"

DEFAULT_POLICY: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    # Inline style attributes only (Django admin uses a few); no inline scripts.
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def build_policy(overrides: dict[str, list[str]] | None = None) -> str:
    policy = dict(DEFAULT_POLICY)
    policy.update(overrides or {})
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            overrides = getattr(response, "csp_overrides", None)
            response["Content-Security-Policy"] = build_policy(overrides)
        return response


class HealthCheckMiddleware:
    """Answers `/healthz` before CommonMiddleware validates the Host header.

    A load balancer probes each instance by its own address (`Host: 10.0.3.7`), which is
    no allowed host, and would get 400; the probe's answer names no host, so nothing is
    lost by skipping the check. It sits after SecurityMiddleware, whose
    SECURE_REDIRECT_EXEMPT keeps the plain-HTTP probe from being redirected to HTTPS.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == HEALTH_PATH:
            return health(request)
        return self.get_response(request)
