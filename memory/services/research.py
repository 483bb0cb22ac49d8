"""Level 5: research, the skill ``deep-analysis`` (PASSPORT.md §16), as a Celery job.

A recall at ``extreme`` whose levels 1–4 found nothing starts one (``start``): a ``Research``
row named by the recall's run, sent to Celery once the row commits. The job (``conduct``,
idempotent by that run id) follows the owner's order, writing its progress as it goes:

1. the entities the question points at, from the tables (the rows of a table its words name:
   "friends" → the friends);
2. the graph per entity — what is told about each;
3. the vectors — the question by meaning;
4. up to ten terms related to the question's unknown word (a word no note holds): the model's
   when one is set, else the graph's neighbours of that word;
5. the graph (and the full-text index) per term: a note found by a term that names one of the
   entities links the entity to the unknown word;
6. a satisfying answer with its chain of basis (the note, the run that recorded it, the term),
   or an honest unsatisfying one saying what was tried and what could not be done.

The answer is a hypothesis (``probabilistic``): the owner's rule is that the chain may be wrong,
so the basis and the result are kept, not the reasoning. A found answer goes through the
relearning cycle, level 5, so the same question is cheap next time.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory import language, model, ner, relevance
from memory.agent import instruction
from memory.agent import tools as agent_tools
from memory.i18n import Text
from memory.levels.context import RecallContext
from memory.model.base import ModelError, ModelResult, ToolScope
from memory.model.structured import ask_json
from memory.model.threads import thread_record
from memory.models import Note, Research, Run, ShapeEntry, ToolCall
from memory.services import denial, evolution, relearning
from memory.services.lookup import notes_search
from memory.shape import selectors
from memory.stores.graph import graph
from memory.stores.graph_types import GraphContext, note_of_chunk
from memory.stores.vectors import vectors

log = logging.getLogger(__name__)

SKILL = "deep-analysis"
TASK = "memory.research"
MAX_TERMS = 10
MAX_ENTITIES = 20
ROWS_READ = 50

MODEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["terms"],
    "properties": {
        "terms": {"type": "array", "maxItems": MAX_TERMS, "items": {"type": "string"}},
        "found": {"type": "boolean"},
        "text": {"type": "string"},
        "basis": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["quote"],
                "properties": {
                    "quote": {"type": "string"},
                    "term": {"type": "string"},
                    "entity": {"type": "string"},
                },
            },
        },
        "summary": {"type": "string"},
    },
}
_MODEL_TASK = (
    "Задача — шаги 4–6 навыка deep-analysis. Назови до десяти терминов, ближайших к неизвестному "
    "слову вопроса (места, должности, события, люди), — terms. Проверь их инструментами "
    "find_notes и ask_graph. Если нашлась заметка, которая связывает сущность с неизвестным "
    "словом, верни found=true, text — вывод (гипотезу, не факт) и basis — дословные цитаты "
    "заметок (quote), с термином (term) и сущностью (entity). Иначе found=false: код проверит "
    "термины сам."
)

_STEP = {
    "tables": Text(ru="сущности из таблиц", en="entities from the tables"),
    "graph": Text(ru="граф по каждой сущности", en="the graph per entity"),
    "vectors": Text(ru="поиск по смыслу", en="search by meaning"),
    "terms": Text(ru="связанные термины", en="related terms"),
    "terms_graph": Text(ru="граф по каждому термину", en="the graph per term"),
}
_FOUND = Text(
    ru="{entity} мог(ла) быть связан(а) с «{unknown}»: «{text}» (заметка {note}, сказано {day}, "
    "прогон {run}) — через «{term}». Это вывод, а не сказанный факт.",
    en="{entity} may be linked to «{unknown}»: «{text}» (note {note}, said {day}, run {run}) — "
    "through «{term}». This is an inference, not a told fact.",
)
_FOUND_NO_ENTITY = Text(
    ru="Связь с «{unknown}» может давать запись «{text}» (заметка {note}, сказано {day}) — через "
    "«{term}». Это вывод, а не сказанный факт.",
    en="A link to «{unknown}» may come from «{text}» (note {note}, said {day}) — through "
    "«{term}». This is an inference, not a told fact.",
)
_MEANING = Text(
    ru="По смыслу ближе всего: «{text}» (заметка {note}, сходство {similarity:.3f}).",
    en="Closest by meaning: «{text}» (note {note}, similarity {similarity:.3f}).",
)
_NOT_FOUND = Text(
    ru="Исследование не нашло ответа. Проверено: {tried}.",
    en="The research found no answer. Tried: {tried}.",
)
_NO_MODEL_TERMS = Text(
    ru="модель не настроена — связанные термины взяты у соседей в графе",
    en="no model is set — the related terms came from the graph's neighbours",
)
_NO_UNKNOWN = Text(
    ru="в вопросе нет неизвестного слова — искать связанные термины не для чего",
    en="the question has no unknown word — no related terms to look for",
)
_NO_NEIGHBOURS = Text(
    ru="у «{word}» нет соседей в графе, а без модели других терминов взять неоткуда",
    en="«{word}» has no neighbours in the graph, and without a model there is nowhere else to "
    "take terms from",
)
_TIME_UP = Text(
    ru="время исследования вышло ({seconds} с); закрыто с тем, что найдено",
    en="the research ran out of time ({seconds} s); closed with what was found",
)
_DENIED = Text(
    ru="связей пропущено: {count} — вывод из них архитектор уже отвергнут",
    en="links skipped: {count} — the architect already rejected the conclusion they lead to",
)
_CITED = Text(
    ru="Основание: «{text}» (заметка {note}, сказано {day}, прогон {run}).",
    en="Basis: «{text}» (note {note}, said {day}, run {run}).",
)
_TRIED = Text(
    ru="сущностей {entities}, терминов {terms}, ходов модели {turns}",
    en="{entities} entities, {terms} terms, {turns} model turns",
)


class TimeUp(Exception):
    """The soft time limit: close the run with what was found."""


@dataclass
class Progress:
    """What the job has done so far, written to its row after every step (the stand reads it)."""

    research: Research
    started: float = field(default_factory=time.monotonic)
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.data = {
            "levels": list(self.research.progress.get("levels", [])),
            "steps": [],
            "entities": [],
            "terms": [],
            "model_turns": 0,
            "seconds": 0.0,
        }

    def step(self, name: str, lang: str, **facts: Any) -> None:
        self.data["steps"].append({"step": name, "label": _STEP[name](lang), **facts})
        self.save()

    def save(self) -> None:
        self.data["seconds"] = round(time.monotonic() - self.started, 3)
        Research.objects.filter(pk=self.research.pk).update(progress=self.data)


# --- starting -----------------------------------------------------------------------------------


def start(ctx: RecallContext, levels: list[int]) -> Research:
    """Open the job for this recall (idempotent by its run) and send it once the row commits."""
    assert ctx.run is not None
    research, created = Research.objects.get_or_create(
        run=ctx.run,
        defaults={
            "architect": ctx.architect,
            "question": ctx.text,
            "scope": ctx.scope,
            "lang": ctx.lang,
            "progress": {"levels": levels, "steps": [], "model_turns": 0, "seconds": 0.0},
        },
    )
    if created:
        run_id = str(ctx.run.pk)
        transaction.on_commit(lambda: send(run_id), robust=True)
    return research


def send(run_id: str) -> None:
    """Hand the job to Celery; a broker that is down fails the job with the reason, never the
    answer that started it."""
    from memory.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:  # Celery's own eager mode: the job runs here, now
        from memory.tasks import research_run

        research_run.apply(args=[run_id])
        return
    try:
        app.send_task(TASK, args=[run_id])
    except Exception as error:
        log.warning("research %s could not be sent to Celery: %s", run_id, error)
        Research.objects.filter(pk=run_id, status="queued").update(
            status="failed", error=f"broker: {error}"[:4000], finished_at=timezone.now()
        )


# --- the job ------------------------------------------------------------------------------------


def claim(run_id: str) -> Research | None:
    """Take the job; None when it is done, failed, or unknown (a redelivery after it finished)."""
    with transaction.atomic():
        research = Research.objects.select_for_update().filter(pk=run_id).first()
        if research is None or research.status in ("done", "failed"):
            return None
        research.status = "running"
        research.attempts += 1
        research.started_at = research.started_at or timezone.now()
        research.save(update_fields=["status", "attempts", "started_at"])
    return research


def conduct(run_id: str, *, out_of_time: Callable[[], bool] | None = None) -> Research | None:
    """Run the job to its end and close it: done with its answer (and what the relearning cycle
    kept), or failed with the reason. Safe to call again for the same run. Out of time (the soft
    limit, by Celery's signal or by this process's own clock) it closes with what was found."""
    research = claim(run_id)
    if research is None:
        return Research.objects.filter(pk=run_id).first()
    if out_of_time is None:
        deadline = time.monotonic() + settings.RESEARCH_SOFT_SECONDS
        out_of_time = lambda: time.monotonic() > deadline  # noqa: E731
    progress = Progress(research)
    try:
        found = _investigate(research, progress, out_of_time)
    except Exception as error:
        log.exception("research %s failed", run_id)
        progress.save()
        _on_run(research, progress)
        Research.objects.filter(pk=run_id).update(
            status="failed",
            error=f"{getattr(error, 'code', type(error).__name__)}: {error}"[:4000],
            finished_at=timezone.now(),
        )
        return Research.objects.get(pk=run_id)
    research.answer = found.answer_body()
    research.kind = "probabilistic"
    research.progress = progress.data
    if found.basis:
        research.relearned = _relearn(research, found, progress)
        research.answer["relearned"] = research.relearned
    research.status = "done"
    research.finished_at = timezone.now()
    progress.save()
    research.save()
    _on_run(research, progress)
    if progress.data["model_turns"]:  # the model worked by the skill: a candidate may replay it
        evolution.offer(
            Run.objects.get(pk=research.pk),
            request={"text": research.question, "scope": research.scope, "lang": research.lang},
            answer=lambda: evolution.brief(
                found=found.found, ids=[b["note"] for b in found.basis], text=found.text
            ),
            skills=[SKILL],
        )
    return research


def _on_run(research: Research, progress: Progress) -> None:
    """The job's model calls are counted on the recall's run (closed before the job began), and
    the conversation the conclusion came from is named there (a denial may name it)."""
    used = progress.data.get("usage", [])
    changes: dict[str, Any] = {
        "model_turns": F("model_turns") + sum(u.get("turns", 0) for u in used),
        "tokens_in": F("tokens_in") + sum(u.get("tokens_in", 0) for u in used),
        "tokens_out": F("tokens_out") + sum(u.get("tokens_out", 0) for u in used),
        "model_seconds": F("model_seconds") + sum(u.get("seconds", 0.0) for u in used),
    }
    if progress.data.get("thread"):
        changes["thread"] = progress.data["thread"]
    Run.objects.filter(pk=research.pk).update(**changes)


def investigate_again(run: Run, request: dict[str, Any]) -> tuple[Found, list[ModelResult]]:
    """Steps 1–6 once more, for a shadow run (memory.services.evolution): no job row is written,
    nothing is relearned; the model's calls are returned to be counted on the shadow run."""
    research = Research(
        run=run,
        architect=run.architect,
        question=request["text"],
        scope=request.get("scope", []),
        lang=request.get("lang", settings.MEMORY_LANG),
        progress={"levels": [], "steps": [], "model_turns": 0, "seconds": 0.0},
    )
    progress = Progress(research)  # its saves update no row: there is none for a shadow
    deadline = time.monotonic() + settings.RESEARCH_SOFT_SECONDS
    found = _investigate(research, progress, lambda: time.monotonic() > deadline)
    usages = [
        ModelResult(
            text="",
            thread="",
            turns=u.get("turns", 0),
            tokens_in=u.get("tokens_in", 0),
            tokens_out=u.get("tokens_out", 0),
            seconds=u.get("seconds", 0.0),
        )
        for u in progress.data.get("usage", [])
    ]
    return found, usages


