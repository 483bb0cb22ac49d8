from django.contrib.auth import views as auth_views
from django.urls import path

from playground import views

urlpatterns = [
    path("settings", views.settings_page, name="settings"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
