"""The stand: a direct line to the memory, no agent in between, the raw answer shown.

It calls the same service functions as the API (the playground owns no memory logic), probes
the graph and the vectors through the internal door (the server adds the machine secret; the
browser never sees it), and gives staff the instruction reset. One view renders the full page,
or a named fragment of it when htmx asks (django-template-partials).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh
from markdown_it import MarkdownIt

from memory import ladder
from memory.agent import skills_repo
from memory.auth import caller_for_user
from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.levels import graph as graph_level
from memory.levels import store_errors
from memory.levels.context import RecallContext
from memory.models import Research, Run, SkillCandidate
from memory.services import instruction
from memory.services.evolution import candidates, measure, share
from memory.services.recall import recall
from memory.services.remember import remember
from memory.stores import door, outbox
from memory.stores.graph import graph
from memory.stores.vectors import KINDS, vectors
from playground import controls, forms
from playground.text import CANDIDATE_STATUS, UI

SECTION = "memory-test"
VERBS = {"remember": remember, "recall": recall}


def _lang() -> str:
    return "en" if (get_language() or "ru").startswith("en") else "ru"


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def _context(request: HttpRequest, stand: forms.Stand, lang: str, **extra: Any) -> dict[str, Any]:
    items = controls.by_name(lang)
    return {
        "lang": lang,
        "ui": {key: text(lang) for key, text in UI.items()},
        "stand": stand,
        "c": items,
        "uploads": items["uploads"],
        "summary": stand.summary(lang),
        "next_card": max((card.number for card in stand.cards), default=0) + 1,
        "is_staff": request.user.is_staff,
        "contract": CONTRACT_VERSION,
        **_outbox(request, lang),
        **(_difference(lang) if request.user.is_staff else {}),
        **extra,
    }


def _outbox(request: HttpRequest, lang: str) -> dict[str, Any]:
    """The architect's store write queue: what waits, and what was set aside as dead and why."""
    architect = getattr(request.user, "architect", None)
    if architect is None:
        return {}
    state = outbox.state(architect)
    text = UI["outbox_state"](lang, queued=state["queued"], dead=state["dead"])
    return {"outbox": state, "outbox_text": text}


def _difference(lang: str) -> dict[str, Any]:
    try:
        d = instruction.difference()
    except MemoryServiceError as error:  # the release file was edited: no reference to compare
        return {"difference_error": error.message}
    text = UI["difference"](lang, added=d.added, removed=d.removed, chars=d.changed_characters)
    return {"difference": d, "difference_text": text}


def _readable(answer: dict[str, Any], lang: str) -> dict[str, Any]:
    """The parts of a raw answer the readable view shows beside the JSON."""
    used = answer.get("depth_used")
    return {
        "depth_name": next(
            (level.label(lang) for level in ladder.LEVELS if level.number == used), "—"
        ),
        "params": sorted(answer.get("params", {}).items()),
        "trace_json": json.dumps(answer.get("trace"), ensure_ascii=False, indent=2)
        if "trace" in answer
        else "",
        # A conclusion the memory drew (kept by the relearning cycle, or researched): the
        # architect may deny it in one click (PASSPORT.md §16).
        "conclusion": bool((answer.get("answer") or {}).get("found"))
        and bool((answer.get("relearned") or {}).get("summary") or answer.get("research")),
    }


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    if request.GET.get("section", SECTION) != SECTION:
        raise Http404("unknown settings section")
    lang = _lang()
    if request.method != "POST":
        return render(request, "playground/stand.html", _context(request, forms.Stand(), lang))

    stand = forms.read(request.POST)
    verb = stand.verb
    if verb not in VERBS:
        return HttpResponse("verb must be remember or recall", status=400)
    data, left_out = stand.data(verb, lang)
    status = 200
    try:
        answer = VERBS[verb](caller=caller_for_user(request.user), data=data)
    except MemoryServiceError as error:
        answer = {"contract": CONTRACT_VERSION, "error": error.as_dict()}
        status = error.status
    stand.mark_scope_errors(
        answer.get("params", {}).get("scope")
        or answer.get("error", {}).get("params", {}).get("scope"),
        lang,
    )
    context = _context(
        request,
        stand,
        lang,
        verb=verb,
        answer=answer,
        answer_json=json.dumps(answer, ensure_ascii=False, indent=2),
        readable=_readable(answer, lang),
        left_out=left_out,
        sent=json.dumps(data, ensure_ascii=False, indent=2),
    )
    template = "playground/stand.html#main" if _is_htmx(request) else "playground/stand.html"
    return render(request, template, context, status=status)


