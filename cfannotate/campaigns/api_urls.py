from django.urls import path

from cfannotate.campaigns import apis, upload_apis

urlpatterns = [
    path("campaigns/", apis.CampaignListApi.as_view(), name="api-campaign-list"),
    path("campaigns/create/", apis.CampaignCreateApi.as_view(), name="api-campaign-create"),
    path(
        "campaigns/<int:campaign_id>/", apis.CampaignDetailApi.as_view(), name="api-campaign-detail"
    ),
    path(
        "campaigns/<int:campaign_id>/update/",
        apis.CampaignUpdateApi.as_view(),
        name="api-campaign-update",
    ),
    path(
        "campaigns/<int:campaign_id>/originals/",
        apis.OriginalListApi.as_view(),
        name="api-original-list",
    ),
    path(
        "campaigns/<int:campaign_id>/originals/import/",
        apis.OriginalImportApi.as_view(),
        name="api-original-import",
    ),
    path(
        "campaigns/<int:campaign_id>/originals/upload/",
        upload_apis.OriginalUploadApi.as_view(),
        name="api-original-upload",
    ),
    path(
        "campaigns/<int:campaign_id>/originals/priority/",
        apis.OriginalPriorityApi.as_view(),
        name="api-original-priority",
    ),
]
