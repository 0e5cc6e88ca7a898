from django.urls import path

from cfannotate.quality import apis

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/quality/",
        apis.QualityReportApi.as_view(),
        name="api-quality-report",
    ),
    path(
        "campaigns/<int:campaign_id>/quality/workers/",
        apis.QualityWorkerListApi.as_view(),
        name="api-quality-workers",
    ),
    path(
        "campaigns/<int:campaign_id>/quality/refresh/",
        apis.QualityRefreshApi.as_view(),
        name="api-quality-refresh",
    ),
    path(
        "campaigns/<int:campaign_id>/labels/",
        apis.CandidateLabelListApi.as_view(),
        name="api-candidate-labels",
    ),
    path(
        "campaigns/<int:campaign_id>/decisions/",
        apis.DecisionListApi.as_view(),
        name="api-decision-list",
    ),
    path(
        "campaigns/<int:campaign_id>/decisions/confirm/",
        apis.DecisionsConfirmApi.as_view(),
        name="api-decisions-confirm",
    ),
    path(
        "campaigns/<int:campaign_id>/decisions/apply/",
        apis.DecisionsApplyApi.as_view(),
        name="api-decisions-apply",
    ),
    path(
        "campaigns/<int:campaign_id>/decisions/<int:decision_id>/",
        apis.DecisionUpdateApi.as_view(),
        name="api-decision-update",
    ),
]
