"""The landing page and the health probe."""

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse

from cfannotate.campaigns.selectors import campaigns_for_owner


def home(request: HttpRequest) -> HttpResponse:
    campaigns = campaigns_for_owner(request.user) if request.user.is_authenticated else None
    return TemplateResponse(request, "core/home.html", {"campaigns": campaigns})


def health(request: HttpRequest) -> HttpResponse:
    """200 when the database answers; load balancers and the demo script poll it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
