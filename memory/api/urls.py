from django.urls import path

from memory.api.views import RecallView, RememberView

urlpatterns = [
    path("remember", RememberView.as_view(), name="remember"),
    path("recall", RecallView.as_view(), name="recall"),
]
