"""The offline NER: what it names, and a text read once however often it is asked about."""

from __future__ import annotations

from memory import ner


def test_a_russian_and_an_english_phrase_name_their_people_and_places():
    names = {n.name: n.type for n in ner.entities("Мой друг Дима живёт в Казани")}
    assert names.get("Дима") == "person" and names.get("Казань") == "place"
    assert {n.name for n in ner.entities("Lucy moved to Leeds.")} >= {"Lucy", "Leeds"}


def test_a_text_asked_about_again_is_not_read_again(monkeypatch):
    read: list[str] = []
    russian = ner._russian

    def counting(text: str) -> list[ner.Named]:
        read.append(text)
        return russian(text)

    monkeypatch.setattr(ner, "_russian", counting)
    ner._recent.cache_clear()
    text = "Стоматолог доктор Руденко принимает в клинике на Соколе"
    first = ner.entities(text)
    first.append(ner.Named("чужое", "thing"))  # the caller's list is its own
    second = ner.entities(text)
    assert read == [text]
    assert second == first[:-1] and second

    long = "Руденко " * (ner.RECENT_LENGTH // 8 + 1)  # past the length kept: read each time
    ner.entities(long)
    ner.entities(long)
    assert read == [text, long, long]
