"""Current value and history: a newer note about the same thing supersedes the older.

With a model the remember turn decides through the table tools. Without one this code rule on
the notes' own terms does it: an earlier note of the same architect, bound to the same scope,
is superseded by the new one when they share at least ``MIN_SHARED`` terms (the subject and the
attribute: «любимый цвет») and differ in a small value part on both sides (at most
``MAX_OLD_VALUE`` terms only in the old note, at most ``MAX_NEW_VALUE`` only in the new one, not
counting change markers like «теперь» or "now"), and the shared part outweighs the differing
one. Nothing is deleted: the older note keeps its text and gets ``superseded_by``.

Its limits (PASSPORT.md «Поиск»): it sees words, not meaning — a rephrased update with few shared
terms («Переехали: новый адрес — …» after «Живу на Пушкина, 10») is missed, and two statements
about two things that differ in one word («встреча по проекту 3» / «по проекту 4») are taken as
one thing updated. The older one then shows as history beside the newer, never disappears.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Count
from django.utils import timezone

from memory import language, ner, relevance
from memory.models import Note, NoteKeyword

MIN_SHARED = 2
MAX_OLD_VALUE = 2
MAX_NEW_VALUE = 3
SEARCHED = 20
RARITY_CAP = 200  # postings counted per term to find the rarest
SUPPORT = 3  # of the rarest terms a candidate must hold (at most all it must share)
CHUNK = 500  # candidates counted per statement (SQLite binds at most 32,766 values)
# Words that announce a change rather than carry the value (one list, in memory.relevance).
MARKERS = relevance.CURRENT


def _same_scope(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> bool:
    def key(scope: Sequence[dict[str, Any]]) -> list[str]:
        return sorted(repr(sorted(r.items())) for r in scope)

    return key(a) == key(b)


def replaces(old: set[str], new: set[str]) -> bool:
    """Does a statement with terms ``new`` update the value of one with terms ``old``?"""
    shared = old & new
    old_value = old - new
    new_value = new - old - MARKERS
    return (
        len(shared) >= MIN_SHARED
        and 1 <= len(old_value) <= MAX_OLD_VALUE
        and 1 <= len(new_value) <= MAX_NEW_VALUE
        and len(shared) >= len(old_value) + len(new_value) - 1
    )


def must_share(new: set[str]) -> int:
    """The fewest terms an older note must share with ``new`` for ``replaces`` to hold: at
    least ``MIN_SHARED``, and all but ``MAX_NEW_VALUE`` of the new terms that are not change
    markers (the rest would be a new value too big to be one)."""
    return max(MIN_SHARED, len(new - MARKERS) - MAX_NEW_VALUE)


def sizes(new: set[str]) -> tuple[int, int]:
    """How many terms an older note ``replaces`` could accept may hold: it shares at least
    ``must_share`` and at most all of ``new`` but the one new value term, and keeps one to
    ``MAX_OLD_VALUE`` of its own."""
    return must_share(new) + 1, len(new) - 1 + MAX_OLD_VALUE


def _rarest(architect_id: Any, terms: set[str], low: int, high: int) -> list[str]:
    """``terms``, the rarest first among the notes of ``low`` to ``high`` terms, by their own
    postings counted up to ``RARITY_CAP`` in one statement (past the cap a term is common, and
    which common term comes first does not matter)."""
    table = NoteKeyword._meta.db_table
    arm = (
        f"SELECT %s, COUNT(*) FROM (SELECT 1 FROM {table} WHERE architect_id = %s"
        " AND lemma = %s AND own > 0 AND terms BETWEEN %s AND %s LIMIT %s) AS x{}"
    )
    ordered = sorted(terms)
    sql = " UNION ALL ".join(arm.format(i) for i in range(len(ordered)))
    params: list[Any] = []
    for term in ordered:
        params += [term, architect_id, term, low, high, RARITY_CAP]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        counts = dict(cursor.fetchall())
    return sorted(ordered, key=lambda term: counts.get(term, 0))


def supersede(note: Note, terms: Sequence[str]) -> list[Note]:
    """Mark the earlier notes ``note`` replaces (call inside the note's transaction)."""
    own = set(terms)
    if len(own) < MIN_SHARED:
        return []
    least = must_share(own)
    low, high = sizes(own)
    # A note sharing ``least`` of the n terms holds at least ``m`` of any n - least + m of them,
    # and holds ``low`` to ``high`` terms itself. So the own postings of the rarest n - least + m
    # terms among notes of that size (one range of the ``note_keyword_sizes`` index each),
    # grouped by note and kept where ``m`` of them meet, name every candidate: one statement,
    # which returns a few notes where the union of the rarest terms (m = 1) returned thousands at
    # 100k notes. With m = least the list is every term and the count is already the shared one.
    support = min(least, SUPPORT)
    rarest = (
        sorted(own)
        if support == least
        else _rarest(note.architect_id, own, low, high)[: len(own) - least + support]
    )
    table = NoteKeyword._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT note_id, COUNT(*) FROM {table} WHERE architect_id = %s"
            f" AND lemma IN ({', '.join(['%s'] * len(rarest))}) AND own > 0"
            " AND terms BETWEEN %s AND %s GROUP BY note_id HAVING COUNT(*) >= %s",
            [note.architect_id, *rarest, low, high, support],
        )
        met = {Note._meta.pk.to_python(pk): n for pk, n in cursor.fetchall()}
    met.pop(note.pk, None)
    shared: dict[Any, int] = met if support == least else {}
    if support < least:
        # Each candidate's shared terms, by the (note, lemma) key. No join to the notes here:
        # with one, SQLite reads every current note first.
        listed = list(met)
        for first in range(0, len(listed), CHUNK):
            rows = (
                NoteKeyword.objects.filter(
                    note_id__in=listed[first : first + CHUNK], lemma__in=list(own), own__gt=0
                )
                .values("note_id")
                .annotate(shared=Count("pk"))
                .filter(shared__gte=least)
            )
            shared.update((r["note_id"], r["shared"]) for r in rows)
    # Current ones, by key alone: with ``superseded_by IS NULL`` in the statement SQLite walks
    # that index (every current note) once the key list passes a dozen; unordered, so no sort.
    current = (
        Note.objects.filter(pk__in=list(shared)).order_by().values_list("pk", "superseded_by_id")
    )
    ids = sorted((pk for pk, by in current if by is None), key=lambda pk: -shared[pk])[:SEARCHED]
    if not ids:
        return []
    terms_of: dict[Any, set[str]] = {}
    for note_id, lemma in NoteKeyword.objects.filter(note_id__in=ids, own__gt=0).values_list(
        "note_id", "lemma"
    ):
        terms_of.setdefault(note_id, set()).add(lemma)
    older = Note.objects.filter(pk__in=ids, created_at__lte=note.created_at).only(
        "pk", "scope", "created_at", "text"
    )
    same = [o for o in older if _same_scope(o.scope, note.scope) and replaces(terms_of[o.pk], own)]
    # Not another person's value: the speaker's own by someone named's ("my work mobile", then
    # "Lucy has a new mobile number"), mine by my wife's («мой любимый цвет», then «любимый
    # цвет жены»): the words alone match, the people do not (as in by_meaning).
    names_new = _names(note.text) if same else set()
    replaced = [o for o in same if not _other_people(o.text, _names(o.text), note.text, names_new)]
    if replaced:
        Note.objects.filter(pk__in=[o.pk for o in replaced]).update(
            superseded_by=note, superseded_at=timezone.now()
        )
    return replaced


