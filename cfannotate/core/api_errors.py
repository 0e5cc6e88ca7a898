"""Turns every API error into `{"message": ..., "fields": {...}}` with a 4xx status.

`exception_handler` covers what DRF views raise; the `handler*` views below cover
what Django answers before a view runs (no URL matches, a malformed request), so
clients of `/api/` get the same JSON shape there too and HTML pages keep Django's.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.urls import is_valid_path
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.throttles import RateLimited


def _flatten_fields(detail) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        fields: dict[str, list[str]] = {}
        for name, value in detail.items():
            if isinstance(value, dict):
                for sub_name, sub_value in _flatten_fields(value).items():
                    fields[f"{name}.{sub_name}"] = sub_value
            elif isinstance(value, list):
                fields[str(name)] = [str(item) for item in _flatten_messages(value)]
            else:
                fields[str(name)] = [str(value)]
        return fields
    return {}


def _flatten_messages(values) -> list[str]:
    messages = []
    for value in values:
        if isinstance(value, list | tuple):
            messages.extend(_flatten_messages(value))
        elif isinstance(value, dict):
            messages.extend(
                f"{key}: {msg}" for key, msgs in _flatten_fields(value).items() for msg in msgs
            )
        else:
            messages.append(str(value))
    return messages


def exception_handler(exc, context):
    if isinstance(exc, CfannotateError):
        return Response({"message": exc.message, "fields": exc.fields}, status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        fields = {k: [str(m) for m in v] for k, v in getattr(exc, "message_dict", {}).items()}
        message = "; ".join(exc.messages) or "Invalid input."
        return Response({"message": message, "fields": fields}, status=400)
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    elif isinstance(exc, drf_exceptions.Throttled) and not isinstance(exc, RateLimited):
        exc = RateLimited(exc.wait)  # the API's throttles: "...; try again in 42 seconds."

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, drf_exceptions.ValidationError):
        fields = _flatten_fields(exc.detail)
        if isinstance(exc.detail, list):
            message = "; ".join(_flatten_messages(exc.detail))
        else:
            message = "Some fields are invalid: " + ", ".join(sorted(fields)) + "."
        response.data = {"message": message, "fields": fields}
    else:
        detail = getattr(exc, "detail", None)
        response.data = {"message": str(detail) if detail else str(exc), "fields": {}}
    return response


API_PREFIX = "/api/"
NO_OPERATION = "Not found: no API operation has this path."


def _api_error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"message": message, "fields": {}}, status=status)


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: a request Django refused before any view (e.g. a body over the limits)."""
    if _is_api(request):
        return _api_error("The request is malformed or too large.", 400)
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: no URL matched, e.g. a path id that is not a number."""
    if _is_api(request):
        return _api_error(NO_OPERATION, 404)
    return defaults.page_not_found(request, exception)


@csrf_exempt  # it changes nothing, and a POST to it must be told the path is unknown
def api_path_unknown(request: HttpRequest, path: str = "") -> HttpResponse:
    """The last API URL, matching any path under /api/ no operation has: the API's 404
    whatever DEBUG says (with DEBUG on, Django answers an unmatched URL with its HTML
    page, not handler404). A path that lacks only its final slash is redirected there,
    as CommonMiddleware's APPEND_SLASH would: a GET, that is; other methods would lose
    their body on the way, so they are told the right path."""
    if settings.APPEND_SLASH and not request.path_info.endswith("/"):
        match = is_valid_path(f"{request.path_info}/")
        if match and match.func is not api_path_unknown:
            if request.method in ("GET", "HEAD"):
                return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
            return _api_error(f"{NO_OPERATION} Did you mean {request.path}/ (with a slash)?", 404)
    return _api_error(NO_OPERATION, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: still the API's shape, so clients can show the message."""
    if _is_api(request):
        return _api_error("Server error; it has been logged. Try again later.", 500)
    return defaults.server_error(request)
