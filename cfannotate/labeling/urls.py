"""Worker pages, all under the worker's signed token."""

from django.urls import path

from cfannotate.labeling import views

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
    path("<str:token>/done/", views.done, name="worker-done"),
]
