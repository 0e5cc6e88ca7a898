"""The health probe, the favicon, login and the researcher's API token."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods

from cfannotate.core import api_tokens
from cfannotate.core.throttles import LOGIN_FAILURES, login_identities, retry_message


def health(request: HttpRequest) -> HttpResponse:
    """200 when the database answers; load balancers and the demo script poll it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages swapped in by htmx too: the SVG icon."""
    return redirect(static("favicon.svg"), permanent=True)


_django_login = auth_views.LoginView.as_view()


@sensitive_post_parameters()
@never_cache
@require_http_methods(["GET", "POST"])
def login(request: HttpRequest) -> HttpResponse:
    """Django's login page, with failed logins limited per username and per address.

    Past LOGIN_FAILURE_RATE the page answers 429 with the reason and checks no password,
    so guessing stops there; a login that succeeds forgets its username's failures.
    """
    if request.method != "POST":
        return _django_login(request)
    identities = login_identities(request)
    wait = LOGIN_FAILURES.wait_seconds(*identities)
    if wait:
        username = request.POST.get("username", "")
        reason = "Too many failed logins for this username or from this address"
        context = {
            "form": AuthenticationForm(request, initial={"username": username}),
            "next": request.POST.get("next", ""),
            "refused": retry_message(reason, wait),
        }
        return TemplateResponse(
            request,
            "registration/login.html",
            context,
            status=429,
            headers={"Retry-After": str(wait)},
        )
    response = _django_login(request)
    # LoginView redirects after a login and shows the form again (200) after a failed one.
    if response.status_code == 200:
        LOGIN_FAILURES.record_failure(*identities)
    elif response.status_code == 302:
        LOGIN_FAILURES.forget(identities[0])
    return response


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's sign-in goes through the one rate-limited login page above."""
    return auth_views.redirect_to_login(request.GET.get("next") or reverse("admin:index"))


@never_cache  # the page may hold a new key: no cache, proxy or back button keeps a copy
@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """Create, rotate or revoke the researcher's API token; a new key is shown this once."""
    action = request.POST.get("action") if request.method == "POST" else None
    if action == "rotate":
        new = api_tokens.api_token_rotate(user=request.user)
        # Answered here, not redirected: the key is in no session and no later page.
        context = {"token": new.token, "new_key": new.key}
        return TemplateResponse(request, "core/api_token.html", context)
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
