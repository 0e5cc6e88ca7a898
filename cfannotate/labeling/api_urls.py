"""API routes of the labeling stage and its gold rounds, under api/campaigns/<id>/."""

from django.urls import path

from cfannotate.labeling import apis, gold_apis

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/labeling/",
        apis.LabelingProgressApi.as_view(),
        name="api-labeling-progress",
    ),
    path(
        "campaigns/<int:campaign_id>/labeling/open/",
        apis.LabelingOpenApi.as_view(),
        name="api-labeling-open",
    ),
    path(
        "campaigns/<int:campaign_id>/labeling/pause/",
        apis.LabelingPauseApi.as_view(),
        name="api-labeling-pause",
    ),
    path(
        "campaigns/<int:campaign_id>/labeling/order/",
        apis.LabelingOrderApi.as_view(),
        name="api-labeling-order",
    ),
    path(
        "campaigns/<int:campaign_id>/gold/",
        gold_apis.GoldRoundListApi.as_view(),
        name="api-gold-list",
    ),
    path(
        "campaigns/<int:campaign_id>/gold/import/",
        gold_apis.GoldRoundImportApi.as_view(),
        name="api-gold-import",
    ),
    path(
        "campaigns/<int:campaign_id>/gold/<int:gold_round_id>/",
        gold_apis.GoldRoundDetailApi.as_view(),
        name="api-gold-detail",
    ),
]
