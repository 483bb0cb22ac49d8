"""The stand: a direct line to the memory, no agent in between, the raw answer shown.

It calls the same service functions as the API; it owns no memory logic.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from memory.auth import caller_for_user
from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.services.recall import recall
from memory.services.remember import remember

SECTION = "memory-test"
VERBS = {"remember": remember, "recall": recall}


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    if request.GET.get("section", SECTION) != SECTION:
        raise Http404("unknown settings section")
    lang = get_language() or "ru"
    context: dict[str, Any] = {"lang": lang, "text": "", "answer": None, "verb": None}
    if request.method == "POST":
        verb = request.POST.get("verb", "")
        if verb not in VERBS:
            return HttpResponse("verb must be remember or recall", status=400)
        text = request.POST.get("text", "")
        caller = caller_for_user(request.user)
        try:
            answer = VERBS[verb](caller=caller, data={"text": text, "lang": lang})
            status = 200
        except MemoryServiceError as error:
            answer = {"contract": CONTRACT_VERSION, "error": error.as_dict()}
            status = error.status
        context.update(
            text=text,
            verb=verb,
            answer=json.dumps(answer, ensure_ascii=False, indent=2),
        )
        return render(request, "playground/stand.html", context, status=status)
    return render(request, "playground/stand.html", context)
