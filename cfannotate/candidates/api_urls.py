"""API routes of generation status, candidate review and gold rounds, under api/campaigns/<id>/."""

from django.urls import path

from cfannotate.candidates import apis
from cfannotate.labeling import gold_apis

urlpatterns = [
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
    path(
        "campaigns/<int:campaign_id>/gold/",
        gold_apis.GoldRoundListApi.as_view(),
        name="api-gold-list",
    ),
    path(
        "campaigns/<int:campaign_id>/gold/<int:gold_round_id>/",
        gold_apis.GoldRoundDetailApi.as_view(),
        name="api-gold-detail",
    ),
]
