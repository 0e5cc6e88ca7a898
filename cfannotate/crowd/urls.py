from django.urls import path

from cfannotate.crowd import views

urlpatterns = [path("<str:token>/", views.join, name="join")]
