"""A newer fact about the same thing is the current value; the older one is history, kept."""

from __future__ import annotations

import pytest

from memory.knowledge.supersede import announces_change, replaces
from memory.models import Note


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Мой любимый цвет синий.", "Теперь мой любимый цвет зелёный.", True),
        ("Код домофона 4512.", "Новый код домофона: 7788.", True),
        ("My dentist is Dr. Brown.", "My dentist is now Dr. Patel.", True),
        ("Мой любимый цвет синий.", "Дочь Вера учится играть на виолончели.", False),
        ("Мой любимый цвет синий.", "Мой любимый цвет синий, как море.", False),  # nothing replaced
        ("Брат Антон работает хирургом в больнице.", "Брат Антон любит рыбалку.", False),
    ],
)
def test_the_lemma_rule(old, new, expected):
    from memory import language

    assert replaces(set(language.terms(old)), set(language.terms(new))) is expected


@pytest.mark.django_db
def test_recall_answers_the_newest_as_current_and_names_the_older_as_history(bob_api):
    first = bob_api.remember("Мой любимый цвет синий.")
    second = bob_api.remember("Теперь мой любимый цвет зелёный.")
    assert "supersedes" not in first["stored"]
    assert second["stored"]["supersedes"] == [first["stored"]["note"]]
    old = Note.objects.get(text="Мой любимый цвет синий.")
    new = Note.objects.get(text="Теперь мой любимый цвет зелёный.")
    assert old.superseded_by_id == new.pk and new.superseded_by_id is None
    for depth in ("standard", "deep"):
        answer = bob_api.recall("Какой у меня любимый цвет?", depth=depth)
        assert answer["answer"]["found"] is True
        items = answer["answer"]["data"].get("notes") or answer["answer"]["data"]["hits"]
        assert items[0]["text"] == new.text and items[0]["current"] is True
        history = [i for i in items if i.get("text") == old.text]
        assert history and history[0]["current"] is False
        assert history[0]["superseded_by"] == str(new.pk)
    text = bob_api.recall("Какой у меня любимый цвет?", lang="ru")["answer"]["text"]
    assert "история" in text and text.index(new.text) < text.index(old.text)
    assert Note.objects.count() == 2  # nothing deleted


@pytest.mark.django_db
def test_a_value_in_another_scope_is_not_replaced(bob_api):
    bob_api.remember("Номер такси 111-22-33.", scope=[{"kind": "geo", "place": "Madrid"}])
    bob_api.remember("Номер такси 444-55-66.", scope=[{"kind": "geo", "place": "Berlin"}])
    assert not Note.objects.filter(superseded_by__isnull=False).exists()


@pytest.mark.django_db
def test_the_graph_keeps_a_replaced_relation_as_history_with_its_validity_interval(bob_api, bob):
    """The relations below are what the remember turn's model parse sends for each note (the
    fake model is not needed to see how level 3 reads them): linked to the note they were told in."""
    from memory.levels import graph as graph_level
    from memory.levels.context import RecallContext
    from memory.stores.graph import Chunk, Entity, Relation, graph
    from memory.stores.graph_types import note_chunk_id

    told = [
        ("Брат Антон работает хирургом в областной больнице.", "Областная больница"),
        ("Теперь брат Антон работает хирургом в частной клинике.", "Частная клиника"),
    ]
    notes = []
    for text, place in told:
        bob_api.remember(text)
        note = Note.objects.get(text=text)
        notes.append(note)
        chunk = note_chunk_id(note.pk)
        graph().insert(
            architect_id=bob.pk,
            chunks=[Chunk(id=chunk, content=text)],
            entities=[Entity("Антон", "person", text, chunk), Entity(place, "place", text, chunk)],
            relations=[Relation("Антон", place, "работает хирургом", "работа", chunk)],
        )
    old, new = notes[0], notes[1]
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk  # the lemma rule saw the change

    def ask(question: str):
        ctx = RecallContext.of(
            architect=bob,
            text=question,
            scope=[],
            lang="ru",
        )
        return graph_level.search(ctx)

    now = ask("Где работает хирургом брат Антон?")
    assert now.found, now.report
    targets = {r["target"]: r for r in now.data["relations"]}
    assert "Частная клиника" in targets and "Областная больница" not in targets
    assert targets["Частная клиника"]["current"] is True
    assert targets["Частная клиника"]["valid_to"] is None
    assert [c["current"] for c in now.data["chunks"]] == [True]

    before = ask("Где раньше работал хирургом брат Антон?")
    assert before.found, before.report
    targets = {r["target"]: r for r in before.data["relations"]}
    assert targets["Частная клиника"]["current"] is True
    past = targets["Областная больница"]
    assert past["current"] is False
    assert past["valid_from"] == old.created_at.isoformat()
    assert past["valid_to"] == old.superseded_at.isoformat()
    assert before.data["relations"][0]["target"] == "Частная клиника"  # current first
    assert "история" in before.text and "верно до" in before.text