@dataclass
class Found:
    text: str
    found: bool
    chain: list[dict[str, Any]] = field(default_factory=list)
    basis: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""

    def answer_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"form": "text", "found": self.found, "text": self.text}
        if self.chain:
            body["data"] = {
                "chain": self.chain,
                "notes": [
                    {"id": f"notes:{b['note']}", "note": b["note"], "text": b["text"]}
                    for b in self.basis
                ],
            }
        return body


def _check(out_of_time: Callable[[], bool]) -> None:
    if out_of_time():
        raise TimeUp


def _investigate(research: Research, progress: Progress, out_of_time: Callable[[], bool]) -> Found:
    lang = research.lang
    ctx = RecallContext(
        architect=research.architect,
        text=research.question,
        keywords=language.keywords(research.question),
        scope=research.scope,
        lang=lang,
        run=research.run,
    )
    try:
        return _steps(ctx, progress, out_of_time)
    except (TimeUp, SoftTimeLimitExceeded):
        tried = _TRIED(
            lang,
            entities=len(progress.data["entities"]),
            terms=len(progress.data["terms"]),
            turns=progress.data["model_turns"],
        )
        note = _TIME_UP(lang, seconds=settings.RESEARCH_SOFT_SECONDS)
        return Found(text=f"{_NOT_FOUND(lang, tried=tried)} {note}", found=False)


