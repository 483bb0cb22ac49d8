"""Level 1's one look at its indexes: a single SQL statement per search (PASSPORT.md §18).

Before level 1 knows what answers, it needs: the architect's index statistics (BM25's N and mean
length, kept on the architect's row by the note's transaction), each asked term's document
frequency, the notes ranked by BM25 over their own and their neighbours' terms (the idf computed
inside the statement from those frequencies), the asked terms each ranked note holds itself or
only through its neighbours (coverage, matched, near), the catalog of the grown shape, and the
stored values, objects and summaries holding an asked term. All of it comes back from one round
trip: one ``WITH … UNION ALL`` whose rows are (kind, JSON), so the same statement serves SQLite
and PostgreSQL and only the JSON constructor's name differs. What is read after it depends on
what matched: the rows of a table that answers, an object's or a summary's card.

The ranking is BM25 with the context counted at ``NOTES_CONTEXT_WEIGHT``
(``memory.knowledge.notes`` keeps the postings); ``tests/levels/test_fulltext.py`` holds both
engines to the bench's plain-Python BM25.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import DateTimeField, Model, UUIDField

from memory import relevance
from memory import scope as scopes
from memory.models import (
    Architect,
    MemoryObject,
    Note,
    NoteKeyword,
    ObjectKeyword,
    ShapeEntry,
    Summary,
    SummaryKeyword,
    ValueKeyword,
)
from memory.relevance import TermWeights
from memory.shape.selectors import ValueHit

# The columns each kind of row carries (the models' own attribute names).
NOTE_FIELDS = (
    "id", "architect_id", "text", "scope", "sender", "created_at", "talk", "position",
    "superseded_by_id", "run_id", "length", "near_length",
)  # fmt: skip
ENTRY_FIELDS = (
    "id", "architect_id", "kind", "table", "name", "labels", "key", "lemmas", "scheme",
    "promoted_to_id", "created_at",
)  # fmt: skip


@dataclass
class NoteHit:
    note: Note
    score: float
    coverage: float  # the rarity-weighted share of the question the note holds itself
    matched: list[str] = field(default_factory=list)  # question terms in the note itself
    near: list[str] = field(default_factory=list)  # question terms only in its neighbours


@dataclass
class Look:
    weights: TermWeights
    notes: list[NoteHit] = field(default_factory=list)  # BM25 order, best first
    catalog: list[ShapeEntry] = field(default_factory=list)  # by kind, table, name
    values: list[ValueHit] = field(default_factory=list)
    objects: dict[Any, set[str]] = field(default_factory=dict)  # object id: asked lemmas held
    summaries: dict[Any, set[str]] = field(default_factory=dict)  # summary id: lemmas held


def _json(pairs: Sequence[tuple[str, str]]) -> str:
    """A JSON object of SQL expressions, as this engine builds one; JSON columns stay JSON."""
    build = "json_build_object" if connection.vendor == "postgresql" else "json_object"
    arguments = ", ".join(f"'{key}', {value}" for key, value in pairs)
    return f"CAST({build}({arguments}) AS TEXT)"


def _pairs(source: str) -> str:
    """The JSON array of ``[k.lemma, k.own]`` over ``source`` (a correlated FROM … WHERE …)."""
    if connection.vendor == "postgresql":
        return f"(SELECT COALESCE(json_agg(json_build_array(k.lemma, k.own)), '[]'::json) {source})"
    return f"json((SELECT json_group_array(json_array(k.lemma, k.own)) {source}))"


def _columns(model: type[Model], names: Sequence[str], alias: str) -> list[tuple[str, str]]:
    sqlite = connection.vendor == "sqlite"
    out = []
    for name in names:
        column = f"{alias}.{connection.ops.quote_name(model._meta.get_field(name).column)}"
        if sqlite and model._meta.get_field(name).get_internal_type() == "JSONField":
            column = f"json({column})"  # stored as text: embed it as JSON, not as a string
        out.append((name, column))
    return out


def _moment(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite keeps UTC bare


@functools.cache
def _readers(model: type[Model], names: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Each read field's attribute name and how its JSON value becomes Python, in the order
    ``from_db`` takes them (the model's own)."""
    out = []
    for model_field in model._meta.concrete_fields:
        if model_field.attname not in names:
            continue
        target = getattr(model_field, "target_field", model_field)  # a key: its target's type
        if isinstance(model_field, DateTimeField):
            out.append((model_field.attname, _moment))
        elif isinstance(target, UUIDField):
            out.append((model_field.attname, uuid.UUID))
        else:
            out.append((model_field.attname, None))  # JSON already gave the Python value
    return out


def _instance(model: type[Model], names: tuple[str, ...], row: dict[str, Any]) -> Any:
    """A model instance from a row's JSON; the fields not read stay deferred."""
    readers = _readers(model, names)
    values = []
    for name, convert in readers:
        value = row.get(name)
        values.append(convert(value) if convert is not None and value is not None else value)
    return model.from_db(connection.alias, [name for name, _ in readers], values)


