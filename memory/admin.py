from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest

from memory.models import ApiKey, Architect, Note, Run, User


@admin.register(Architect)
class ArchitectAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(User)
class MemoryUserAdmin(UserAdmin):
    fieldsets = (*UserAdmin.fieldsets, ("Memory", {"fields": ("architect",)}))
    add_fieldsets = (*UserAdmin.add_fieldsets, ("Memory", {"fields": ("architect",)}))
    list_display = ["username", "architect", "is_staff", "is_active"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are shown once, at creation, in a message; only their digest is stored."""

    list_display = [
        "__str__",
        "name",
        "architect",
        "max_depth",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["max_depth", "architect"]
    readonly_fields = ["lookup", "created_at", "last_used_at"]
    fields = [
        "architect",
        "name",
        "max_depth",
        "lookup",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if not change:
            plaintext = obj.set_new_key()
            messages.warning(request, f"The new memory key (shown once, copy it now): {plaintext}")
        super().save_model(request, obj, form, change)


@admin.register(Note)
class NoteAdmin(admin.ModelAdmin):
    list_display = ["text", "architect", "sender", "created_at"]
    list_filter = ["architect"]
    search_fields = ["text"]
    readonly_fields = ["architect", "text", "scope", "sender", "run", "created_at"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    """The facts of every cycle (passport §11): read-only, because facts are not edited."""

    list_display = [
        "created_at",
        "verb",
        "architect",
        "channel",
        "depth_asked",
        "depth_used",
        "kind",
        "found",
        "model_turns",
        "seconds",
        "verdict",
    ]
    list_filter = ["verb", "channel", "kind", "depth_used", "verdict", "architect"]
    search_fields = ["text", "caller"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
