from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from memory.models import ApiKey, Architect, Note, Run, ShapeEntry, Thread, ToolCall, User
from memory.shape import selectors


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


class ToolCallInline(admin.TabularInline):
    model = ToolCall
    fields = ["tool", "arguments", "result", "error", "seconds"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ["id", "architect", "backend", "workdir", "turns", "created_at", "last_used_at"]
    list_filter = ["backend", "architect"]
    readonly_fields = [
        "id",
        "architect",
        "backend",
        "workdir",
        "turns",
        "messages",
        "created_at",
        "last_used_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


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
    inlines = [ToolCallInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ShapeEntry)
class ShapeEntryAdmin(admin.ModelAdmin):
    """The catalog of the grown shape, and a read-only view of each grown table's rows."""

    list_display = [
        "name",
        "kind",
        "table",
        "label_list",
        "architect",
        "promoted_to",
        "created_at",
        "rows_link",
    ]
    list_filter = ["kind", "architect"]
    search_fields = ["name", "key", "labels"]
    readonly_fields = [f.name for f in ShapeEntry._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # nothing grown is ever dropped

    @admin.display(description="labels")
    def label_list(self, obj: ShapeEntry) -> str:
        return ", ".join(obj.labels)

    @admin.display(description="rows")
    def rows_link(self, obj: ShapeEntry) -> str:
        url = reverse("admin:memory_shapeentry_rows", args=[obj.pk])
        return format_html('<a href="{}">rows</a>', url)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.rows_view)
        return [path("<int:pk>/rows/", view, name="memory_shapeentry_rows"), *super().get_urls()]

    def rows_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        entry = get_object_or_404(ShapeEntry, pk=pk)
        if entry.kind == "table":
            rows = selectors.table_rows(entry.architect, entry)
            columns = sorted({label for row in rows for label in row["fields"]})
            values = None
        else:
            rows, columns = [], []
            values = selectors.root_values(entry.architect, [entry])
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{entry.table} — {entry.architect}",
            "entry": entry,
            "rows": rows,
            "columns": columns,
            "values": values,
        }
        return TemplateResponse(request, "admin/memory/shape_rows.html", context)
