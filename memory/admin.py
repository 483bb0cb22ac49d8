from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html
from django.utils.translation import get_language

from memory.i18n import Text
from memory.models import (
    ApiKey,
    Architect,
    Note,
    OutboxItem,
    Run,
    ShadowCase,
    ShapeEntry,
    SkillCandidate,
    Thread,
    ToolCall,
    User,
)
from memory.services.evolution import candidates
from memory.shape import selectors
from memory.stores import outbox


@admin.register(Architect)
class ArchitectAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(User)
class MemoryUserAdmin(UserAdmin):
    """The architect field is the membership: the only thing that gives a user a memory."""

    fieldsets = (*UserAdmin.fieldsets, ("Memory", {"fields": ("architect",)}))
    add_fieldsets = (*UserAdmin.add_fieldsets, ("Memory", {"fields": ("architect",)}))
    list_display = ["username", "architect", "is_staff", "is_active"]
    list_filter = [*UserAdmin.list_filter, "architect"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "architect":
            field.help_text = (
                "Membership: the architect whose memory this user works with on the playground. "
                "Empty means no memory; a username equal to an architect's name grants nothing."
            )
        return field


KEY_PAGE = {
    "title": Text(ru="Новый ключ памяти", en="New memory key"),
    "once": Text(
        ru=(
            "Ключ показан один раз, на этой странице; хранится только его отпечаток. "
            "Скопируйте его сейчас: перезагрузка и страница ключа его уже не покажут."
        ),
        en=(
            "The key is shown once, on this page; only its digest is stored. Copy it now: "
            "a reload or the key's page will not show it again."
        ),
    ),
    "for": Text(ru="Архитектор", en="Architect"),
    "depth": Text(ru="Предел глубины", en="Maximum depth"),
    "change": Text(ru="Страница ключа", en="The key's page"),
    "list": Text(ru="Все ключи", en="All keys"),
}


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Only a key's digest is stored; its plaintext is shown once, on the page that answers
    the POST that created it (never a redirect, a message, the session or a cookie)."""

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
            # Lives on this instance for the one response that shows it, then is gone.
            obj._plaintext = obj.set_new_key()  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        return self.key_created(request, obj, obj._plaintext)  # type: ignore[attr-defined]

    def key_created(self, request: HttpRequest, key: ApiKey, plaintext: str) -> HttpResponse:
        """The one page that shows a new key: rendered into the creating POST's answer."""
        lang = "en" if (get_language() or "ru").startswith("en") else "ru"
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": KEY_PAGE["title"](lang),
            "text": {name: text(lang) for name, text in KEY_PAGE.items()},
            "key": key,
            "plaintext": plaintext,
            "change_url": reverse("admin:memory_apikey_change", args=[key.pk]),
            "list_url": reverse("admin:memory_apikey_changelist"),
        }
        response = TemplateResponse(request, "admin/memory/apikey_created.html", context)
        add_never_cache_headers(response)  # Cache-Control: no-store, among others
        return response


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
    """The facts of every cycle (PASSPORT.md §8): read-only, because facts are not edited."""

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


@admin.register(OutboxItem)
class OutboxItemAdmin(admin.ModelAdmin):
    """The outbox as staff see it: what is queued, what is dead and why (PASSPORT.md §14.1)."""

    list_display = [
        "pk", "store", "op", "status", "architect", "attempts", "short_error", "next_attempt_at",
        "created_at",
    ]  # fmt: skip
    list_filter = ["status", "store", "architect"]
    readonly_fields = [
        "architect", "store", "op", "payload", "run", "status", "attempts", "next_attempt_at",
        "claimed_until", "last_error", "created_at", "done_at",
    ]  # fmt: skip
    actions = ["requeue"]

    @admin.display(description="last error")
    def short_error(self, obj: OutboxItem) -> str:
        return obj.last_error[:120]

    @admin.action(description="Put dead items back in the queue (once the cause is fixed)")
    def requeue(self, request: HttpRequest, queryset: Any) -> None:
        count = outbox.requeue(queryset.values_list("pk", flat=True))
        self.message_user(request, f"{count} dead item(s) queued again.", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(SkillCandidate)
class SkillCandidateAdmin(admin.ModelAdmin):
    """Candidates and how each ended (PASSPORT.md «Эволюция навыков»). The text lives in the
    skills repository: staff write and edit it on the stand's skills page; here they may kill
    one (a commit with the reason). Figures are facts: read-only."""

    list_display = [
        "skill", "version", "status", "opened_by", "eligible", "opened_at", "decided_at",
        "short_why",
    ]  # fmt: skip
    list_filter = ["status", "skill"]
    readonly_fields = [
        "skill", "version", "active_version", "status", "opened_by", "opened_why",
        "opened_commit", "writer", "eligible", "decided_why", "decided_commit", "figures",
        "opened_at", "decided_at",
    ]  # fmt: skip
    actions = ["kill"]

    @admin.display(description="why decided")
    def short_why(self, obj: SkillCandidate) -> str:
        return obj.decided_why[:160]

    @admin.action(description="Kill the open candidate (deleted from the skills repository)")
    def kill(self, request: HttpRequest, queryset: Any) -> None:
        author = f"staff:{request.user.get_username()}"
        killed = [
            candidates.kill(c.skill, reason="killed in the admin", author=author)
            for c in queryset.filter(status="open")
        ]
        self.message_user(request, f"{len(killed)} candidate(s) killed.", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ShadowCase)
class ShadowCaseAdmin(admin.ModelAdmin):
    """Shadow cases side by side: the real run and the shadow run, and whether the answers
    agreed. The shadow's answer itself is kept nowhere."""

    list_display = [
        "pk",
        "candidate",
        "status",
        "agrees",
        "estimate",
        "run",
        "shadow",
        "created_at",
    ]
    list_filter = ["status", "agrees", "candidate__skill"]
    readonly_fields = [
        "candidate", "run", "shadow", "status", "estimate", "request", "real_answer", "agrees",
        "error", "created_at", "finished_at",
    ]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