@pytest.mark.django_db
def test_level_4_puts_the_value_that_holds_now_before_a_replaced_one_it_found(bob_api, bob):
    from memory.levels import vectors as vectors_level
    from memory.levels.context import RecallContext

    bob_api.remember("Код от сейфа в мастерской — 3391.")
    bob_api.remember("Новый код от сейфа в мастерской — 8820.")
    bob_api.remember("Теперь код от сейфа в мастерской — 5150.")
    old, middle, new = Note.objects.order_by("created_at")
    assert middle.superseded_by_id == new.pk
    question = "Какой код от сейфа?"
    ctx = RecallContext.of(architect=bob, text=question, scope=[], lang="ru")
    # What the search brought: only the oldest value, similar enough to answer.
    ranked = [{"id": f"notes:{old.pk}", "note": str(old.pk), "text": old.text, "answers": True}]
    vectors_level._mark_current(ranked, ctx)
    assert [r["note"] for r in ranked] == [str(new.pk), str(old.pk)]  # the end of the chain
    assert ranked[0]["current"] is True and ranked[0]["answers"] is True
    assert ranked[0]["replaces"] == str(old.pk)
    assert ranked[1]["current"] is False


@pytest.mark.django_db
def test_reading_the_rarest_terms_first_replaces_exactly_what_checking_every_note_would(bob):
    # Notes drawn from a small vocabulary, so many share terms: each write must supersede exactly
    # the earlier, still current notes that ``replaces`` accepts — the rule applied to every
    # note, written here in plain Python — though it reads only the rarest terms' postings.
    import random
    from datetime import timedelta

    from django.utils import timezone

    from memory import language
    from memory.knowledge.notes import note_create

    rng = random.Random(14)
    words = ["lake", "house", "blue", "green", "dentist", "brown", "patel", "car", "red", "code"]
    start = timezone.now() - timedelta(days=2)
    told: list[tuple[Note, set[str]]] = []
    replaced_any = 0
    for i in range(60):
        text = " ".join(rng.sample(words, rng.randint(2, 7)))
        terms = set(language.terms(text))
        current = {
            n.pk for n in Note.objects.filter(architect=bob, superseded_by__isnull=True).only("pk")
        }
        expected = {n.pk for n, old in told if n.pk in current and replaces(old, terms)}
        note = note_create(
            architect=bob,
            text=text,
            scope=[],
            sender=f"s{i}",  # each a conversation of its own: no context terms
            run=None,
            at=start + timedelta(minutes=i),
        )
        assert {n.pk for n in note.replaced} == expected, text
        replaced_any += len(expected)
        told.append((note, terms))
    assert replaced_any > 5  # the vocabulary makes updates common, so the check has teeth