def _steps(ctx: RecallContext, progress: Progress, out_of_time: Callable[[], bool]) -> Found:
    lang = ctx.lang
    # 1. the entities the question points at, from the tables
    entities = _table_entities(ctx)
    progress.data["entities"] = entities
    progress.step("tables", lang, entities=entities)
    _check(out_of_time)
    # 2. the graph per entity
    told: dict[str, list[str]] = {}
    for entity in entities:
        told[entity] = _graph_notes(ctx, [entity])
        _check(out_of_time)
    progress.step("graph", lang, notes={e: len(n) for e, n in told.items()})
    # 3. the vectors
    closest = _meaning(ctx)
    progress.step(
        "vectors",
        lang,
        best=closest["similarity"] if closest else None,
        floor=settings.VECTOR_MIN_SCORE,
    )
    if closest is not None and closest["similarity"] >= settings.VECTOR_MIN_SCORE:
        note = Note.objects.get(pk=closest["note"])
        basis = [_basis(note)]
        text = _MEANING(lang, text=note.text, note=note.pk, similarity=closest["similarity"])
        return Found(text=text, found=True, chain=[{"step": "vectors", **closest}], basis=basis)
    _check(out_of_time)
    # 4. related terms for the unknown word (with a model: steps 4–6 through the tools)
    unknown = _unknown_words(ctx)
    told_texts = _texts([n for ids in told.values() for n in ids])
    take = _related_terms(ctx, unknown, entities, told_texts, progress)
    terms, summary = take.terms, take.summary
    progress.data["terms"] = terms
    progress.step("terms", lang, unknown=unknown, terms=terms, note=take.note)
    found = _from_model(ctx, take, unknown)
    if found is not None:
        return found
    # 5. the graph (and the words' index) per term
    links: list[dict[str, Any]] = []
    for term in terms:
        _check(out_of_time)
        for note_id in _graph_notes(ctx, [term]) + _word_notes(ctx, term):
            links.append({"term": term, "note": note_id})
    # A conclusion the architect denied for this question is not drawn again from its basis.
    denied = denial.denied_notes(ctx.architect, ctx.text)
    kept = [link for link in links if link["note"] not in denied]
    note = _DENIED(lang, count=len(links) - len(kept)) if len(kept) < len(links) else ""
    progress.step("terms_graph", lang, links=len(kept), note=note)
    # 6. the answer
    found = _conclude(ctx, entities, unknown, kept)
    if found is not None:
        found.summary = summary
        return found
    tried = _TRIED(
        lang, entities=len(entities), terms=len(terms), turns=progress.data["model_turns"]
    )
    reasons = "; ".join(s.get("note", "") for s in progress.data["steps"] if s.get("note"))
    text = _NOT_FOUND(lang, tried=tried) + (f" {reasons}." if reasons else "")
    return Found(text=text, found=False)


