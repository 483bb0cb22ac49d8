from django.contrib.auth import views as auth_views
from django.urls import path

from playground import views

urlpatterns = [
    path("settings", views.settings_page, name="settings"),
    path("settings/summary", views.summary, name="settings-summary"),
    path("settings/scope-card", views.scope_card, name="settings-scope-card"),
    path("settings/probe/<str:store>", views.probe, name="settings-probe"),
    path("settings/instruction/diff", views.instruction_diff, name="settings-instruction-diff"),
    path("settings/instruction/reset", views.instruction_reset, name="settings-instruction-reset"),
    path("settings/runs/<uuid:run_id>/progress", views.run_progress, name="settings-run-progress"),
    path("settings/skills", views.skills, name="settings-skills"),
    path("settings/passport", views.passport, name="settings-passport"),
    path(
        "settings/skills/<str:name>/candidate",
        views.skill_candidate,
        name="settings-skill-candidate",
    ),
    path("settings/skills/<str:name>/kill", views.skill_kill, name="settings-skill-kill"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