@login_required
@require_POST
def summary(request: HttpRequest) -> HttpResponse:
    """The folded card's list of set values, re-rendered as the architect changes them."""
    lang = _lang()
    return render(
        request, "playground/stand.html#summary", _context(request, forms.read(request.POST), lang)
    )


@login_required
@require_GET
def scope_card(request: HttpRequest) -> HttpResponse:
    lang = _lang()
    try:
        number = max(1, int(request.GET.get("n", "1")))
    except ValueError:
        number = 1
    context = _context(request, forms.Stand(), lang, card=forms.Card(number))
    return render(request, "playground/stand.html#scope_card", context)


@login_required
@require_POST
def probe(request: HttpRequest, store: str) -> HttpResponse:
    """Ask one store directly, as this process reaches it: the engine itself when this process
    owns it, the internal door when it does not (``graph()`` and ``vectors()`` choose, the same
    functions the door's own views call). The door's address comes from settings alone — no
    request header decides where the machine secret goes — and the secret never reaches the
    browser (PASSPORT.md §14.4)."""
    lang = _lang()
    question = request.POST.get("question", "").strip()
    architect = caller_for_user(request.user).architect
    if store == "graph":
        ctx = RecallContext.of(
            architect=architect,
            text=question,
            scope=[],
            lang=lang,
        )
        high, low = graph_level.keywords(ctx)
        sent = door.graph_query_body(
            architect_id=architect.pk, question=question, hl_keywords=high, ll_keywords=low
        )

        def ask() -> tuple[str, dict[str, Any]]:
            engine = graph()
            found = engine.query(
                architect_id=architect.pk, question=question, hl_keywords=high, ll_keywords=low
            )
            return engine.name, found.as_dict()

    elif store == "vectors":
        kind = request.POST.get("kind", "notes")
        sent = door.vectors_search_body(
            architect_id=architect.pk, kind=kind, query=question, limit=5, scope=[]
        )

        def ask() -> tuple[str, dict[str, Any]]:
            if kind not in KINDS:
                raise MemoryServiceError(f"kind must be one of {', '.join(KINDS)}", code="bad_form")
            engine = vectors()
            hits = engine.search(kind=kind, architect_id=architect.pk, query=question, limit=5)
            return engine.name, {"hits": [asdict(hit) for hit in hits]}

    else:
        raise Http404("unknown store")
    result: dict[str, Any] = {"store": store, "sent": sent}
    try:
        result["engine"], result["answer"] = ask()
    except Exception as error:  # the probe shows a store's failure; it never becomes a 500
        result["error"] = (
            error.as_dict()
            if isinstance(error, MemoryServiceError)
            else {"code": "store_failed", "message": store_errors.reason(error)}
        )
        if result["error"]["code"] == "internal_door_address_missing":
            result["error"]["message"] = door.URL_MISSING(lang)
    context = _context(
        request,
        forms.Stand(),
        lang,
        probe_store=store,
        probe_json=json.dumps(result, ensure_ascii=False, indent=2),
    )
    return render(request, "playground/stand.html#probe", context)


def _staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("staff only: the reference instruction and skill edits")


@login_required
@require_GET
def instruction_diff(request: HttpRequest) -> HttpResponse:
    _staff(request)
    lang = _lang()
    context = _context(request, forms.Stand(), lang, show_diff=True)
    return render(request, "playground/stand.html#instruction", context)


@login_required
@require_POST
def instruction_reset(request: HttpRequest) -> HttpResponse:
    _staff(request)
    if request.POST.get("confirm") != "yes":
        return HttpResponse(UI["reset_confirm_needed"](_lang()), status=400)
    instruction.instruction_reset(user=request.user)
    if _is_htmx(request):
        return HttpResponseClientRefresh()
    return redirect(f"{reverse('settings')}?section={SECTION}")


