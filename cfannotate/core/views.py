"""The landing page, the health probe, the favicon and the researcher's API token."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_http_methods

from cfannotate.campaigns.selectors import campaigns_for_owner
from cfannotate.core import api_tokens


def home(request: HttpRequest) -> HttpResponse:
    campaigns = campaigns_for_owner(request.user) if request.user.is_authenticated else None
    return TemplateResponse(request, "core/home.html", {"campaigns": campaigns})


def health(request: HttpRequest) -> HttpResponse:
    """200 when the database answers; load balancers and the demo script poll it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages swapped in by htmx too: the SVG icon."""
    return redirect(static("favicon.svg"), permanent=True)


@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """Show, create, rotate or revoke the researcher's API token."""
    action = request.POST.get("action") if request.method == "POST" else None
    if action == "rotate":
        api_tokens.api_token_rotate(user=request.user)
        messages.success(request, "A new API token was created; any earlier one no longer works.")
        return redirect("api-token")
    if action == "revoke":
        if api_tokens.api_token_revoke(user=request.user):
            messages.success(request, "The API token was revoked.")
        return redirect("api-token")
    if request.method == "POST":
        return TemplateResponse(
            request,
            "core/api_token.html",
            {"token": api_tokens.api_token_of(request.user), "error": "Unknown action."},
            status=400,
        )
    context = {"token": api_tokens.api_token_of(request.user)}
    return TemplateResponse(request, "core/api_token.html", context)
