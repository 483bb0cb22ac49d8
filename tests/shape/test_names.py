"""The naming function: normalise, never repair; refuse whole, with the reason."""

from __future__ import annotations

import re

import pytest
from django.utils import translation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.shape import names

HOSTILE = [
    # SQL fragments
    "x; DROP TABLE users",
    "friends; --",
    "a' OR '1'='1",
    'col" INTEGER); DROP TABLE memory_note; --',
    "name -- comment",
    "name /* c */",
    "field.money",
    "mem_root.value",
    "1; SELECT 1",
    "(select)",
    "a=b",
    "x,y",
    "100%",
    "a\\b",
    "robert'); drop table students;--",
    "`backtick`",
    "«команда»",
    "“quoted”",
    # reserved words and the memory's own names
    "select",
    "TABLE",
    "Order",
    "user",
    "value",
    "id",
    "root",
    "architect id",
    # other scripts and symbols
    "δίκτυο",
    "Ωmega",
    "朋友",
    "チーム",
    "صديق",
    "חבר",
    "друг 😀",
    "🔥",
    "café",
    "straße",
    "friends™",
    "x²",
    "١٢٣",
    "Україна",
    "ґанок",
    # invisible and direction marks
    "dru\u200bzya",
    "team\u200d",
    "\ufeffteam",
    "team\u200e",
    "abc\u202edcba",
    "soft\u00adhyphen",
    "tab\tname",
    "line\nbreak",
    "nul\x00byte",
    "nbsp\u00a0name",
    # not names: phrases, empties, digits first
    "у меня в команде работает Юля продакт-менеджер и Дима менеджер",
    "a " * 100,
    "x" * 200,
    "очень " * 40,
    "",
    "   ",
    "---",
    "2fa",
    "123",
]


def test_there_are_at_least_forty_hostile_names():
    assert len(HOSTILE) >= 40


@pytest.mark.parametrize("label", HOSTILE)
def test_a_hostile_label_is_refused_whole_with_a_reason(label):
    with pytest.raises(names.NameRefused) as refusal:
        names.check(label)
    assert refusal.value.details["reason"]
    assert refusal.value.code == "name_refused"


@pytest.mark.parametrize(
    "label, name",
    [
        ("Команда", "komanda"),
        ("Друзья", "druzya"),
        ("любимый цвет", "lyubimy_tsvet"),
        ("Продакт-менеджер", "prodakt_menedzher"),
        ("ёжик", "yozhik"),
        ("Щука", "shchuka"),
        ("Team members", "team_members"),
        ("phone-number 2", "phone_number_2"),
    ],
)
def test_cyrillic_is_transliterated_by_the_named_scheme(label, name):
    assert names.check(label).name == name
    assert names.SCHEME_NAME == "wikipedia"


@pytest.mark.parametrize(
    "variant", ["Любимый цвет", "ЛЮБИМЫЙ ЦВЕТ", "любимый-цвет", "любимый_цвет", "  любимый   цвет "]
)
def test_case_spaces_and_hyphens_are_forms_of_one_name(variant):
    assert names.check(variant).name == "lyubimy_tsvet"


def test_a_near_duplicate_reuses_the_existing_name():
    friends = names.check("Друзья")
    again = names.check("друг", existing=[friends])
    assert again.reused
    assert again.name == "druzya"
    assert names.check("Friends", existing=[names.check("friend")]).name == "friend"


def test_a_name_equal_after_transliteration_is_reused():
    latin = names.check("komanda")
    assert names.check("Команда", existing=[latin]).reused


def test_the_identifier_limit_counts_after_transliteration():
    # 20 Cyrillic letters "щ" become 80 Latin ones: over the limit once transliterated.
    with translation.override("en"), pytest.raises(names.NameRefused, match="after translit"):
        names.check("щ" * 20)
    assert names.check("щ" * 10).name == "shch" * 10


def test_a_refusal_names_the_offending_character():
    with translation.override("en"):
        with pytest.raises(names.NameRefused, match="U\\+200B ZERO WIDTH SPACE"):
            names.check("dru\u200bzya")
        with pytest.raises(names.NameRefused, match="semicolon"):
            names.check("x; DROP TABLE users")


def test_a_refusal_is_written_in_the_active_language_and_carries_both():
    with translation.override("ru"), pytest.raises(names.NameRefused) as refusal:
        names.check("x; DROP TABLE users")
    assert refusal.value.message == "«x; DROP TABLE users» — не имя: в нём есть точка с запятой ';'"
    assert refusal.value.details["reason"] == "в нём есть точка с запятой ';'"
    assert (
        refusal.value.text.en == "«x; DROP TABLE users» is not a name: it contains a semicolon ';'"
    )
    with translation.override("en"), pytest.raises(names.NameRefused) as refusal:
        names.check("щ" * 20)
    assert refusal.value.message == refusal.value.text.en
    assert "после транслитерации" in refusal.value.text.ru


NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=0, max_size=60))
def test_any_text_is_refused_or_becomes_a_safe_name(label):
    try:
        name = names.check(label)
    except names.NameRefused:
        return
    assert NAME.fullmatch(name.name), name.name
    assert len(name.name) <= names.MAX_NAME_LENGTH
    assert name.name not in names.reserved_words()


label_words = st.lists(
    st.text(
        alphabet="абвгдеёжзийклмнопрстуфхцчшщъыьэюяabcdefghijklmnopqrstuvwxyz",
        min_size=1,
        max_size=8,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=300)
@given(label_words, st.sampled_from([" ", "-", "_", "  ", " - "]), st.booleans())
def test_accepted_names_are_stable_under_normalisation(words, separator, upper):
    label = " ".join(words)
    try:
        name = names.check(label)
    except names.NameRefused:
        return
    variant = separator.join(words)
    variant = variant.upper() if upper else variant.capitalize()
    assert names.check(variant).name == name.name
    # A name fed back as a label is itself.
    assert names.check(name.name).name == name.name