def _table_entities(ctx: RecallContext) -> list[str]:
    """The rows of the tables the question's words name (their label's lemmas)."""
    asked = set(ctx.keywords)
    names: list[str] = []
    for entry in selectors.catalog(ctx.architect):
        if entry.kind != "table" or not set(entry.lemmas) & asked:
            continue
        for row in selectors.table_rows(
            ctx.architect, entry, only=None, attributes=[], limit=ROWS_READ
        ):
            value = row.get("value")
            if isinstance(value, str) and value.strip():
                names.append(value.strip())
    return list(dict.fromkeys(names))[:MAX_ENTITIES]


def _graph(ctx: RecallContext, words: list[str]) -> GraphContext:
    """The graph's context for these words, keywords given by code (no model call); a store's
    fault is logged and read as an empty context — one step's loss, not the job's end."""
    try:
        return graph().query(
            architect_id=ctx.architect.pk,
            question=" ".join(words),
            hl_keywords=words,
            ll_keywords=words,
        )
    except Exception as error:
        log.warning("research: the graph failed for %s: %s", words, error)
        return GraphContext()


def _graph_notes(ctx: RecallContext, words: list[str]) -> list[str]:
    """The notes the graph's context for these words comes from."""
    context = _graph(ctx, words)
    sources = [c.get("source") for c in context.chunks]
    for relation in context.relations:
        sources += relation.get("sources", [])
    ids = [n for n in (note_of_chunk(s) for s in sources) if n]
    return list(dict.fromkeys(ids))