def _scope_where(asked: Sequence[dict[str, Any]]) -> tuple[str, list[Any]]:
    """The request's scope as this store's SQL: a note unbound on a dimension the question
    names may fit (unknown, not excluded); one bound there must share a place key, or its days
    must meet the asked days. Coarse by design — ``memory.scope.fits`` has the last word."""
    sql, params = "", []
    wanted = scopes.asked_places(asked)
    if wanted:
        sql += " AND (n.places = ''" + " OR n.places LIKE %s" * len(wanted) + ")"
        params += [f"%|{place}|%" for place in wanted]
    days = scopes.span(asked)
    if days:
        sql += " AND (n.scope_start IS NULL OR (n.scope_start <= %s AND n.scope_end >= %s))"
        params += [days[1], days[0]]
    return sql, params


def look(
    *,
    architect: Architect,
    terms: Sequence[str],
    limit: int = 30,
    scope: Sequence[dict[str, Any]] = (),
    shape: bool = True,
) -> Look:
    """Everything level 1 reads from its indexes for ``terms``, in one statement. ``shape``:
    also the catalog, the stored values, the objects and the summaries (level 1 wants them;
    a tool looking for notes does not)."""
    sql, params = statement(architect, terms, limit=limit, scope=scope, shape=shape)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = [(kind, json.loads(payload)) for kind, payload in cursor.fetchall()]
    return _read(rows, list(dict.fromkeys(terms)))


def statement(
    architect: Architect,
    terms: Sequence[str],
    *,
    limit: int,
    scope: Sequence[dict[str, Any]],
    shape: bool,
) -> tuple[str, list[Any]]:
    """``look``'s SQL and parameters (``bench/level1.py`` times it bare)."""
    asked = list(dict.fromkeys(terms))
    table = {m: m._meta.db_table for m in (Architect, Note, NoteKeyword)}
    k1, b = settings.NOTES_BM25_K1, settings.NOTES_BM25_B
    w = settings.NOTES_CONTEXT_WEIGHT
    params: list[Any] = []
    parts: list[str] = []

    ctes = [
        f"a AS (SELECT notes_count, notes_length, notes_near_length FROM {table[Architect]}"
        " WHERE id = %s)"
    ]
    params.append(architect.pk)
    parts.append(
        "SELECT 'a', "
        + _json(
            [
                ("notes", "a.notes_count"),
                ("length", "a.notes_length"),
                ("near", "a.notes_near_length"),
            ]
        )
        + " FROM a"
    )
    if asked:
        values = ", ".join(["(%s)"] * len(asked))
        ctes.insert(0, f"q(lemma) AS (VALUES {values})")
        params[:0] = asked
        ctes.append(
            "d AS (SELECT q.lemma, (SELECT COUNT(*) FROM "
            f"{table[NoteKeyword]} k WHERE k.architect_id = %s AND k.lemma = q.lemma"
            " AND k.own > 0) AS df FROM q)"
        )
        params.append(architect.pk)
        ctes.append(
            # Once per term, not once per posting.
            f"i AS MATERIALIZED (SELECT d.lemma, {relevance.IDF_SQL} AS idf,"
            f" {relevance.AVERAGE_SQL} AS average FROM d CROSS JOIN a)"
        )
        params += [w, w]
        where, where_params = _scope_where(scope)
        # The postings carry their note's lengths: the notes table is read only to narrow to
        # the asked scope, and for the few notes at the top to break a tie by the newer.
        notes = f"JOIN {table[Note]} n ON n.id = k.note_id" if where else ""
        real = relevance.REAL
        ctes.append(
            # Terms first, then their postings (SQLite takes CROSS JOIN's order as given).
            f"""s AS MATERIALIZED (
            SELECT k.note_id,
                   SUM(i.idf * (k.own + {real} * k.near) * {real}
                       / ((k.own + {real} * k.near)
                          + {real} * (1 - {real} + {real} * (k.length + {real} * k.near_length)
                                      / i.average)))
                       AS score
            FROM i
            CROSS JOIN {table[NoteKeyword]} k
            {notes}
            WHERE k.lemma = i.lemma AND k.architect_id = %s{where}
            GROUP BY k.note_id)"""
        )
        params += [w, k1 + 1, w, k1, b, b, w, architect.pk, *where_params]
        ctes.append(
            # Every note scoring at least the limit-th best: the ties there go to the newer. The
            # date is read by key for those few (a join lets PostgreSQL scan every note).
            f"""r AS MATERIALIZED (
            SELECT s.note_id, s.score,
                   (SELECT n.created_at FROM {table[Note]} n WHERE n.id = s.note_id) AS created
            FROM s
            WHERE s.score >= COALESCE(
                (SELECT score FROM s ORDER BY score DESC LIMIT 1 OFFSET %s), s.score)
            ORDER BY s.score DESC, created DESC
            LIMIT %s)"""
        )
        params += [max(limit - 1, 0), limit]
        parts.append("SELECT 'd', " + _json([("lemma", "d.lemma"), ("df", "d.df")]) + " FROM d")
        # Each ranked note read by its key (a join lets PostgreSQL scan the notes when they are
        # few), with its postings of the asked terms: own > 0 where it says the term itself,
        # 0 where only its neighbours say it.
        held = (
            f"FROM {table[NoteKeyword]} k WHERE k.note_id = n.id"
            " AND k.lemma IN (SELECT lemma FROM q)"
        )
        note = _json(
            [*_columns(Note, NOTE_FIELDS, "n"), ("score", "r.score"), ("held", _pairs(held))]
        )
        parts.append(
            f"SELECT 'n', (SELECT {note} FROM {table[Note]} n WHERE n.id = r.note_id) FROM r"
        )
    if shape:
        parts.append(
            "SELECT 'c', "
            + _json(_columns(ShapeEntry, ENTRY_FIELDS, "e"))
            + f" FROM {ShapeEntry._meta.db_table} e WHERE e.architect_id = %s"
        )
        params.append(architect.pk)
        if asked:
            for kind, model, owner in (
                ("v", ValueKeyword, "entry_id"),
                ("o", ObjectKeyword, "object_id"),
                ("s", SummaryKeyword, "summary_id"),
            ):
                columns = [("owner", f"x.{owner}"), ("lemma", "x.lemma")]
                if kind == "v":
                    columns.append(("row", "x.row"))
                parts.append(
                    f"SELECT '{kind}', "
                    + _json(columns)
                    + f" FROM {model._meta.db_table} x WHERE x.architect_id = %s"
                    " AND x.lemma IN (SELECT lemma FROM q)"
                )
                params.append(architect.pk)
    return "WITH " + ",\n".join(ctes) + "\n" + "\nUNION ALL ".join(parts), params


