"""Download links of a campaign's exports, under campaigns/."""

from django.urls import path

from cfannotate.exports import views

urlpatterns = [
    path("<int:campaign_id>/exports/<str:kind>/", views.export_download, name="export-download"),
]
