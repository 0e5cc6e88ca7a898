"""The crowd block of a campaign page (mounted under campaigns/)."""

from django.urls import path

from cfannotate.crowd import campaign_views as views

urlpatterns = [
    path("<int:campaign_id>/platforms/", views.platforms_block, name="crowd-platforms"),
    path(
        "<int:campaign_id>/platforms/mturk/",
        views.mturk_publish_view,
        name="crowd-mturk-publish",
    ),
    path(
        "<int:campaign_id>/platforms/prolific/",
        views.prolific_study_view,
        name="crowd-prolific-study",
    ),
    path(
        "<int:campaign_id>/platforms/publications/<int:publication_id>/places/",
        views.places_add_view,
        name="crowd-places-add",
    ),
    path(
        "<int:campaign_id>/platforms/publications/<int:publication_id>/places/cap/",
        views.places_cap_view,
        name="crowd-places-cap",
    ),
    path("<int:campaign_id>/platforms/links/", views.link_create_view, name="crowd-link-create"),
    path(
        "<int:campaign_id>/platforms/links/<int:link_id>/close/",
        views.link_close_view,
        name="crowd-link-close",
    ),
    path(
        "<int:campaign_id>/platforms/personal-links/",
        views.personal_link_create_view,
        name="crowd-personal-link-create",
    ),
    path(
        "<int:campaign_id>/platforms/personal-links/<int:link_id>/revoke/",
        views.personal_link_revoke_view,
        name="crowd-personal-link-revoke",
    ),
    path("<int:campaign_id>/platforms/sync/", views.sync_view, name="crowd-sync"),
    path(
        "<int:campaign_id>/platforms/assignments/<int:assignment_id>/approve/",
        views.approve_view,
        name="crowd-approve",
    ),
    path(
        "<int:campaign_id>/platforms/assignments/<int:assignment_id>/reject/",
        views.reject_view,
        name="crowd-reject",
    ),
    path(
        "<int:campaign_id>/platforms/assignments/<int:assignment_id>/bonus/",
        views.bonus_view,
        name="crowd-bonus",
    ),
    path(
        "<int:campaign_id>/platforms/workers/<int:worker_id>/block/",
        views.block_view,
        name="crowd-block",
    ),
]
