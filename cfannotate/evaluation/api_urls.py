"""The evaluation API, under api/."""

from django.urls import path

from cfannotate.evaluation import apis

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/evaluations/",
        apis.EvaluationListApi.as_view(),
        name="api-evaluation-list",
    ),
    path(
        "campaigns/<int:campaign_id>/evaluations/run/",
        apis.EvaluationRunApi.as_view(),
        name="api-evaluation-run",
    ),
    path(
        "campaigns/<int:campaign_id>/evaluations/<int:evaluation_id>/",
        apis.EvaluationDetailApi.as_view(),
        name="api-evaluation-detail",
    ),
]
