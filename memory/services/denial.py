"""Denial (PASSPORT.md §16, «Отрицание»): the architect rejects a conclusion the memory drew.

``remember`` with ``deny`` naming the run whose answer drew the conclusion, and the human's
words as its text. The words are kept as a note like any other; then a relearning cycle extends
the earlier summary: the architect rejected this hypothesis and knows it did not happen. The
extended summary is kept as a claim of kind ``denied``, linked to the run and its chain; the
earlier summary stays (a deleted hypothesis would be drawn again by the same chain) but no longer
answers; the FACT the conclusion rested on is untouched. The same question then gets "checked
and denied", never the conclusion again (level 1 answers from the denied claim; research skips
a chain already denied).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.utils import timezone

from memory import language
from memory.i18n import Text
from memory.models import Architect, Research, Run, Summary, Thread
from memory.services import relearning

_NO_RUN = Text(
    ru="deny должен назвать прогон ответа, чей вывод отвергнут (run из ответа recall), или нить "
    "модели, из которой он пришёл (thread); «{value}» не называет ни того, ни другого — "
    "отрицание не записано, фраза сохранена как заметка",
    en="deny must name the run of the answer whose conclusion is rejected (the run of a recall "
    "answer) or the model conversation it came from (thread); «{value}» names neither — no "
    "denial recorded, the phrase is kept as a note",
)
_NOTHING = Text(
    ru="прогон {run} не сделал вывода, который можно отвергнуть (нет исследования с ответом и "
    "нет саммари) — отрицание не записано, фраза сохранена как заметка",
    en="run {run} drew no conclusion to reject (no research with an answer, no summary) — no "
    "denial recorded, the phrase is kept as a note",
)
_TAKEN = Text(
    ru="вывод прогона {run} отвергнут; записано саммари-отрицание {summary}",
    en="the conclusion of run {run} is rejected; the denial summary {summary} is kept",
)
_EXTENDED = Text(
    ru="{earlier} Архитектор отверг эту гипотезу и сказал, что точно знает — этого не было: "
    "«{words}» (прогон {run}). Факты, на которых она стояла, остаются.",
    en="{earlier} The architect rejected this hypothesis and said they know it did not happen: "
    "«{words}» (run {run}). The facts it rested on stay.",
)


class Refused(Exception):
    """The denial cannot be attached: the reason names what is missing."""


def _conclusion(run: Run) -> tuple[Summary | None, Research | None]:
    research = Research.objects.filter(pk=run.pk, status="done").first()
    if research is not None and not research.answer.get("found"):
        research = None
    summary = Summary.objects.answering().filter(run=run).order_by("-created_at").first()
    return summary, research


def deny(
    value: str, *, words: str, architect: Architect, run: Run, lang: str
) -> tuple[str, dict[str, Any]]:
    """Record the denial of the conclusion of the run ``value`` names; (the fate's note, what the
    relearning cycle kept). Raises ``Refused`` when nothing can be attached."""
    denied_run = _named_run(value, architect)
    if denied_run is None:
        raise Refused(_NO_RUN(lang, value=value[:80]))
    earlier, research = _conclusion(denied_run)
    if earlier is None and research is None:
        raise Refused(_NOTHING(lang, run=denied_run.pk))
    question = earlier.question if earlier else denied_run.text
    basis = earlier.basis if earlier else _research_basis(research)
    text = _EXTENDED(
        lang,
        earlier=(earlier.text if earlier else research.answer.get("text", "")).strip(),
        words=" ".join(words.split()),
        run=run.pk,
    )
    result = relearning.Result(
        question=question,
        level=earlier.level if earlier else 5,
        kind="affirmative",  # the architect said it: it is known, not inferred
        text=text,
        facts=basis,
        scope=earlier.scope if earlier else [],
        summary=text,
        claim="denied",
        denies=earlier,
        denied_run=denied_run,
    )
    kept = relearning.relearn(result, architect=architect, run=run, lang=lang)
    Summary.objects.answering().filter(run=denied_run).update(
        denied_by=run, denied_at=timezone.now()
    )
    return _TAKEN(lang, run=denied_run.pk, summary=kept["summary"]), kept


def _named_run(value: str, architect: Architect) -> Run | None:
    """The recall run ``value`` names: by its id, or by the model conversation its conclusion
    came from (the newest such run that concluded something)."""
    value = value.strip()
    try:
        run = (
            Run.objects.asked()
            .filter(architect=architect, pk=uuid.UUID(value), verb="recall")
            .first()
        )
    except ValueError:
        run = None
    if run is not None:
        return run
    research = (
        Research.objects.filter(architect=architect, status="done", progress__thread=value)
        .order_by("-created_at")
        .first()
    )
    if research is not None:  # the research's own conversation
        return research.run
    for run in (
        Run.objects.asked()
        .filter(architect=architect, verb="recall", thread=value)
        .order_by("-created_at")
    ):
        earlier, research = _conclusion(run)
        if earlier is not None or research is not None:
            return run
    return None


def thread_named(value: str, architect: Architect) -> str | None:
    """The model conversation a denial names, when it names one of this architect's threads:
    the words go into that conversation."""
    value = value.strip()
    return value if Thread.objects.filter(pk=value, architect=architect).exists() else None


def _research_basis(research: Research | None) -> list[dict[str, Any]]:
    if research is None:
        return []
    return [
        {"note": n.get("note"), "text": n.get("text", ""), "source": "notes", "id": n.get("id")}
        for n in (research.answer.get("data") or {}).get("notes", [])
    ]


def denied_notes(architect: Architect, question: str) -> set[str]:
    """The notes a denied conclusion to this question rested on: research must not draw the
    same conclusion from them again."""
    out: set[str] = set()
    for summary in Summary.objects.filter(architect=architect, claim="denied"):
        if language.same_question(summary.question, question):
            out |= {str(b["note"]) for b in summary.basis if b.get("note")}
    return out