def test_the_size_bounds_hold_every_pair_replaces_accepts_and_no_wider():
    # Every pair of term sets over a small vocabulary with a change marker in it: whenever
    # ``replaces`` accepts, the old note shares ``must_share`` terms and its size lies within
    # ``sizes`` of the new one — so reading only notes of that size misses nothing. And each
    # bound is reached by some pair, so the range is not wider than the rule needs.
    from itertools import combinations

    from memory.knowledge.supersede import MARKERS, must_share, sizes

    marker = sorted(MARKERS)[0]
    vocabulary = ["lake", "house", "blue", "green", "dentist", "patel", "car", marker]
    subsets = [set(c) for n in range(1, 8) for c in combinations(vocabulary, n)]
    low_reached: set[frozenset[str]] = set()
    high_reached: set[frozenset[str]] = set()
    accepted = 0
    for new in subsets:
        low, high = sizes(new)
        for old in subsets:
            if not replaces(old, new):
                continue
            accepted += 1
            assert len(old & new) >= must_share(new), (old, new)
            assert low <= len(old) <= high, (old, new)
            if len(old) == low:
                low_reached.add(frozenset(new))
            if len(old) == high:
                high_reached.add(frozenset(new))
    assert accepted > 1000
    assert low_reached and high_reached


BETWEEN = "Запасные ключи от дачи хранятся у соседа Виктора."


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("old", "new", "question"),
    [
        ("Живу на улице Пушкина, 10.", "Переехали: новый адрес — Лесная, 5.", "Где я живу?"),
        (
            "Мой тренер по плаванию — Андрей.",
            "Андрей больше не тренирует меня, теперь занимаюсь с Максимом.",
            "Кто мой тренер по плаванию?",
        ),
        (
            "Телефон Игоря: +7 916 111-22-33.",
            "У Игоря теперь другой номер: +7 926 444-55-66.",
            "Какой телефон у Игоря?",
        ),
        (
            "I work at Foster + Partners.",
            "I no longer work at Foster; I joined Zaha Hadid Architects.",
            "Where do I work?",
        ),
        (
            "My office is at 12 Baker Street.",
            "We moved: the office is now at 4 Mill Lane.",
            "Where is my office?",
        ),
        (
            "The topping-out at the Kirkstall library is planned for 12 May.",
            "Topping out at Kirkstall has slipped to the 3rd of June.",
            "When is the topping-out at Kirkstall?",
        ),
        (
            "My work mobile number is 07700 900561.",
            "My work mobile has changed: it is now 07700 900884.",
            "What is my work mobile number?",
        ),
        # a word root both hold, which the dictionary gives two lemmas (Сбер / Сбербанк)
        (
            "Зарплата приходит на карту Сбербанка.",
            "Закрыл карту в Сбере, зарплату теперь переводят в Альфа-Банк.",
            "На карту какого банка приходит зарплата?",
        ),
        (
            "Стригусь у мастера Тимура на Новокузнецкой.",
            "Теперь меня подстригает Артур в салоне у Полянки.",
            "У какого мастера я стригусь?",
        ),
        # a value from a time on, with no other change word
        (
            "I charge five hundred pounds a day for site visits.",
            "From April I bill £550 a day for site visits.",
            "How much do I charge a day for site visits?",
        ),
        # a name both say, with no other change word than "instead"
        (
            "We are members of the Pulse gym on Walcot Street.",
            "Cancelled the Pulse membership; we swim at the Bath lido instead.",
            "Which gym are we members of?",
        ),
    ],
)
def test_a_value_changed_in_other_words_replaces_the_older_note(
    bob, client_for, old, new, question
):
    # By meaning, once the vectors are in (supersede.by_meaning): the new note says something
    # changed, is one of the nearest to the old one and names its subject or a value of its kind.
    api = client_for(bob, "deep")
    api.remember(old)
    api.remember(BETWEEN)
    api.remember(new)
    replaced = Note.objects.get(text=old)
    assert replaced.superseded_by.text == new and replaced.superseded_at is not None
    for depth in ("standard", "deep"):
        answer = api.recall(question, depth=depth)
        data = answer["answer"].get("data") or {}
        items = data.get("notes", []) + data.get("hits", []) + data.get("candidates", [])
        assert items[0]["text"] == new, (depth, answer["answer"]["text"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Телефон брата Антона — +7 916 482-30-17.",
            "У Оксаны, сестры Марины, теперь новый телефон: +7 926 715-64-08.",
        ),
        (
            "My dentist is Dr Anand Patel on Milsom Street.",
            "The children now see a different dentist, Dr Rhys Morgan.",
        ),
        ("Mark's mobile is 07700 900123.", "Lucy has a new mobile number: 07700 900456."),
        # the speaker's own value, then someone named's
        ("My work mobile number is 07700 900561.", "Lucy has a new mobile number: 07700 900456."),
        (
            "Мой рабочий телефон — +7 916 482-30-17.",
            "У Оксаны теперь новый телефон: +7 926 715-64-08.",
        ),
        # a month both say is a date, not a subject they share (English writes it with a capital)
        (
            "The topping-out at the Kirkstall library is planned for 12 May.",
            "We moved the office in May to the second floor of 27 Queen Square.",
        ),
        (
            "The Clyde Wharf planning submission is due on 30 June.",
            "Topping out at Kirkstall has slipped to the 3rd of June.",
        ),
        # other kin, though a name is shared: the wife is not her parents
        (
            "Жену зовут Марина, она преподаёт историю искусств.",
            "Родители Марины переехали в Серпухов, на улицу Ворошилова, 3.",
        ),
    ],
)
def test_a_look_alike_update_about_someone_else_replaces_nothing(bob, client_for, old, new):
    api = client_for(bob, "deep")
    api.remember(old)
    api.remember(BETWEEN)
    api.remember(new)
    assert Note.objects.get(text=old).superseded_by_id is None


