from django.urls import path

from memory.api.views import ObjectView, RecallView, RememberView

urlpatterns = [
    path("remember", RememberView.as_view(), name="remember"),
    path("recall", RecallView.as_view(), name="recall"),
    path("objects/<uuid:object_id>", ObjectView.as_view(), name="object"),
]
