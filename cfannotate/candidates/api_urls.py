"""API routes of generation (start, progress, status) and candidates (import, list, review),
under api/campaigns/<id>/."""

from django.urls import path

from cfannotate.candidates import apis

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/candidates/import/",
        apis.CandidateImportApi.as_view(),
        name="api-candidate-import",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/imports/<int:import_id>/",
        apis.CandidateImportDetailApi.as_view(),
        name="api-candidate-import-detail",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/imports/<int:import_id>/cancel/",
        apis.CandidateImportCancelApi.as_view(),
        name="api-candidate-import-cancel",
    ),
    path(
        "campaigns/<int:campaign_id>/generation/",
        apis.GenerationProgressApi.as_view(),
        name="api-generation-progress",
    ),
    path(
        "campaigns/<int:campaign_id>/generation/start/",
        apis.GenerationStartApi.as_view(),
        name="api-generation-start",
    ),
    path(
        "campaigns/<int:campaign_id>/generation/<int:run_id>/cancel/",
        apis.GenerationCancelApi.as_view(),
        name="api-generation-cancel",
    ),
    path(
        "campaigns/<int:campaign_id>/generation/<int:run_id>/retry/",
        apis.GenerationRetryApi.as_view(),
        name="api-generation-retry",
    ),
    path(
        "campaigns/<int:campaign_id>/generation-status/",
        apis.GenerationStatusApi.as_view(),
        name="api-generation-status",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/",
        apis.CandidateListApi.as_view(),
        name="api-candidate-list",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/predictions/",
        apis.CandidatePredictionsUploadApi.as_view(),
        name="api-candidate-predictions",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/review/",
        apis.CandidateReviewApi.as_view(),
        name="api-candidate-review",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/<int:candidate_id>/",
        apis.CandidateDetailApi.as_view(),
        name="api-candidate-detail",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/<int:candidate_id>/accept/",
        apis.CandidateAcceptApi.as_view(),
        name="api-candidate-accept",
    ),
    path(
        "campaigns/<int:campaign_id>/candidates/<int:candidate_id>/reject/",
        apis.CandidateRejectApi.as_view(),
        name="api-candidate-reject",
    ),
]
