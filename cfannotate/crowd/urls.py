"""Worker entry points: invitation links and platform entry URLs (mounted under join/)."""

from django.urls import path, re_path

from cfannotate.crowd import views

urlpatterns = [
    re_path(
        r"^(?P<platform>mturk|prolific)/(?P<token>[^/]+)/$",
        views.platform_entry,
        name="crowd-entry",
    ),
    path("link/<str:token>/", views.join_link, name="join-link"),
    path("personal/<str:token>/", views.join_personal, name="join-personal"),
    path("<str:token>/", views.join, name="join"),
]