def _word_notes(ctx: RecallContext, term: str) -> list[str]:
    terms = language.keywords(term)
    if not terms:
        return []
    hits = notes_search(architect=ctx.architect, terms=terms, limit=10, scope=ctx.scope)
    return [str(h.note.pk) for h in hits if h.coverage >= 0.999]


def _meaning(ctx: RecallContext) -> dict[str, Any] | None:
    try:
        hits = vectors().search(
            kind="notes", architect_id=ctx.architect.pk, query=ctx.text, limit=1, scope=ctx.scope
        )
    except Exception as error:
        log.warning("research: the vectors failed: %s", error)
        return None
    if not hits:
        return None
    return {
        "note": str(hits[0].payload.get("note", hits[0].id)),
        "similarity": round(hits[0].score, 4),
    }


def _unknown_words(ctx: RecallContext) -> list[str]:
    """The question's words no note and no table holds (the "Yeltsin" of the owner's example):
    the things it names, when it names some; else its content words."""
    names = {n.name: language.keywords(n.name) for n in ner.entities(ctx.text)}
    lemmas = list(dict.fromkeys([*ctx.keywords, *(t for ts in names.values() for t in ts)]))
    weights = relevance.term_weights(ctx.architect, lemmas)
    known = {
        lemma for e in ShapeEntry.objects.filter(architect=ctx.architect) for lemma in e.lemmas
    }

    def unknown(terms: list[str]) -> bool:
        return bool(terms) and all(not weights.df.get(t) and t not in known for t in terms)

    things = [name for name, terms in names.items() if unknown(terms)]
    return things or [t for t in ctx.keywords if unknown([t])]


