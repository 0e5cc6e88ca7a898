"""API routes of a campaign's crowd platforms, under api/campaigns/<id>/platforms/."""

from django.urls import path

from cfannotate.crowd import apis

PREFIX = "campaigns/<int:campaign_id>/platforms/"

urlpatterns = [
    path(
        PREFIX + "publications/",
        apis.PublicationListApi.as_view(),
        name="api-publication-list",
    ),
    path(
        PREFIX + "publications/<int:publication_id>/places/",
        apis.PublicationPlacesApi.as_view(),
        name="api-publication-places",
    ),
    path(
        PREFIX + "publications/<int:publication_id>/places/cap/",
        apis.PublicationPlacesCapApi.as_view(),
        name="api-publication-places-cap",
    ),
    path(PREFIX + "mturk/", apis.MTurkPublishApi.as_view(), name="api-mturk-publish"),
    path(PREFIX + "prolific/", apis.ProlificStudyApi.as_view(), name="api-prolific-study"),
    path(PREFIX + "sync/", apis.PlatformSyncApi.as_view(), name="api-platform-sync"),
    path(PREFIX + "links/", apis.InvitationLinkListApi.as_view(), name="api-link-list"),
    path(
        PREFIX + "links/<int:link_id>/close/",
        apis.InvitationLinkCloseApi.as_view(),
        name="api-link-close",
    ),
    path(
        PREFIX + "personal-links/",
        apis.PersonalLinkListApi.as_view(),
        name="api-personal-link-list",
    ),
    path(
        PREFIX + "personal-links/<int:link_id>/revoke/",
        apis.PersonalLinkRevokeApi.as_view(),
        name="api-personal-link-revoke",
    ),
    path(
        PREFIX + "assignments/<int:assignment_id>/approve/",
        apis.AssignmentApproveApi.as_view(),
        name="api-assignment-approve",
    ),
    path(
        PREFIX + "assignments/<int:assignment_id>/reject/",
        apis.AssignmentRejectApi.as_view(),
        name="api-assignment-reject",
    ),
    path(
        PREFIX + "assignments/<int:assignment_id>/bonus/",
        apis.WorkerBonusApi.as_view(),
        name="api-worker-bonus",
    ),
    path(
        PREFIX + "workers/<int:worker_id>/block/",
        apis.WorkerBlockApi.as_view(),
        name="api-worker-block",
    ),
]
