from django.urls import path
from django.views.generic import RedirectView

from cfannotate.campaigns import section_views, upload_views, views

urlpatterns = [
    # The campaign list is the home page; a typed or trimmed /campaigns/ lands there.
    path("", RedirectView.as_view(pattern_name="home"), name="campaign-list"),
    path("new/", views.campaign_new, name="campaign-new"),
    path("<int:campaign_id>/", views.campaign_detail, name="campaign-detail"),
    path("<int:campaign_id>/data/", section_views.campaign_data, name="campaign-data"),
    path(
        "<int:campaign_id>/generate/",
        section_views.campaign_generation,
        name="campaign-generation",
    ),
    path(
        "<int:campaign_id>/labeling-and-platforms/",
        section_views.campaign_labeling,
        name="campaign-labeling",
    ),
    path("<int:campaign_id>/exports/", section_views.campaign_exports, name="campaign-exports"),
    path(
        "<int:campaign_id>/originals/upload/",
        upload_views.original_upload,
        name="original-upload",
    ),
    path(
        "<int:campaign_id>/originals/upload/preview/",
        upload_views.original_upload_preview,
        name="original-upload-preview",
    ),
    path(
        "<int:campaign_id>/originals/upload/import/",
        upload_views.original_upload_import,
        name="original-upload-import",
    ),
    path(
        "<int:campaign_id>/originals/upload/cancel/",
        upload_views.original_upload_cancel,
        name="original-upload-cancel",
    ),
    path("<int:campaign_id>/settings/", views.campaign_settings, name="campaign-settings"),
]