@pytest.mark.django_db
def test_the_newest_of_a_long_chain_is_found_in_one_query(bob, django_assert_max_num_queries):
    """A value told forty times makes a chain of forty notes; the one that holds now is found
    by one recursive query (and one read of it), not a query a link."""
    from memory.knowledge.supersede import current

    chain = [Note.objects.create(architect=bob, text=f"Счёт матча {i}:0.") for i in range(40)]
    for older, newer in zip(chain, chain[1:], strict=False):
        Note.objects.filter(pk=older.pk).update(superseded_by=newer)
    first = Note.objects.get(pk=chain[0].pk)
    with django_assert_max_num_queries(2):
        assert current(first).pk == chain[-1].pk
    middle = Note.objects.get(pk=chain[20].pk)
    assert current(middle).pk == chain[-1].pk
    assert current(Note.objects.get(pk=chain[-1].pk)).pk == chain[-1].pk


@pytest.mark.django_db
def test_level_4_reads_the_end_of_a_long_chain_by_the_same_query_and_for_its_architect_only(
    bob, alice, django_assert_max_num_queries
):
    """Level 4 asks the one rule (``supersede.current``): the note read, then the chain's end,
    whatever its length; a note of another architect is not read at all."""
    from memory.levels import vectors as vectors_level
    from memory.levels.context import RecallContext

    chain = [Note.objects.create(architect=bob, text=f"Счёт матча {i}:0.") for i in range(40)]
    for older, newer in zip(chain, chain[1:], strict=False):
        Note.objects.filter(pk=older.pk).update(superseded_by=newer)
    ctx = RecallContext.of(architect=bob, text="Какой счёт?", scope=[], lang="ru")
    with django_assert_max_num_queries(3):
        assert vectors_level._holding_now(ctx, str(chain[1].pk)).pk == chain[-1].pk
    other = RecallContext.of(architect=alice, text="Какой счёт?", scope=[], lang="ru")
    assert vectors_level._holding_now(other, str(chain[1].pk)) is None


