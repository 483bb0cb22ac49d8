"""Filling the vectors and the graph — by code, never by the agent (passport §19).

Every remember sends its note to the vectors, and the things the note names (from the model's
phrase parse, or the offline NER) to the graph, linked to the note. The structured writes the
tools recorded for the run become graph relations: architect → friends → Дима; Юля → role →
product manager. Everything goes through the outbox and is delivered at once when it can be.
"""

from __future__ import annotations

from typing import Any

from memory import ner
from memory.errors import MemoryServiceError
from memory.models import Note, OutboxItem, Run, ToolCall
from memory.shape import selectors
from memory.shape import tools as shape_tools
from memory.stores import outbox
from memory.stores.graph import Chunk, Entity, Relation
from memory.stores.vectors import VectorItem

ARCHITECT = "архитектор"


def note_entities(note: Note) -> dict[str, Any]:
    """The note's named things: the model's parse when there was one, the offline NER otherwise."""
    if note.entities:
        return note.entities
    found = ner.entities(note.text)
    note.entities = {
        "entities": [{"name": n.name, "type": n.type} for n in found],
        "relations": [],
        "by": "ner",
    }
    note.save(update_fields=["entities"])
    return note.entities


def note_to_stores(*, note: Note, run: Run | None) -> list[OutboxItem]:
    architect = note.architect
    items = [
        outbox.vectors_add(
            architect=architect,
            kind="notes",
            items=[
                VectorItem(
                    id=str(note.pk),
                    text=note.text,
                    payload={
                        "note": str(note.pk),
                        "created_at": note.created_at.isoformat(),
                        "scope": note.scope,
                    },
                )
            ],
            run=run,
        )
    ]
    named = note_entities(note)
    chunk = Chunk(id=f"note-{note.pk}", content=note.text)
    entities = [
        Entity(
            name=e["name"],
            type=e.get("type", "thing"),
            description=f"«{note.text[:300]}»",
            source=chunk.id,
        )
        for e in named.get("entities", [])
    ]
    relations = [
        Relation(
            source=r["source"],
            target=r["target"],
            description=r["relation"],
            keywords=r["relation"],
            chunk=chunk.id,
        )
        for r in named.get("relations", [])
    ]
    if entities or relations:
        items.append(
            outbox.graph_insert(
                architect=architect, chunks=[chunk], entities=entities, relations=relations, run=run
            )
        )
    return items


def _row_value(run: Run, table: str, row: int) -> str | None:
    entry = shape_tools.table_entry(run.architect, table)
    rows = selectors.table_rows(run.architect, entry, only=[row])
    return rows[0]["value"] if rows else None


def writes_to_graph(*, run: Run, phrase: str) -> OutboxItem | None:
    """The structured writes of a run, as relations in the graph."""
    chunk = Chunk(id=f"run-{run.pk}", content=phrase)
    entities: dict[str, Entity] = {}
    relations: list[Relation] = []

    def link(source: str, target: str, label: str) -> None:
        for name in (source, target):
            entities.setdefault(
                name, Entity(name=name, description=f"«{phrase[:300]}»", source=chunk.id)
            )
        relations.append(
            Relation(
                source=source,
                target=target,
                description=f"{label}: {target}",
                keywords=label,
                chunk=chunk.id,
            )
        )

    for call in ToolCall.objects.filter(run=run, error="", tool__in=shape_tools.WRITERS):
        args = call.arguments
        if call.tool == "promote_to_list":
            for item in args.get("items", []):
                link(ARCHITECT, item["value"], args["kind"])
                for label, value in (item.get("fields") or {}).items():
                    link(item["value"], value, label)
        elif args.get("table") and args.get("row") is not None:
            owner = _row_value(run, args["table"], args["row"])
            if owner:
                link(owner, str(args["value"]), args["kind"])
        else:
            link(ARCHITECT, str(args["value"]), args["kind"])
    if not relations:
        return None
    return outbox.graph_insert(
        architect=run.architect,
        chunks=[chunk],
        entities=list(entities.values()),
        relations=relations,
        run=run,
    )


def deliver(items: list[OutboxItem]) -> dict[str, dict[str, Any]]:
    """Try each item now; report per store whether it is written or queued (and why)."""
    if not items:
        return {}
    try:
        result = outbox.drain(ids=[i.pk for i in items], force=True)
    except MemoryServiceError as error:
        if not error.retryable:
            raise
        result = outbox.Drained(
            queued=[i.pk for i in items], errors={i.pk: error.message for i in items}
        )
    report: dict[str, dict[str, Any]] = {}
    for item in items:
        entry = report.setdefault(item.store, {"status": "written", "items": 0})
        entry["items"] += 1
        if item.pk not in result.delivered:
            entry["status"] = "queued"
            if item.pk in result.errors:
                entry["note"] = result.errors[item.pk]
    if result.queued:
        outbox.schedule_replay(delay=2.0)
    return report