def _read(rows: list[tuple[str, dict[str, Any]]], asked: list[str]) -> Look:
    stats = next((r for kind, r in rows if kind == "a"), None)
    if stats is None:
        raise Architect.DoesNotExist("the architect has gone")
    weights = TermWeights(
        notes=stats["notes"],
        average_length=relevance.average_length(stats["notes"], stats["length"], stats["near"]),
        df={r["lemma"]: r["df"] for kind, r in rows if kind == "d"},
    )
    found = Look(weights=weights)
    ranked: list[tuple[Note, float, set[str], set[str]]] = []
    by_pk: dict[Any, ShapeEntry] = {}
    values: dict[tuple[Any, int], ValueHit] = {}
    for kind, r in rows:
        if kind == "n":
            note = _instance(Note, NOTE_FIELDS, r)
            own = {lemma for lemma, n in r["held"] if n > 0}
            near = {lemma for lemma, n in r["held"] if n == 0}
            ranked.append((note, float(r["score"]), own, near))
        elif kind == "c":
            entry = _instance(ShapeEntry, ENTRY_FIELDS, r)
            by_pk[entry.pk] = entry
        elif kind == "o":
            found.objects.setdefault(MemoryObject._meta.pk.to_python(r["owner"]), set()).add(
                r["lemma"]
            )
        elif kind == "s":
            found.summaries.setdefault(Summary._meta.pk.to_python(r["owner"]), set()).add(
                r["lemma"]
            )
    for kind, r in rows:
        if kind == "v" and r["owner"] in by_pk:
            hit = values.setdefault(
                (r["owner"], r["row"]), ValueHit(by_pk[r["owner"]], r["row"], set())
            )
            hit.lemmas.add(r["lemma"])
    for entry in by_pk.values():
        if entry.promoted_to_id is not None and entry.promoted_to_id in by_pk:
            entry.promoted_to = by_pk[entry.promoted_to_id]  # no query when it is read
    found.catalog = sorted(by_pk.values(), key=lambda e: (e.kind, e.table, e.name))
    found.values = list(values.values())
    # Best first, the newer first on a tie (the statement's own order, lost by the union).
    ranked.sort(key=lambda hit: (-hit[1], -hit[0].created_at.timestamp()))
    for note, score, own, near in ranked:
        found.notes.append(
            NoteHit(
                note=note,
                score=score,
                coverage=weights.coverage(asked, own),
                matched=[t for t in asked if t in own],
                near=[t for t in asked if t in near and t not in own],
            )
        )
    return found


def notes_search(
    *,
    architect: Architect,
    terms: Sequence[str],
    limit: int = 30,
    scope: Sequence[dict[str, Any]] = (),
) -> list[NoteHit]:
    """Notes ranked by BM25 over their own and (weighted lower) their neighbours' terms,
    best first, newer first on a tie; only notes that may hold where and when asked."""
    if not terms:
        return []
    return look(architect=architect, terms=terms, limit=limit, scope=scope, shape=False).notes
