"""The export API, under api/."""

from django.urls import path

from cfannotate.exports import apis

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/exports/",
        apis.ExportListApi.as_view(),
        name="api-exports",
    ),
    path(
        "campaigns/<int:campaign_id>/exports/<str:kind>/",
        apis.ExportApi.as_view(),
        name="api-export",
    ),
]