@dataclass
class Take:
    """Step 4's outcome: the terms and why they came from where they did; with a model, what
    it concluded through the tools (a conclusion and the quotes it rests on)."""

    terms: list[str]
    note: str = ""
    summary: str = ""
    found: bool = False
    text: str = ""
    basis: list[dict[str, str]] = field(default_factory=list)


def _texts(note_ids: list[str]) -> list[str]:
    ids = list(dict.fromkeys(note_ids))[:MAX_ENTITIES]
    return list(Note.objects.filter(pk__in=ids).values_list("text", flat=True))


def _related_terms(
    ctx: RecallContext,
    unknown: list[str],
    entities: list[str],
    told: list[str],
    progress: Progress,
) -> Take:
    if not unknown:
        return Take([], _NO_UNKNOWN(ctx.lang))
    if not model.configured():
        return Take(*_neighbours(ctx, unknown))
    scope = ToolScope(
        architect_id=ctx.architect.pk,
        run_id=str(ctx.run.pk) if ctx.run else "",
        tools=agent_tools.RESEARCH_TOOLS,
    )
    prompt = "\n".join(
        [
            f"Вопрос: «{ctx.text}»",
            f"Неизвестное слово: «{', '.join(unknown)}»",
            f"Сущности из таблиц: {json.dumps(entities, ensure_ascii=False)}",
            f"Что о них сказано: {json.dumps(told, ensure_ascii=False)}",
            f"Язык ответа: {ctx.lang}",
        ]
    )
    try:
        value, result = ask_json(
            model.backend(),
            prompt=prompt,
            system=instruction.system_prompt((SKILL,), extra=_MODEL_TASK),
            schema=MODEL_SCHEMA,
            tools=scope,
            thread=None,
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
    except ModelError as error:
        if error.usage is not None:  # a failed call is counted on the run all the same
            _count(progress, error.usage)
        terms, _ = _neighbours(ctx, unknown)
        return Take(terms, f"{error.code}: {error.message}")
    thread_record(architect=ctx.architect, backend=model.backend(), result=result)
    progress.data["thread"] = result.thread  # a denial may name it (PASSPORT.md §16)
    _count(progress, result)
    if ctx.run is not None:
        progress.data["tools"] = list(
            ToolCall.objects.filter(run=ctx.run).values_list("tool", flat=True)
        )
    return Take(
        terms=[str(t).strip() for t in value.get("terms", []) if str(t).strip()][:MAX_TERMS],
        summary=str(value.get("summary") or ""),
        found=bool(value.get("found")),
        text=str(value.get("text") or ""),
        basis=[b for b in value.get("basis") or [] if str(b.get("quote", "")).strip()],
    )


def _count(progress: Progress, used: Any) -> None:
    progress.data["model_turns"] += used.turns
    progress.data.setdefault("usage", []).append(
        {
            "turns": used.turns,
            "tokens_in": used.tokens_in,
            "tokens_out": used.tokens_out,
            "seconds": used.seconds,
        }
    )


def _from_model(ctx: RecallContext, take: Take, unknown: list[str]) -> Found | None:
    """The model's conclusion, when the notes it quotes exist (its word alone is no basis) and
    no denied conclusion rests on them. None: the code goes on with the model's terms."""
    if not take.found or not take.basis or not take.text.strip():
        return None
    denied = denial.denied_notes(ctx.architect, ctx.text)
    basis, chain = [], []
    for cited in take.basis:
        quote = " ".join(str(cited["quote"]).split())
        note = (
            Note.objects.filter(architect=ctx.architect, text=quote).first()
            or Note.objects.filter(architect=ctx.architect, text__contains=quote).first()
        )
        if note is None or str(note.pk) in denied:
            continue
        basis.append(_basis(note))
        chain.append(
            {
                "step": "model",
                "entity": cited.get("entity"),
                "unknown": ", ".join(unknown),
                "term": cited.get("term"),
                "note": str(note.pk),
                "run": str(note.run_id or ""),
            }
        )
    if not basis:
        return None
    lines = [take.text.strip()] + [
        _CITED(ctx.lang, text=b["text"], note=b["note"], day=b["said_at"][:10], run=b["run"] or "—")
        for b in basis
    ]
    return Found(text="\n".join(lines), found=True, chain=chain, basis=basis, summary=take.summary)


def _neighbours(ctx: RecallContext, unknown: list[str]) -> tuple[list[str], str]:
    """The graph's entities around the unknown words, when no model can name terms."""
    context = _graph(ctx, unknown)
    names = []
    asked = set(unknown)
    for entity in context.entities:
        name = str(entity.get("name") or "")
        if name and not set(language.keywords(name)) & asked:
            names.append(name)
    terms = list(dict.fromkeys(names))[:MAX_TERMS]
    note = _NO_MODEL_TERMS(ctx.lang)
    if not terms:
        note = _NO_NEIGHBOURS(ctx.lang, word=", ".join(unknown))
    return terms, note


def _conclude(
    ctx: RecallContext, entities: list[str], unknown: list[str], links: list[dict[str, Any]]
) -> Found | None:
    """A note a term found that names one of the entities (or, with no entities, the first note
    a term found) links the question's unknown word to what was told."""
    if not links or not unknown:
        return None
    notes = {
        str(n.pk): n
        for n in Note.objects.filter(
            architect=ctx.architect, pk__in=[link["note"] for link in links]
        )
    }
    named = {e: set(language.keywords(e)) for e in entities}
    for link in links:
        note = notes.get(link["note"])
        if note is None:
            continue
        held = set(language.keywords(note.text))
        # The graph ranks by similarity and returns something for almost any word: a link
        # holds only when the note itself says the term (and names the entity, when the
        # question points at some).
        term = set(language.keywords(link["term"]))
        if not term or not term <= held:
            continue
        entity = next((e for e, lemmas in named.items() if lemmas and lemmas <= held), None)
        if entities and entity is None:
            continue
        day = note.created_at.date().isoformat()
        values = {
            "unknown": ", ".join(unknown),
            "text": note.text,
            "note": note.pk,
            "day": day,
            "run": note.run_id or "—",
            "term": link["term"],
        }
        text = (
            _FOUND(ctx.lang, entity=entity, **values)
            if entity
            else _FOUND_NO_ENTITY(ctx.lang, **values)
        )
        chain = [
            {"step": "tables", "entity": entity},
            {"step": "terms", "unknown": values["unknown"], "term": link["term"]},
            {"step": "terms_graph", "note": str(note.pk), "run": str(note.run_id or "")},
        ]
        return Found(text=text, found=True, chain=chain, basis=[_basis(note)])
    return None


def _basis(note: Note) -> dict[str, Any]:
    return {
        "note": str(note.pk),
        "text": note.text,
        "said_at": note.created_at.isoformat(),
        "source": "notes",
        "id": f"notes:{note.pk}",
        "run": str(note.run_id or ""),
    }


def _relearn(research: Research, found: Found, progress: Progress) -> dict[str, Any]:
    """The relearning cycle at level 5; a model turn it takes (the summary) is the job's."""
    used: list[Any] = []
    result = relearning.Result(
        question=research.question,
        level=5,
        kind="probabilistic",
        text=found.text,
        facts=found.basis,
        scope=research.scope,
        summary=found.summary,
    )
    try:
        return relearning.relearn(
            result,
            architect=research.architect,
            run=research.run,
            lang=research.lang,
            usages=used,
        )
    except Exception as error:
        log.exception("research %s: the relearning cycle failed", research.pk)
        return relearning.failed(error)
    finally:
        for usage in used:
            _count(progress, usage)


def state(research: Research) -> dict[str, Any]:
    """The job as an answer shows it: its run, status and progress (and error when it failed)."""
    out: dict[str, Any] = {
        "run": str(research.pk),
        "status": research.status,
        "progress": research.progress,
    }
    if research.error:
        out["error"] = research.error
    return out