@login_required
@require_GET
def run_progress(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """A run's live state for long cycles: the stand polls it while the run is running."""
    lang = _lang()
    run = get_object_or_404(
        Run.objects.asked(), pk=run_id, architect=caller_for_user(request.user).architect
    )
    research = Research.objects.filter(pk=run.pk).first()
    context = _context(
        request, forms.Stand(), lang, run=run, levels=ladder.LEVELS, research=research
    )
    return render(request, "playground/stand.html#progress", context)


# --- skills (PASSPORT.md «Эволюция навыков») ---------------------------------------------------


_CASES = ("cases", "done", "judged", "failed")


def _skills_context(request: HttpRequest, lang: str, **extra: Any) -> dict[str, Any]:
    from django.conf import settings as conf

    cards = []
    decided = {}
    for candidate in SkillCandidate.objects.exclude(status="open").order_by("-decided_at"):
        decided.setdefault(candidate.skill, []).append(
            {
                "candidate": candidate,
                "status": CANDIDATE_STATUS[candidate.status](lang),
            }
        )
    for name, skill in skills_repo.active().items():
        candidate = candidates.open_candidate(name)
        file = skills_repo.candidate(name)
        numbers = measure.figures(candidate) if candidate is not None else None
        cards.append(
            {
                "name": name,
                "skill": skill,
                "version": skills_repo.version(skills_repo.text_of(skill)),
                "replayable": share.replayable(name),
                "misses": measure.misses(name) if share.replayable(name) else None,
                "candidate": candidate,
                "candidate_file": file,
                "figures": numbers,
                "cases": UI["cases"](lang, **{k: numbers[k] for k in _CASES}) if numbers else "",
                "history": skills_repo.history(name, limit=20),
                "decided": decided.get(name, []),
            }
        )
    proposed = []
    for name, file in skills_repo.proposed().items():
        candidate = candidates.open_candidate(name)
        if candidate is None:
            continue
        numbers = measure.figures(candidate)
        what = (
            UI["instruction_lines"](lang)
            if name == skills_repo.INSTRUCTION_NAME
            else UI["new_skill"](lang, beside=file.beside)
        )
        proposed.append(
            {
                "name": name,
                "file": file,
                "what": what,
                "candidate": candidate,
                "figures": numbers,
                "cases": UI["cases"](lang, **{k: numbers[k] for k in _CASES}),
            }
        )
    lead = UI["skills_lead"](
        lang,
        rate=conf.SHADOW_RATE,
        cap=conf.SHADOW_DAILY_TURNS,
        today=share.turns_today(),
        min=conf.PROMOTE_MIN,
        margin=conf.PROMOTE_MARGIN,
        max=conf.CANDIDATE_MAX_CASES,
    )
    return {
        "lang": lang,
        "ui": {key: text(lang) for key, text in UI.items()},
        "is_staff": request.user.is_staff,
        "cards": cards,
        "proposed": proposed,
        "lead": lead,
        **extra,
    }


@login_required
@require_GET
def skills(request: HttpRequest) -> HttpResponse:
    lang = _lang()
    return render(request, "playground/skills.html", _skills_context(request, lang))


# --- the passport (the intro: a human reads it on a page) --------------------------------------

PASSPORT = Path(__file__).resolve().parent.parent / "PASSPORT.md"


@lru_cache(maxsize=4)
def _passport_html(mtime: float) -> str:
    """PASSPORT.md as HTML (CommonMark with tables; raw HTML in it is escaped, not rendered),
    rendered again only when the file changes."""
    return (
        MarkdownIt("commonmark", {"html": False})
        .enable("table")
        .render(PASSPORT.read_text(encoding="utf-8"))
    )


@login_required
@require_GET
def passport(request: HttpRequest) -> HttpResponse:
    lang = _lang()
    context = {
        "lang": lang,
        "ui": {key: text(lang) for key, text in UI.items()},
        "passport": mark_safe(_passport_html(PASSPORT.stat().st_mtime)),  # noqa: S308 (escaped)
    }
    return render(request, "playground/passport.html", context)


def _author(request: HttpRequest) -> str:
    return f"staff:{request.user.get_username() or request.user.pk}"


@login_required
@require_POST
def skill_candidate(request: HttpRequest, name: str) -> HttpResponse:
    """Staff write (or rewrite) a candidate beside the active version: one commit."""
    _staff(request)
    if name not in skills_repo.active():
        raise Http404("no such skill")
    try:
        candidates.write_candidate(
            name,
            body=request.POST.get("body", ""),
            reason=request.POST.get("reason", ""),
            author=_author(request),
        )
    except ValueError as error:
        context = _skills_context(request, _lang(), error=f"{name}: {error}")
        return render(request, "playground/skills.html", context, status=400)
    return redirect(reverse("settings-skills"))


@login_required
@require_POST
def skill_kill(request: HttpRequest, name: str) -> HttpResponse:
    _staff(request)
    reason = request.POST.get("reason", "").strip()
    if not reason or (name not in skills_repo.active() and name not in skills_repo.proposed()):
        context = _skills_context(request, _lang(), error=f"{name}: {UI['reason'](_lang())}?")
        return render(request, "playground/skills.html", context, status=400)
    candidates.kill(name, reason=reason, author=_author(request))
    return redirect(reverse("settings-skills"))