@pytest.mark.django_db
def test_a_chain_that_loops_ends_and_keeps_the_note(bob):
    """A loop cannot come from the write path (a note replaces only older ones), but a query
    that followed one would never end: it stops, and the note asked about stays the answer."""
    from memory.knowledge.supersede import current

    a = Note.objects.create(architect=bob, text="Пароль от роутера 1111.")
    b = Note.objects.create(architect=bob, text="Пароль от роутера 2222.")
    Note.objects.filter(pk=a.pk).update(superseded_by=b)
    Note.objects.filter(pk=b.pk).update(superseded_by=a)
    assert current(Note.objects.get(pk=a.pk)).pk == a.pk


@pytest.mark.django_db
def test_my_value_is_not_replaced_by_my_wifes_and_my_next_one_replaces_mine(bob_api):
    # The lemma rule's words match («любимый цвет»), the people do not: mine, then my wife's.
    bob_api.remember("Мой любимый цвет синий.")
    bob_api.remember("Любимый цвет жены — бежевый.")
    bob_api.remember("Теперь мой любимый цвет зелёный.")
    mine = Note.objects.get(text="Мой любимый цвет синий.")
    assert mine.superseded_by.text == "Теперь мой любимый цвет зелёный."
    assert Note.objects.get(text="Любимый цвет жены — бежевый.").superseded_by_id is None


@pytest.mark.django_db
def test_one_change_replaces_one_statement(bob, client_for):
    # The lemma rule names what the new note replaces; by meaning it replaces nothing more, not
    # even an earlier note that says the new contractor's name, which no other note holds.
    api = client_for(bob, "deep")
    api.remember("Подрядчик по кровле виллы в Сочи — «Кровля-Юг».")
    api.remember("«СочиСтройКров» делали нам фасад в Адлере.")
    api.remember(BETWEEN)
    api.remember("Подрядчик по кровле виллы в Сочи теперь «СочиСтройКров».")
    assert Note.objects.get(text="Подрядчик по кровле виллы в Сочи — «Кровля-Юг».").superseded_by
    kept = Note.objects.get(text="«СочиСтройКров» делали нам фасад в Адлере.")
    assert kept.superseded_by_id is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Перешли с ArchiCAD на Revit.", True),  # «перешли»: «переслать» first, «перейти» too
        ("Андрей больше не тренирует меня.", True),
        ("Вера мечтает играть в оркестре Большого театра.", False),  # «Большого» is no cue
        ("Sandra retired, so Kevin does our books now.", True),
        ("Isla plays the trumpet in the school band.", False),
        # a value from a time on is a change; «с» and "from" before anything else are not
        ("С марта платим за аренду 210 тысяч.", True),
        ("From January I bill £110 an hour.", True),
        ("Хожу на йогу с Леной.", False),
        ("I come from Leeds.", False),
        ("I have given up coffee and drink green tea.", True),
    ],
)
def test_a_change_is_announced_by_any_reading_of_a_word(text, expected):
    assert announces_change(text) is expected


@pytest.mark.django_db
def test_a_change_verb_the_dictionary_reads_otherwise_first_still_replaces(bob, client_for):
    api = client_for(bob, "deep")
    api.remember("Архитектурный софт у нас — ArchiCAD.")
    api.remember(BETWEEN)
    api.remember("Перешли с ArchiCAD на Revit.")
    replaced = Note.objects.get(text="Архитектурный софт у нас — ArchiCAD.")
    assert replaced.superseded_by.text == "Перешли с ArchiCAD на Revit."


@pytest.mark.django_db
def test_a_name_both_say_beats_a_rare_common_word_of_another_near_note(bob, client_for):
    # The GP note shares only "centre" with the new one, a word no other note holds; the gym
    # note shares the name "Pulse". The strongest evidence wins, not the first near note.
    gym = "We are members of the Pulse gym on Walcot Street."
    gp = "I registered with Dr Grant at the Combe Down Health Centre instead."
    new = "Cancelled the Pulse membership; we swim at the leisure centre instead."
    api = client_for(bob, "deep")
    for text in (gym, gp, new):
        api.remember(text)
    assert Note.objects.get(text=gym).superseded_by.text == new
    assert Note.objects.get(text=gp).superseded_by_id is None
