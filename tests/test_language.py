from __future__ import annotations

import pytest

from memory import language
from memory.language import keywords, lemma


@pytest.mark.parametrize("word", ["друг", "друзья", "друзей", "Друзьями", "другу"])
def test_it_meets_russian_forms_at_one_lemma(word):
    assert lemma(word) == "друг"


@pytest.mark.parametrize("word", ["friend", "friends", "Friends"])
def test_it_meets_english_forms_at_one_stem(word):
    assert lemma(word) == "friend"


def test_it_drops_function_words_by_their_grammar():
    assert keywords("Кто мои друзья?") == ["друг"]
    assert keywords("Какой у меня любимый цвет?") == ["любимый", "цвет"]
    assert keywords("Who are my friends?") == ["friend"]
    assert keywords("У меня есть друг Дима") == ["друг", "дима"]


def test_it_keeps_numbers_and_folds_yo():
    assert keywords("Ёлка 2026 года") == ["елка", "2026", "год"]


def test_it_keeps_hyphenated_words_whole():
    assert keywords("Юля — продакт-менеджер") == ["юля", "продакт-менеджер"]


def test_the_same_question_is_the_same_content_lemmas_whatever_the_form():
    assert language.same_question(
        "Кто из моих друзей мог знать Ельцина?", "кто мог знать ельцина из друзей моих"
    )
    assert language.same_question("Где служил Денис?", "Где служил Денис?")
    assert not language.same_question(
        "Кто из моих друзей мог знать Ельцина?", "Кто из моих друзей мог знать Горбачёва?"
    )


def test_english_stems_are_the_same_from_many_threads_at_once():
    # A Snowball stemmer holds the word it works on: one shared instance corrupted the words of
    # concurrent remembers (IndexError). Every thread stems with its own.
    from concurrent.futures import ThreadPoolExecutor

    import snowballstemmer

    from memory import language

    words = [
        f"{stem}{suffix}"
        for stem in ("walk", "talk", "jump", "build", "paint", "design")
        for suffix in ("ing", "ed", "ers", "ingly", "ations", "ness")
    ]
    words = [f"{w}{'x' * n}" for n in range(60) for w in words]  # unseen words: no cache hits
    expected = [snowballstemmer.stemmer("english").stemWord(w) for w in words]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(language.lemma, words))
    assert got == expected


@pytest.mark.parametrize(
    ("question", "text", "left"),
    [
        ("Кто лечит мне зубы?", "Мой стоматолог — доктор Руденко, принимает на Соколе.", "кто мне"),
        ("Какой пролёт у моста?", "Пролёт моста через Свиягу — 84 метра.", None),
        ("Где работает брат?", "Брат Антон — хирург в областной больнице.", "где брат"),
        ("Who treats my teeth?", "My dentist is Dr Rudenko.", "who my"),
        (
            "Where does Biscuit get vaccinated?",
            "Biscuit goes to Widcombe Vets.",
            "where does biscuit",
        ),
        ("What is my favourite fruit?", "Мой любимый цвет — синий.", None),
        ("Какой у меня любимый фрукт?", "My favourite colour is blue.", None),
        ("Где лежит Revit?", "Работаю в Revit 2024.", "где revit"),
    ],
)
def test_a_question_without_the_words_a_note_does_not_hold(question, text, left):
    assert language.without_unheld_words(question, text) == left