def current(note: Note) -> Note:
    """The newest note in ``note``'s chain of replacements (itself when never replaced).

    One recursive query, however long the chain: a value told again and again (a status, a
    count) makes a chain as long as its tellings, and a walk of one query a link cost each recall
    that met its oldest note a query per telling. UNION (not UNION ALL) stops at a note met
    before, so a loop cannot make the query endless; a chain with no end (a loop) keeps the note.
    The note read is ``note``'s architect's: a replacement never crosses architects.
    """
    if note.superseded_by_id is None:
        return note
    table = connection.ops.quote_name(Note._meta.db_table)
    start = Note._meta.pk.get_db_prep_value(note.superseded_by_id, connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH RECURSIVE chain(id) AS (SELECT %s UNION "
            f"SELECT n.superseded_by_id FROM {table} n JOIN chain c ON n.id = c.id "
            f"WHERE n.superseded_by_id IS NOT NULL) "
            f"SELECT n.id FROM {table} n JOIN chain c ON n.id = c.id "
            f"WHERE n.superseded_by_id IS NULL",
            [start],
        )
        row = cursor.fetchone()
    if row is None:
        return note
    newest = Note.objects.filter(architect_id=note.architect_id, pk=Note._meta.pk.to_python(row[0]))
    return newest.first() or note


# --- a value changed in other words: by meaning, once the note's vectors are in ---------------

# Words that say a value changed: relevance.CURRENT («теперь», "now", "no longer") and the verbs
# of a change. A note without one of them never replaces another by meaning. «Больше» («больше
# не») is a cue as the word itself: its lemma «большой» is also «Большого театра».
CUE_WORDS = frozenset({"больше"})
CHANGE = (MARKERS - {language.lemma("больше")}) | frozenset(
    language.lemma(w) or w
    for w in (
        "сменить", "поменять", "вместо", "переехать", "перейти", "продать", "перенести",
        "заменить", "уйти", "закрыть", "сдвинуть", "перевести", "отменить", "бросить",
        "changed", "change", "moved", "move", "instead", "switched", "replaced", "sold", "left",
        "cancelled", "retired", "revised", "slipped", "quit", "поднять", "повысить",
        "снизить", "перестать", "raised", "increased", "reduced", "stopped", "given",
    )
)  # fmt: skip
# Words that carry no subject of their own for ``language.roots``: the change markers, and a
# value's slot and value words (a month, «адрес»: what changes, not what it belongs to).
IGNORED = relevance.FRAME | CHANGE | language.slots()
# The nearest earlier notes by meaning looked at, and the similarity (note to note, passages,
# multilingual-e5-small) from which one may be the same thing said before: on the bench sets'
# 36 values changed in other words the replaced note is one of the two nearest for 27; with the
# evidence scale below, floors of 0.80, 0.82 and 0.84 make the same replacements on both sets
# (a one-off probe, 2026-12-07: 31 of 50 right, 2 wrong); what the rule does on the sets,
# bench/retrieval.py prints (PASSPORT.md «Поиск»).
MEANING_NEAREST = 2
MEANING_MIN_SIMILARITY = 0.82


def announces_change(text: str) -> bool:
    """Does a note's wording say that something changed («теперь», "no longer», «переехали»,
    a value from a time on: «с марта», "from January")?
    Any reading of a word counts: «Перешли с ArchiCAD на Revit» reads «перешли» as «переслать»
    first, and «перейти» is the change."""
    return language.from_a_time(text) or any(
        word in CUE_WORDS or language.readings(word) & CHANGE for word in language.words(text)
    )


def by_meaning(note: Note, nearest: Sequence[tuple[Any, float]]) -> Note | None:
    """A value changed in other words (PASSPORT.md «Поиск»): ``note`` announces a change and
    replaces the one earlier current note of its scope, among its ``MEANING_NEAREST`` nearest
    by meaning (``nearest``: note ids with their similarity, best first) at
    ``MEANING_MIN_SIMILARITY`` or more, that the evidence names as the same thing, about the
    same people. Evidence, strongest first:
      4. a name both statements say that no other earlier note holds («Продал «Весту»…» after
         «Я езжу на «Ладе Весте»», "Cancelled the Pulse membership" after "the Pulse gym");
      3. another term no other earlier note holds (not a slot's name, not a number): the
         subject or the old value («Сменил терапевта» after «Мой терапевт — …»);
      2. a word root both hold that no other earlier note holds («Закрыл счёт в Сбере» after
         «…держу в Сбербанке»), and no value of a kind the other lacks (a phone is not an
         alarm code);
      1. a value of the same kind (a phone, an address, an amount, a date), for the nearest
         note, with a word root in common («Kirkstall»), or an address.
    The strongest candidate wins when it is the only one that strong: two candidates with equal
    evidence (two dated events, two addresses) are a guess, and nothing is replaced. Nothing is
    deleted: the older note gets ``superseded_by``."""
    if Note.objects.filter(superseded_by=note).exists():
        return None  # the notes' own words named what it replaces: one change, one statement
    own = (
        set(NoteKeyword.objects.filter(note=note, own__gt=0).values_list("lemma", flat=True))
        - relevance.FRAME
        - CHANGE
    )
    close = [(pk, s) for pk, s in nearest if str(pk) != str(note.pk)][:MEANING_NEAREST]
    close = [(pk, s) for pk, s in close if s >= MEANING_MIN_SIMILARITY]
    if not own or not close:
        return None
    earlier = {
        str(o.pk): o
        for o in Note.objects.filter(
            architect_id=note.architect_id,
            pk__in=[pk for pk, _ in close],
            created_at__lt=note.created_at,
            superseded_by__isnull=True,
        )
    }
    kinds = language.values(note.text)
    names_new = _names(note.text)
    roots_new = language.roots(note.text, IGNORED)
    weighed: list[tuple[int, Note]] = []
    for rank, (pk, _) in enumerate(close):
        old = earlier.get(str(pk))
        if old is None or not _same_scope(old.scope, note.scope):
            continue
        names_old = _names(old.text)
        if _other_people(old.text, names_old, note.text, names_new):
            continue
        strength = _evidence(note, old, own, kinds, names_old, names_new, roots_new, rank == 0)
        weighed.append((strength, old))
    strongest = max((strength for strength, _ in weighed), default=0)
    chosen = [old for strength, old in weighed if strength == strongest]
    if strongest == 0 or len(chosen) != 1:
        return None
    _replace(chosen[0], note)
    return chosen[0]


def _evidence(
    note: Note,
    old: Note,
    own: set[str],
    kinds: set[str],
    names_old: set[str],
    names_new: set[str],
    roots_new: set[str],
    nearest: bool,
) -> int:
    """How strongly ``old`` is the thing ``note`` changes (``by_meaning``'s scale, 0 none)."""
    shared = own & set(
        NoteKeyword.objects.filter(note=old, own__gt=0).values_list("lemma", flat=True)
    )
    named = {
        term
        for term in shared - language.slots()
        if not term[:1].isdigit() and _earlier_holders(note, lemma=term) == 1
    }
    if named & names_old & names_new:
        return 4
    if named:
        return 3
    kinds_old = language.values(old.text)
    shared_roots = language.shared_roots(language.roots(old.text, IGNORED), roots_new)
    # At most the old note: its own lemma may not hold the stem («стричься», «стриг»).
    rooted = [
        root
        for root in shared_roots
        if not root[:1].isdigit() and _earlier_holders(note, lemma__contains=root) <= 1
    ]
    if rooted and not (
        (kinds ^ kinds_old) & {"phone"} or (kinds and kinds_old and not kinds & kinds_old)
    ):
        return 2
    same_kind = kinds & kinds_old
    # A value of the same kind is weak evidence (many things have a date or a price): only for
    # the nearest note, about the same kin, with a word root in common, and not two different
    # names' values («телефон брата Антона», «новый телефон Оксаны»). An address is the
    # exception to both: a move changes every word of it, the street's name included.
    address = same_kind == {"address"}
    if (
        same_kind
        and nearest
        and language.people(old.text) == language.people(note.text)
        and (
            address
            or (shared_roots and not (names_old and names_new and not names_old & names_new))
        )
    ):
        return 1
    return 0


def _earlier_holders(note: Note, **lemma: str) -> int:
    """How many notes of ``note``'s architect told before it hold a term (``lemma=`` one lemma,
    ``lemma__contains=`` a root) as their own."""
    return (
        NoteKeyword.objects.filter(
            architect_id=note.architect_id,
            own__gt=0,
            note__created_at__lt=note.created_at,
            **lemma,
        )
        .values("note_id")
        .distinct()
        .count()
    )


def _other_people(a: str, names_a: set[str], b: str, names_b: set[str]) -> bool:
    """Do two statements speak of different people: other kin and no name in common («мой
    любимый цвет» and «любимый цвет жены», "my dentist" and "the children's dentist"), or the
    speaker's own and someone named's (``_speaker_and_another``)?"""
    kin_a, kin_b = language.people(a), language.people(b)
    if kin_a and kin_b and not kin_a & kin_b:  # «жена Марина», «родители Марины»
        return True
    if kin_a != kin_b and not names_a & names_b:
        return True
    return _speaker_and_another(a, names_a, b, names_b)


def _speaker_and_another(a: str, names_a: set[str], b: str, names_b: set[str]) -> bool:
    """One statement is the speaker's own and names no one; the other names someone and is not
    in the first person: two different people's values."""
    mine_a, mine_b = language.first_person(a), language.first_person(b)
    return bool(
        (mine_a and not names_a and names_b and not mine_b)
        or (mine_b and not names_b and names_a and not mine_a)
    )


def _names(text: str) -> set[str]:
    """The lemmas of the names a statement says: the offline NER's things and the words written
    with a capital inside it (titles and initials of two letters or less left out, and value
    words: "May" in "on 12 May" is a date, as «мая» is, not a name)."""
    found = {t for e in ner.entities(text) for t in language.keywords(e.name)}
    slots = language.slots()
    return {
        t
        for t in found | language.names(text)
        if len(t) > 2 and not t[:1].isdigit() and t not in slots
    }


def _replace(old: Note, new: Note) -> None:
    Note.objects.filter(pk=old.pk, superseded_by__isnull=True).update(
        superseded_by=new, superseded_at=timezone.now()
    )


# --- the newest value first, for one question ------------------------------------------------

UPDATES_WINDOW = 5  # the first returned notes looked at
UPDATES_MAX_BEHIND = 0.05  # how far below the older note's relevance the newer one may stand


def newest_first(
    notes: Sequence[Note], relevance_of: Sequence[float], question: str
) -> tuple[list[int], dict[int, int]]:
    """A value changed in other words, for this question (PASSPORT.md «Поиск»): among the first
    ``UPDATES_WINDOW`` notes returned, a newer current note of the same scope that announces a
    change (``CHANGE``) and stands about as high for the question (``relevance_of``, within
    ``UPDATES_MAX_BEHIND``) answers the same question with a later value, so it goes right
    before the older one — unless the older note holds a name the question asks about that the
    newer one lacks (the same attribute of someone else: «новый телефон у сестры» is not the
    brother's), or the newer one holds no value of the kind the question asks for
    («Какой код домофона?» is not answered by «Перешёл в фитнес-клуб возле нового дома»).
    Returns the new order (indexes into ``notes``) and {older: newer} moved over.
    Nothing is written: the question decides, the notes stay as told."""
    order = list(range(len(notes)))
    updated: dict[int, int] = {}
    asked_names = language.names(question)
    terms = [set(language.keywords(n.text)) for n in notes]
    window = min(UPDATES_WINDOW, len(notes))
    for older in range(window):
        old = notes[older]
        candidates = [
            newer
            for newer in range(window)
            if newer != older
            and notes[newer].superseded_by_id is None
            and notes[newer].created_at > old.created_at
            and _same_scope(notes[newer].scope, old.scope)
            and announces_change(notes[newer].text)
            and relevance_of[newer] >= relevance_of[older] - UPDATES_MAX_BEHIND
            and not ((terms[older] - terms[newer]) & asked_names)
            and not language.unheld(question, [notes[newer].text])
        ]
        if candidates:
            updated[older] = max(candidates, key=lambda i: notes[i].created_at)
    for older, newer in sorted(updated.items(), key=lambda kv: order.index(kv[0])):
        if order.index(newer) > order.index(older):
            order.remove(newer)
            order.insert(order.index(older), newer)
    return order, updated
