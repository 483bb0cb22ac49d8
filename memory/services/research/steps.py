"""Level 5's investigation, step by step (the job around it is ``job``): the entities the question
points at, the graph per entity, the vectors, the terms related to the unknown word, the graph
per term, and the conclusion with its chain of basis — or an honest answer saying what was tried.
A store that fails in a step is that step's loss, not the job's end, and it is said: the step is
marked failed in the progress, the answer names it, and level 5's report has a failed entry.
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

from memory import language, model, ner, relevance
from memory import scope as scopes
from memory.agent import instruction
from memory.agent import tools as agent_tools
from memory.i18n import Text
from memory.knowledge.lookup import notes_search
from memory.levels.context import RecallContext
from memory.levels.research import SKILL
from memory.model.base import ModelError, ToolGrant
from memory.model.structured import ask_json
from memory.model.threads import thread_record
from memory.models import Note, Research, ShapeEntry, ToolCall
from memory.services import denial
from memory.shape import selectors
from memory.stores.graph import graph
from memory.stores.graph_types import GraphContext, note_of_chunk
from memory.stores.vectors import vectors

log = logging.getLogger(__name__)

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
_STORE_FAILED = Text(
    ru="хранилище «{store}» не ответило: {error}", en="the {store} store failed: {error}"
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
_ELSEWHERE = Text(
    ru="заметок пропущено: {count} — они верны в другом месте или в другое время, чем спрошено",
    en="notes skipped: {count} — they hold in another place or time than the question asks",
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

    def failed(self, store: str, error: BaseException) -> None:
        """A store failed in a step: the step goes on without it, and the failure is kept (the
        answer names it, level 5's report has a failed entry for it), first error per store."""
        log.warning("research %s: the %s failed: %s", self.research.pk, store, error)
        failures = self.data.setdefault("failed", [])
        if not any(f["store"] == store for f in failures):
            reason = f"{getattr(error, 'code', type(error).__name__)}: {error}"[:500]
            failures.append({"store": store, "error": reason})
        self.save()

    def failures(self, lang: str) -> list[str]:
        """The failed stores, in the caller's words."""
        return [_STORE_FAILED(lang, **f) for f in self.data.get("failed", [])]

    def save(self) -> None:
        self.data["seconds"] = round(time.monotonic() - self.started, 3)
        Research.objects.filter(pk=self.research.pk).update(progress=self.data)


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


def investigate(research: Research, progress: Progress, out_of_time: Callable[[], bool]) -> Found:
    lang = research.lang
    ctx = RecallContext.of(
        architect=research.architect,
        text=research.question,
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
        told[entity] = _graph_notes(ctx, [entity], progress)
        _check(out_of_time)
    progress.step("graph", lang, notes={e: len(n) for e, n in told.items()})
    # 3. the vectors
    closest = _meaning(ctx, progress)
    progress.step(
        "vectors",
        lang,
        best=closest["similarity"] if closest else None,
        floor=settings.VECTOR_MIN_SCORE,
    )
    if closest is not None and closest["similarity"] >= settings.VECTOR_MIN_SCORE:
        note = Note.objects.get(pk=closest["note"])
        basis = [basis_of(note)]
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
        for note_id in _graph_notes(ctx, [term], progress) + _word_notes(ctx, term):
            links.append({"term": term, "note": note_id})
    # A conclusion the architect denied for this question is not drawn again from its basis.
    denied = denial.denied_notes(ctx.architect, ctx.text)
    kept = [link for link in links if link["note"] not in denied]
    notes = [_DENIED(lang, count=len(links) - len(kept))] if len(kept) < len(links) else []
    # A hypothesis rests only on what holds where and when the question is asked.
    here = _held_here(ctx, [link["note"] for link in kept])
    elsewhere = [link for link in kept if link["note"] not in here]
    kept = [link for link in kept if link["note"] in here]
    if elsewhere:
        notes.append(_ELSEWHERE(lang, count=len({link["note"] for link in elsewhere})))
    progress.step("terms_graph", lang, links=len(kept), note="; ".join(notes))
    # 6. the answer
    found = _conclude(ctx, entities, unknown, kept)
    if found is not None:
        found.summary = summary
        return found
    tried = _TRIED(
        lang, entities=len(entities), terms=len(terms), turns=progress.data["model_turns"]
    )
    reasons = "; ".join(
        [s["note"] for s in progress.data["steps"] if s.get("note")] + progress.failures(lang)
    )
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


def _graph(ctx: RecallContext, words: list[str], progress: Progress) -> GraphContext:
    """The graph's context for these words, keywords given by code (no model call); a store's
    fault is an empty context for this step and a failure the answer names (``failed``)."""
    try:
        return graph().query(
            architect_id=ctx.architect.pk,
            question=" ".join(words),
            hl_keywords=words,
            ll_keywords=words,
        )
    except Exception as error:
        progress.failed("graph", error)
        return GraphContext()


def _graph_notes(ctx: RecallContext, words: list[str], progress: Progress) -> list[str]:
    """The notes the graph's context for these words comes from."""
    context = _graph(ctx, words, progress)
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


def _meaning(ctx: RecallContext, progress: Progress) -> dict[str, Any] | None:
    try:
        hits = vectors().search(
            kind="notes", architect_id=ctx.architect.pk, query=ctx.text, limit=1, scope=ctx.scope
        )
    except Exception as error:
        progress.failed("vectors", error)
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
        return Take(*_neighbours(ctx, unknown, progress))
    grant = ToolGrant(
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
            tools=grant,
            thread=None,
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
    except ModelError as error:
        if error.usage is not None:  # a failed call is counted on the run all the same
            count(progress, error.usage)
        terms, _ = _neighbours(ctx, unknown, progress)
        return Take(terms, f"{error.code}: {error.message}")
    thread_record(architect=ctx.architect, backend=model.backend(), result=result)
    progress.data["thread"] = result.thread  # a denial may name it (PASSPORT.md §16)
    count(progress, result)
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


def count(progress: Progress, used: Any) -> None:
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
        if note is None or str(note.pk) in denied or not scopes.fits(note.scope, ctx.scope):
            continue
        basis.append(basis_of(note))
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


def _neighbours(
    ctx: RecallContext, unknown: list[str], progress: Progress
) -> tuple[list[str], str]:
    """The graph's entities around the unknown words, when no model can name terms."""
    context = _graph(ctx, unknown, progress)
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


def _held_here(ctx: RecallContext, note_ids: list[str]) -> set[str]:
    """The notes among these whose scope fits the question's (``memory.scope.fits``)."""
    notes = Note.objects.filter(architect=ctx.architect, pk__in=list(dict.fromkeys(note_ids)))
    return {str(n.pk) for n in notes.only("id", "scope") if scopes.fits(n.scope, ctx.scope)}


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
        return Found(text=text, found=True, chain=chain, basis=[basis_of(note)])
    return None


def basis_of(note: Note) -> dict[str, Any]:
    return {
        "note": str(note.pk),
        "text": note.text,
        "said_at": note.created_at.isoformat(),
        "source": "notes",
        "id": f"notes:{note.pk}",
        "run": str(note.run_id or ""),
    }
