"""The worker's pages (rounds, instructions, done), all under the worker's signed token (w/)."""

from django.urls import path

from cfannotate.crowd import round_views as views

urlpatterns = [
    path("<str:token>/", views.assignment_start_page, name="worker-start"),
    path("<str:token>/instructions/", views.instructions, name="worker-instructions"),
    path("<str:token>/rounds/<int:position>/", views.round_page, name="worker-round"),
    path(
        "<str:token>/rounds/<int:position>/items/<int:index>/",
        views.item_save,
        name="worker-item-save",
    ),
    path(
        "<str:token>/rounds/<int:position>/submit/",
        views.round_submit,
        name="worker-round-submit",
    ),
    path("<str:token>/keep/", views.lease_keep, name="worker-lease-keep"),
    path("<str:token>/done/", views.done, name="worker-done"),
]
