"""The answer decision (memory.decision) through the real ladder, on both databases: a paraphrase
is found and first, a question about something never told is not, a neighbour lifted by a note
never stands above it, a value changed in other words is answered newest first, and a
paraphrase found at level 4 is answered at level 1 the second time."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory import decision, language
from memory.knowledge import notes as notes_service
from memory.knowledge import supersede
from memory.models import Note, Run

DENTIST = "Мой стоматолог — доктор Руденко, принимает в клинике на Соколе."
KEYS = "Запасные ключи от дачи хранятся у соседа Виктора."
JUDO = "Сын Артём занимается дзюдо в клубе «Самбо-70»."
COLOUR = "Мой любимый цвет — синий."
OLD_CAR = "Я езжу на «Ладе Весте»."
NEW_CAR = "Продал «Весту», теперь у меня «Шкода Октавия»."


@pytest.fixture
def told(bob, client_for):
    api = client_for(bob, "deep")
    for fact in (DENTIST, KEYS, JUDO, COLOUR):
        api.remember(fact)
    return api


def _first(answer):
    data = answer["answer"].get("data") or {}
    for key in ("hits", "notes", "candidates"):
        for item in data.get(key, []):
            if item.get("text"):
                return item["text"]
    return None


# The embedder's limit, measured (bench/decision.py, PASSPORT.md «Поиск»): multilingual-e5-small
# gives a paraphrase with no word of its fact and a question about something never told much the
# same similarities and margins. The words the note lacks (``pull``) now tell «Кто лечит мне
# зубы?» (p ≈ 0.78, found) from «Кто мой окулист?» (p ≈ 0.52), but in a memory of four notes the
# son's coach still pulls towards the note on his judo club (p ≈ 0.87, said found). Strict: when
# a better embedder or evidence lets it pass, this test fails and must become a plain test.
EMBEDDER_LIMIT = pytest.mark.xfail(
    strict=True, reason="e5-small cannot tell this near-miss from a paraphrase (see above)"
)


@pytest.mark.django_db
def test_a_paraphrase_with_no_word_of_its_fact_is_found_and_first_at_deep(told):
    answer = told.recall("Кто лечит мне зубы?", depth="deep")
    assert answer["answer"]["found"] is True, answer["answer"]["text"]
    assert answer["depth_used"] == 4
    assert _first(answer) == DENTIST
    assert answer["kind"] == "probabilistic"  # meaning, not the note's own words: not affirmative


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question",
    [
        pytest.param("Как зовут тренера Артёма по дзюдо?", marks=EMBEDDER_LIMIT),
        "Какой у меня любимый фрукт?",
        "Кто мой окулист?",
        "What is my favourite fruit?",
    ],
)
def test_a_question_about_something_never_told_is_not_found(told, question):
    for depth in ("standard", "deep"):
        answer = told.recall(question, depth=depth)
        assert answer["answer"]["found"] is False, (depth, answer["answer"]["text"])
        assert answer["kind"] == "probabilistic"


# Every word of these questions but the one asked for is in a note told (a rarer name outweighs
# it), and that note holds no value of the kind: it does not answer; told, the value does.
ASKED_VALUE = [
    (
        "Бухгалтер Ирина Львовна приходит по вторникам.",
        "Какой телефон у бухгалтера Ирины Львовны?",
        "Телефон бухгалтера Ирины Львовны — +7 903 555-19-40.",
    ),
    (
        "Конструктор по мосту через Свиягу — Никита Ершов из «Мостпроекта».",
        "Какой номер у конструктора Никиты Ершова?",
        "Номер Никиты Ершова: +7 917 245-11-90.",
    ),
    (
        "Jo Fielding is our structural engineer at Arup.",
        "What is Jo Fielding's email address?",
        "Jo Fielding's email is jo.fielding@arup.example.",
    ),
    (
        "My sister Lucy runs a veterinary practice in Exeter.",
        "What is my sister Lucy's address in Exeter?",
        "My sister Lucy lives at 14 Alder Grove, Exeter.",
    ),
    # Asked for by a phrase: a version, years (an age, in words once told) and a price.
    (
        "Моя племянница Соня занимается фигурным катанием.",
        "С какого возраста Соня катается на коньках?",
        "Соня катается на коньках с шести лет.",
    ),
    (
        "Our office dog Biscuit is a border terrier who loves the studio.",
        "How old is our office dog Biscuit?",
        "Biscuit, the office dog, is seven years old.",
    ),
    (
        "Я хожу в бассейн «Волна» на Соколе по четвергам.",
        "Сколько стоит абонемент в бассейн «Волна»?",
        "Абонемент в бассейн «Волна» стоит 4200 рублей в месяц.",
    ),
    (
        "Our studio models every project in ArchiCAD, with Twinmotion for renders.",
        "Which version of ArchiCAD does our studio model in?",
        "The version of ArchiCAD our studio models in is 27.",
    ),
    (
        "We hired a drone survey firm, SkyMeasure, for the Penrose plot.",
        "How much did we pay SkyMeasure for the Penrose drone survey?",
        "SkyMeasure charged us £1,250 for the Penrose drone survey.",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("note", "question", "value"), ASKED_VALUE)
def test_a_note_without_the_value_asked_for_by_name_does_not_answer(
    bob, client_for, note, question, value
):
    api = client_for(bob, "deep")
    for fact in (DENTIST, KEYS, "Телефон сантехника Геннадия: +7 926 118-40-25.", note):
        api.remember(fact)
    for depth in ("standard", "deep"):
        answer = api.recall(question, depth=depth, trace=True)
        assert answer["answer"]["found"] is False, (depth, answer["answer"]["text"])
        assert any(v["unheld"] for v in _verdicts(answer)), answer["trace"]  # what it lacks
    # Told, the value goes first, and it holds what is asked (whether its words and meaning
    # are enough is the fitted decision's, as for any note).
    api.remember(value)
    answer = api.recall(question, depth="deep", trace=True)
    assert _first(answer) == value, answer["answer"]["text"]
    verdict = _verdicts(answer)[-1]  # the level that decided last
    assert verdict["unheld"] == [], verdict


def _verdicts(answer):
    """The decisions of the levels that ranked notes (1 and 4), in the order they ran."""
    return [
        e.get("decision") or e.get("verdict")
        for e in answer["trace"]
        if e.get("event") in ("notes", "decision") and (e.get("decision") or e.get("verdict"))
    ]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Какой телефон у Ирины?", {"phone"}),
        ("Какой номер у брата Антона?", {"number"}),
        ("Какой код от калитки на даче?", {"code"}),
        ("Какой пароль от Wi-Fi?", {"code"}),
        ("Какой электронный адрес я даю клиентам?", {"address"}),
        ("What is Priya's mobile number?", {"number"}),
        ("What is Dad's phone number?", {"phone", "number"}),
        ("What is Jo's e-mail?", {"email"}),
        ("Где взять номер налогоплательщика?", set()),  # where it is, not what it is
        ("Where is the alarm code written?", set()),
        ("Кто лечит мне зубы?", set()),
        # Not the value (LoCoMo's questions): a verb, a stem, an adjective, another question word
        ("What challenges does Sam face, and how does he address them?", set()),
        ("What was the setback Tim faced in his coding project?", set()),
        ("What type of game is John's upcoming mobile game?", set()),
        ("When did John start working on his mobile game?", set()),
        ("Когда мне сменили код от домофона?", set()),
        ("Как узнать, какой код у домофона?", {"code"}),
        # Who: a person is asked for, whatever value the question names
        ("Кто знает код от сейфа?", set()),
        ("Whose phone number did James receive during the beach outing?", set()),
        # Years and a price, asked for by a phrase (its own question word) or by a name
        ("Сколько лет Бублику?", {"years"}),
        ("Какого возраста мой сын?", {"years"}),
        ("How old is Isla?", {"years"}),
        ("At what age did Vera start the cello?", {"years"}),
        ("Сколько стоит стрижка у барбера?", {"price"}),
        ("Во сколько нам обходится уборка квартиры?", {"price"}),
        ("Какая цена у бутыли воды?", {"price"}),
        ("How much does James pay per cooking class?", {"price"}),
        ("How much will the Falmouth windows cost?", {"price"}),
        ("Кто считает стоимость строительства виллы?", set()),  # a person
        ("Who does our cost planning?", set()),
        ("How much sugar do I take in my tea?", set()),  # a quantity may be words: not asked
        ("What was the console Jolene's parents got her at age 10?", set()),
        # A version is a number when which one is asked
        ("Which version of Rhino do I use?", {"number"}),
        ("Какую версию BIM-программы я использую?", {"number"}),
        ("What should Sam keep doing to find his own version of love?", set()),
    ],
)
def test_the_value_a_question_asks_for_by_name(question, asked):
    assert language.asked_values(question) == asked


def test_the_words_that_make_a_number_an_amount_are_those_that_ask_for_a_price():
    # One list serves both: what a statement's number is (``values``, read by supersession)
    # and whether "how much" or «сколько» asks for a price.
    assert "money" in language.values("The council can now spend 4.6 million on the build.")
    assert language.asked_values("How much did we spend on the Penrose survey?") == {"price"}
    assert "money" in language.values("Уборка квартиры обходится в 5500.")
    assert language.asked_values("Во сколько обходится уборка квартиры?") == {"price"}


def test_a_note_holds_the_value_asked_by_its_name_or_by_a_value_of_its_kind():
    assert language.unheld("Какой телефон у Ирины?", ["Ирина приходит по вторникам."]) == ["phone"]
    assert language.unheld("Какой телефон у Ирины?", ["Ирина: +7 903 555-19-40."]) == []
    assert language.unheld("Какой номер у Ирины?", ["Телефон Ирины записан в блокноте."]) == []
    assert language.unheld("Какой код от калитки?", ["Замок открывается комбинацией 6054."]) == []
    assert language.unheld("Какой электронный адрес?", ["Почта: studio@polyanka7.ru"]) == []
    assert language.unheld("What is my home address?", ["Our house is at 14 Alder Grove."]) == []
    assert language.unheld("What is Jo's email?", ["Jo's phone is 07700 900318."]) == ["email"]
    assert language.unheld("Кто лечит мне зубы?", ["Что угодно."]) == []
    # Years and prices in digits or in words, a price also by being free
    assert language.unheld("Сколько лет сыну?", ["Сыну Артёму двенадцать лет."]) == []
    assert language.unheld("How old is Isla?", ["Isla is fourteen."]) == []
    assert language.unheld("How old is Isla?", ["Isla plays the trumpet."]) == ["years"]
    assert language.unheld("Сколько стоит бассейн?", ["Бассейн для детей бесплатный."]) == []
    assert language.unheld("Сколько стоит бассейн?", ["Бассейн по четвергам."]) == ["price"]
    assert language.unheld("How much did I pay for it?", ["It cost £41,500."]) == []


def test_a_newer_note_without_the_value_asked_for_does_not_take_the_answer():
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    code = SimpleNamespace(
        text="Код домофона в старом доме — 4512.", scope=[], created_at=now, superseded_by_id=None
    )
    gym = SimpleNamespace(
        text="Перешёл в фитнес-клуб «Зебра» возле нового дома.", scope=[],
        created_at=now + timedelta(days=3), superseded_by_id=None,
    )  # fmt: skip
    order, updated = supersede.newest_first([code, gym], [0.86, 0.86], "Какой код домофона?")
    assert order == [0, 1] and updated == {}


@pytest.mark.django_db
def test_every_decision_shows_its_evidence_in_the_trace(told):
    answer = told.recall("Кто лечит мне зубы?", depth="deep", trace=True)
    decided = [e for e in answer["trace"] if e.get("event") == "decision"]
    assert decided and decided[0]["level"] == 4
    first = decided[0]["verdict"]
    assert first["model"] == "meaning"
    assert first["notes"][0] == str(Note.objects.get(text=DENTIST).pk)
    assert set(first["features"]) == set(decision.FEATURES["meaning"])
    assert 0.0 <= first["p"] <= 1.0
    assert first["threshold"] == settings.ANSWER_MODELS["meaning"]["threshold"]


def test_the_probability_grows_with_the_evidence():
    weak = decision.Evidence(coverage=0.2, missed=0.6, unseen=0.2, best_coverage=0.2)
    strong = decision.Evidence(coverage=1.0, missed=0.0, unseen=0.0, best_coverage=1.0)
    assert decision.probability(strong, "words") > decision.probability(weak, "words")
    assert decision.answers(strong, "words") and not decision.answers(weak, "words")


def test_pull_is_what_the_missing_words_take_from_the_note_less_their_most_from_another():
    whole = [0.86, 0.84, 0.83, 0.80]
    # Without the words the note lacks, the note loses 0.06, the others at most 0.02.
    assert decision.pull(whole, [0.80, 0.83, 0.81, 0.79], 0) == pytest.approx(0.04)
    # The same words take more from another note: they are about that one.
    assert decision.pull(whole, [0.85, 0.78, 0.82, 0.79], 0) == pytest.approx(-0.05)
    assert decision.pull(whole, [0.80, 0.83, 0.81, 0.79], None) == 0.0  # not among the nearest
    assert decision.pull([0.86], [0.80], 0) == 0.0  # nothing to compare with


def test_pull_of_compares_the_question_without_the_missing_words_with_the_same_points():
    from memory.levels.vectors import pull_of

    asked = []

    def embed(phrase):  # a stand-in embedder: a vector along the second axis, length 2
        asked.append(phrase)
        return [0.0, 2.0]

    points = [[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]]
    whole = [0.9, 0.5, 0.7]
    got = pull_of("Кто лечит мне зубы?", DENTIST, 0, whole, points, embed)
    assert asked == ["кто мне"]  # once, without «лечит», «зубы»
    # Without the words: closeness 0.8, 0.0, 1.0; lost 0.1, 0.5, -0.3: 0.1 - 0.5.
    assert got == pytest.approx(-0.4)
    assert pull_of("Кто мой стоматолог?", DENTIST, 0, whole, points, embed) == 0.0
    assert pull_of("Кто лечит мне зубы?", DENTIST, None, whole, points, embed) == 0.0
    assert len(asked) == 1  # nothing left out, or the note not among them: nothing embedded


@pytest.mark.django_db
def test_the_meaning_decision_reads_the_pull_of_the_words_the_note_lacks(told):
    answer = told.recall("Кто лечит мне зубы?", depth="deep", trace=True)
    (verdict,) = [e["verdict"] for e in answer["trace"] if e.get("event") == "decision"]
    assert verdict["features"]["pull"] != 0.0  # «лечит», «зубы» are not in the dentist's note
    whole = told.recall("Кто мой стоматолог?", depth="deep", trace=True)
    decided = [e["verdict"] for e in whole["trace"] if e.get("event") == "decision"]
    # The note holds every word of this one: nothing is left out, there is no pull to read.
    assert all(v["features"]["pull"] == 0.0 for v in decided)


def test_a_note_lifted_by_its_neighbour_goes_below_the_neighbour_that_holds_the_words():
    # B was told right after A: its context and the neighbourhood lift raised it above A.
    places = {"A": ("talk", 0, None), "B": ("talk", 1, None), "C": ("other", 0, None)}
    own = {"A": 0.9, "B": 0.2, "C": 0.1}
    assert notes_service.holders_first(["B", "A", "C"], own, places) == ["A", "B", "C"]
    # In another conversation, or holding more itself, a note keeps its place.
    assert notes_service.holders_first(["C", "A"], own, places) == ["C", "A"]
    assert notes_service.holders_first(["A", "B"], own, places) == ["A", "B"]


def _holders_first_by_definition(order, own, places, width):
    """The rule as PASSPORT.md states it, pair by pair: the first weaker neighbour above a note
    lets it pass, and the scan starts again (what holders_first computed before it indexed the
    neighbours)."""

    def near(a, b):
        pa, pb = places.get(a), places.get(b)
        return (
            pa is not None
            and pb is not None
            and pa[0] is not None
            and pa[0] == pb[0]
            and (abs(pa[1] - pb[1]) <= width)
        )

    ranked = list(order)
    moved = True
    while moved:
        moved = False
        for j in range(1, len(ranked)):
            mine = own.get(ranked[j], 0.0)
            above = next(
                (
                    i
                    for i in range(j)
                    if near(ranked[i], ranked[j]) and own.get(ranked[i], 0.0) < mine
                ),
                None,
            )
            if above is not None:
                ranked.insert(above, ranked.pop(j))
                moved = True
                break
    return ranked


@given(
    st.lists(
        st.tuples(st.sampled_from(["t1", "t2", None]), st.integers(0, 30), st.floats(0, 1)),
        max_size=40,
    )
)
@hypothesis_settings(max_examples=300, deadline=None)
def test_holders_first_orders_as_the_pairwise_rule_does(rows):
    keys = list(range(len(rows)))
    places = {k: (talk, position, None) for k, (talk, position, _) in enumerate(rows)}
    own = {k: score for k, (_, _, score) in enumerate(rows)}
    width = max(settings.RANK_NEIGHBOURHOOD_NOTES, settings.NOTES_CONTEXT_NEIGHBOURS)
    order = list(reversed(keys))
    assert notes_service.holders_first(order, own, places) == _holders_first_by_definition(
        order, own, places, width
    )


@pytest.mark.django_db
def test_facts_told_one_after_the_other_are_each_found_above_their_neighbour(bob, client_for):
    api = client_for(bob, "deep")
    facts = [DENTIST, KEYS, "Пароль от роутера на даче — лиса2024.", JUDO]
    for fact in facts:
        api.remember(fact)
    for question, expected in (
        ("Кто мой стоматолог?", DENTIST),
        ("У кого хранятся запасные ключи от дачи?", KEYS),
        ("Какой пароль от роутера на даче?", facts[2]),
    ):
        for depth in ("standard", "deep"):
            answer = api.recall(question, depth=depth)
            assert _first(answer) == expected, (question, depth, answer["answer"]["text"])


@pytest.mark.django_db
@pytest.mark.parametrize("depth", ["standard", "deep"])
def test_a_value_changed_in_other_words_is_answered_newest_first(bob, client_for, depth):
    api = client_for(bob, "deep")
    api.remember(OLD_CAR)
    api.remember(KEYS)
    api.remember(NEW_CAR)
    old = Note.objects.get(text=OLD_CAR)
    assert old.superseded_by.text == NEW_CAR  # history, not deleted
    answer = api.recall("На какой машине я езжу?", depth=depth)
    assert _first(answer) == NEW_CAR, answer["answer"]["text"]


@pytest.mark.django_db
def test_a_note_that_announces_no_change_replaces_nothing(bob, client_for):
    api = client_for(bob, "deep")
    api.remember("Телефон брата Антона — +7 916 482-30-17.")
    api.remember("Телефон прораба Ильдара — +7 917 245-11-90.")
    api.remember("Телефон бухгалтера Ирины — +7 903 555-19-40.")
    assert not Note.objects.filter(superseded_by__isnull=False).exists()


def test_a_newer_note_about_someone_else_named_in_the_question_does_not_go_first():
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    brother = SimpleNamespace(
        text="Телефон брата Антона — +7 916 482-30-17.", scope=[], created_at=now,
        superseded_by_id=None,
    )  # fmt: skip
    sister = SimpleNamespace(
        text="У Оксаны, сестры жены, теперь новый телефон: +7 926 715-64-08.", scope=[],
        created_at=now + timedelta(days=3), superseded_by_id=None,
    )  # fmt: skip
    order, updated = supersede.newest_first(
        [brother, sister], [0.88, 0.87], "Какой номер у брата Антона?"
    )
    assert order == [0, 1] and updated == {}
    order, updated = supersede.newest_first(
        [brother, sister], [0.88, 0.87], "Какой номер телефона?"
    )
    assert order == [1, 0] and updated == {0: 1}


@pytest.mark.django_db
def test_a_paraphrase_found_at_level_4_is_answered_at_level_1_the_second_time(told):
    # At the shipped decision: no threshold moved.
    first = told.recall("Кто лечит мне зубы?", depth="deep")
    assert first["answer"]["found"] is True and first["depth_used"] == 4
    assert first["relearned"]["summary"]
    again = told.recall("Кто лечит мне зубы?", depth="deep")
    assert again["answer"]["found"] is True
    assert again["depth_used"] <= 3
    run = Run.objects.get(pk=again["run"])
    assert run.model_turns == 0
    assert DENTIST[:20] in again["answer"]["text"]
    assert KEYS[:20] not in again["answer"]["text"]  # only what answered was kept
