"""A signed-in person with no memory: the playground says so, in the page's language.

``memory.auth.caller_for_user`` raises ``NoMemory`` for a user who is not a member of any
architect. This middleware turns that into a page (or, for htmx, the fragment that takes the
place of the answer), naming how staff give the account a memory. Every view that reaches for
the caller's memory is covered, with no check repeated in each view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from memory.auth import NoMemory
from memory.i18n import Text

TEXT = {
    "title": Text(ru="Памяти нет", en="No memory"),
    "lead": Text(
        ru="У учётной записи «{user}» нет памяти: она не состоит ни в одном архитекторе.",
        en="The account “{user}” has no memory assigned: it is not a member of any architect.",
    ),
    "how": Text(
        ru=(
            "Память назначает персонал: в админке (Пользователь → architect) или командой "
            "«manage.py memory_member {user} АРХИТЕКТОР». Совпадение имени пользователя с именем "
            "архитектора доступа не даёт."
        ),
        en=(
            "Staff assigns one: in the admin (User → architect) or with the command "
            "“manage.py memory_member {user} ARCHITECT”. A username that equals an "
            "architect's name grants nothing."
        ),
    ),
}


def _lang() -> str:
    return "en" if (get_language() or "ru").startswith("en") else "ru"


def no_memory_response(request: HttpRequest) -> HttpResponse:
    lang = _lang()
    user = request.user.get_username()
    context = {"lang": lang, **{key: text(lang, user=user) for key, text in TEXT.items()}}
    if getattr(request, "htmx", False):
        # htmx swaps only 2xx answers: the notice must arrive as one to take the answer's place.
        return render(request, "registration/no_memory.html#notice", context)
    return render(request, "registration/no_memory.html", context, status=403)


class NoMemoryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        if isinstance(exception, NoMemory):
            return no_memory_response(request)
        return None
