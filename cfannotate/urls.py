"""Top-level URLs: HTML pages, the API under api/, the admin."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from cfannotate.campaigns import views as campaign_views
from cfannotate.core import api_errors
from cfannotate.core import views as core_views

api_patterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("cfannotate.campaigns.api_urls")),
    path("", include("cfannotate.candidates.api_urls")),
    path("", include("cfannotate.labeling.api_urls")),
    path("", include("cfannotate.crowd.api_urls")),
    path("", include("cfannotate.quality.api_urls")),
    path("", include("cfannotate.exports.api_urls")),
    path("", include("cfannotate.evaluation.api_urls")),
    # Last: any other path is the API's JSON 404, with DEBUG on too.
    re_path(r"^(?P<path>.*)$", api_errors.api_path_unknown),
]

# Under api/ these answer {"message", "fields"} as the API's views do; elsewhere Django's pages.
handler400 = "cfannotate.core.api_errors.bad_request"
handler404 = "cfannotate.core.api_errors.page_not_found"
handler500 = "cfannotate.core.api_errors.server_error"

urlpatterns = [
    path("", campaign_views.home, name="home"),
    path("healthz", core_views.health, name="health"),
    path("favicon.ico", core_views.favicon, name="favicon"),
    path("accounts/api-token/", core_views.api_token, name="api-token"),
    path("accounts/login/", core_views.login, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("campaigns/", include("cfannotate.campaigns.urls")),
    path("campaigns/", include("cfannotate.candidates.urls")),
    path("campaigns/", include("cfannotate.labeling.campaign_urls")),
    path("campaigns/", include("cfannotate.labeling.gold_urls")),
    path("campaigns/", include("cfannotate.crowd.campaign_urls")),
    path("campaigns/", include("cfannotate.quality.urls")),
    path("campaigns/", include("cfannotate.exports.urls")),
    path("campaigns/", include("cfannotate.evaluation.urls")),
    path("w/", include("cfannotate.crowd.round_urls")),
    path("join/", include("cfannotate.crowd.urls")),
    path("api/", include(api_patterns)),
    # Before the admin's own URLs: its sign-in goes through the rate-limited login page.
    path("admin/login/", core_views.admin_login),
    path("admin/", admin.site.urls),
]
