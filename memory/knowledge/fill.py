"""Filling the vectors and the graph — by code, never by the agent (PASSPORT.md §13).

Every remember sends its note to the vectors, and the things the note names (from the model's
phrase parse, or the offline NER) to the graph, linked to the note. The structured writes the
tools recorded for the run become graph relations: architect → friends → Дима; Юля → role →
product manager. Everything goes through the outbox and is delivered at once when it can be.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from memory import ner
from memory import scope as scopes
from memory.errors import MemoryServiceError
from memory.knowledge import supersede
from memory.knowledge.notes import in_context
from memory.models import Note, OutboxItem, Run, ToolCall
from memory.shape import selectors
from memory.shape import tools as shape_tools
from memory.stores import outbox
from memory.stores.graph import Chunk, Entity, Relation
from memory.stores.graph_types import note_chunk_id
from memory.stores.vectors import VectorItem, vectors

ARCHITECT = "архитектор"


def named_by_ner(text: str) -> dict[str, Any]:
    """The offline NER's named things in a text, in the shape the note keeps them."""
    found = ner.entities(text)
    return {
        "entities": [{"name": n.name, "type": n.type} for n in found],
        "relations": [],
        "by": "ner",
    }


def note_entities(note: Note) -> dict[str, Any]:
    """The note's named things: the model's parse when there was one, the offline NER otherwise."""
    if note.entities:
        return note.entities
    note.entities = named_by_ner(note.text)
    note.save(update_fields=["entities"])
    return note.entities


def note_to_stores(*, note: Note, run: Run | None, graph: bool = True) -> list[OutboxItem]:
    """The note's outbox rows: its vector and its vector in context always; its graph insert
    when ``graph`` (its things are known: the caller computed them before the transaction)."""
    payload = {
        "note": str(note.pk),
        "created_at": note.created_at.isoformat(),
        "scope": note.scope,
        "places": scopes.places(note.scope),
    }
    items = [
        outbox.vectors_add(
            architect=note.architect,
            kind=kind,
            items=[VectorItem(id=str(note.pk), text=text, payload=payload)],
            run=run,
        )
        for kind, text in (("notes", note.text), ("context", in_context(note)))
    ]
    if supersede.announces_change(note.text):
        # Once its vectors are in, a note that says something changed looks for what it replaces.
        items.append(
            outbox.enqueue(
                architect=note.architect,
                store="notes",
                op="supersede",
                payload={"note": str(note.pk)},
                run=run,
            )
        )
    if graph:
        items += note_graph(note=note, run=run)
    return items


def note_supersession(item: OutboxItem) -> None:
    """Deliver a note's supersession by meaning (``supersede.by_meaning``): its nearest earlier
    notes, note to note, from the vectors."""
    note = Note.objects.filter(pk=item.payload["note"]).first()
    if note is None:  # gone since (an architect deleted): nothing to replace
        return
    hits = vectors().search(
        kind="notes",
        architect_id=note.architect_id,
        query=note.text,
        limit=supersede.MEANING_NEAREST + 1,
        scope=note.scope,
        passage=True,
    )
    supersede.by_meaning(note, [(h.payload.get("note", h.id), h.score) for h in hits])


outbox.HANDLERS[("notes", "supersede")] = note_supersession


def note_graph(*, note: Note, run: Run | None) -> list[OutboxItem]:
    """The things the note names, linked to it, as one graph insert (none when it names none)."""
    parts = _graph_parts(note)
    if parts is None:
        return []
    return [outbox.graph_insert(architect=note.architect, run=run, **parts)]


def note_graph_parts(note_id: str) -> dict[str, Any] | None:
    """The graph insert of a note, computed at delivery (capture first: the NER runs behind the
    answer). None when the note names nothing or is gone."""
    note = Note.objects.filter(pk=note_id).first()
    return _graph_parts(note) if note is not None else None


outbox.GRAPH_PARTS["note"] = lambda payload: note_graph_parts(payload["note"])


def entities_of(named: dict[str, Any], chunk: Chunk) -> list[Entity]:
    """The things the NER named in a chunk's text, as graph entities sourced to the chunk. An
    entity is described by its name alone: the graph embeds an entity by its name and
    description, and a name is embedded once for every mention (the embedder keeps recent
    vectors), where the words around each mention cost an embedding each. The words stay in
    the chunk, which the entity points to."""
    return [
        Entity(name=e["name"], type=e.get("type", "thing"), source=chunk.id)
        for e in named.get("entities", [])
    ]


def _graph_parts(note: Note) -> dict[str, Any] | None:
    named = note_entities(note)
    chunk = Chunk(id=note_chunk_id(note.pk), content=note.text)
    entities = entities_of(named, chunk)
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
    if not (entities or relations):
        return None
    return {"chunks": [chunk], "entities": entities, "relations": relations}


def complete_orphan(run: Run) -> int:
    """A remember whose process died after the note committed: give its notes the graph
    insert the model step would have queued (from the NER). Returns the items queued."""
    queued = 0
    if OutboxItem.objects.filter(run=run, store="graph").exists():
        return 0
    for note in Note.objects.filter(run=run):
        queued += len(note_graph(note=note, run=run))
    return queued


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
            # Described by its name, as every entity (``entities_of``): the phrase is the chunk.
            entities.setdefault(name, Entity(name=name, source=chunk.id))
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
            subject = _row_value(run, args["table"], args["row"])
            if subject:
                link(subject, str(args["value"]), args["kind"])
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


def deliver(items: list[OutboxItem], *, now: bool = False) -> dict[str, dict[str, Any]]:
    """Try each item now; report per store whether it is ``written``, ``queued`` (the store may
    answer later: it is replayed) or ``failed`` (put aside as dead, with the reason).

    Never raises: the note is already committed, so no failure here may become an error answer.
    Capture first (``STORES_FILL=behind``, the default): nothing is tried here — every item is
    ``queued`` and handed to the worker at once, which delivers them in batches. ``now`` tries
    them here whatever the setting (the relearning cycle's ``sync`` mode promises as much)."""
    if not items:
        return {}
    if settings.STORES_FILL == "behind" and not now:
        report: dict[str, dict[str, Any]] = {}
        for item in items:
            entry = report.setdefault(item.store, {"status": "queued", "items": 0})
            entry["items"] += 1
        outbox.hand_over(delay=0.0)
        return report
    try:
        result = outbox.drain(ids=[i.pk for i in items], force=True)
    except Exception as error:  # the stores' holder unreachable, the database busy: all stay queued
        reason = error.message if isinstance(error, MemoryServiceError) else repr(error)
        result = outbox.Drained(queued=[i.pk for i in items], errors={i.pk: reason for i in items})
    report: dict[str, dict[str, Any]] = {}
    rank = {"written": 0, "queued": 1, "failed": 2}
    for item in items:
        entry = report.setdefault(item.store, {"status": "written", "items": 0})
        entry["items"] += 1
        status = (
            "written"
            if item.pk in result.delivered
            else "failed"
            if item.pk in result.dead
            else "queued"
        )
        if rank[status] > rank[entry["status"]]:
            entry["status"] = status
        if status != "written" and item.pk in result.errors:
            entry["note"] = result.errors[item.pk]
    if result.queued or len(result.delivered) + len(result.dead) < len(items):
        outbox.hand_over(delay=2.0)
    return report


def failed(stores: list[str], reason: str) -> dict[str, dict[str, Any]]:
    """The stores' part of an answer when their writing broke before delivery was tried."""
    return {store: {"status": "failed", "items": 0, "note": reason} for store in stores}
