"""``previous_results``: what the caller already has (PASSPORT.md §16). Each string names an
earlier recall's run of the same architect, or an item an answer returned ("notes:<id>", a note's
id, "summaries:<id>", "objects:<id>"). What was returned is not returned again; the levels that
already failed for the same question in a named run are skipped; a research job a named run
started for the same question is the one level 5 reports, not a new one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from memory import language
from memory.i18n import Text
from memory.models import Architect, Note, Research, Run

_USED = Text(
    ru="не возвращаю снова: {items}; пропущены уровни, что уже не нашли ответа на этот вопрос: "
    "{levels}",
    en="not returned again: {items}; skipped the levels that already found no answer to this "
    "question: {levels}",
)
_RESEARCH = Text(ru="исследование прогона {run}", en="the research of run {run}")
_UNKNOWN = Text(
    ru="не названо ничего из памяти: {values}", en="these name nothing in the memory: {values}"
)
_ALREADY = Text(ru="уже не нашёл ответа в прогоне {run}", en="already found no answer in run {run}")


@dataclass
class Previous:
    items: set[str] = field(default_factory=set)  # note ids and "kind:id"s
    skipped: dict[int, str] = field(default_factory=dict)  # level → the run that failed it
    research: Research | None = None
    unknown: list[str] = field(default_factory=list)

    def excludes(self, item: dict[str, Any] | str) -> bool:
        if isinstance(item, str):
            return item in self.items
        keys = {str(item.get("note") or ""), str(item.get("id") or "")}
        return bool(keys & self.items)

    def skip_reason(self, level: int, lang: str) -> str | None:
        run = self.skipped.get(level)
        return _ALREADY(lang, run=run) if run else None

    def note(self, lang: str) -> str:
        levels = ", ".join(str(n) for n in sorted(self.skipped)) or "—"
        items = str(len(self.items))
        parts = [_USED(lang, items=items, levels=levels)]
        if self.research is not None:
            parts.append(_RESEARCH(lang, run=self.research.pk))
        if self.unknown:
            parts.append(_UNKNOWN(lang, values=", ".join(self.unknown)))
        return "; ".join(parts)


def _uuid(text: str) -> str | None:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


def read(values: list[str], *, architect: Architect, question: str) -> Previous:
    out = Previous()
    for raw in values:
        value = raw.strip()
        kind, _, rest = value.partition(":")
        named = _uuid(rest) if rest else _uuid(value)
        if named is None:
            out.unknown.append(raw)
            continue
        if rest:  # "notes:<id>", "summaries:<id>", …
            out.items |= {value, f"{kind}:{named}"} | ({named} if kind == "notes" else set())
            continue
        run = Run.objects.asked().filter(architect=architect, pk=named, verb="recall").first()
        if run is None:
            if Note.objects.filter(architect=architect, pk=named).exists():
                out.items |= {named, f"notes:{named}"}
            else:
                out.unknown.append(raw)
            continue
        out.items |= set(run.returned or [])
        if not language.same_question(run.text, question):
            continue
        # Its research, whatever its state, is the one level 5 reports: never a second job.
        out.research = Research.objects.filter(pk=run.pk).first() or out.research
        by_level: dict[int, set[str]] = {}
        for entry in run.report or []:
            by_level.setdefault(int(entry.get("level", 0)), set()).add(entry.get("status", ""))
        for level, statuses in by_level.items():
            if level < 5 and statuses and statuses <= {"empty", "failed"}:
                out.skipped.setdefault(level, str(run.pk))
    return out
