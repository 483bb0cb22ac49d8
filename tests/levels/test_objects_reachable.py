"""Objects are reachable: named by id they come back whole (or by their door path), and their
titles are found at level 1 by the same terms and the same answer bar as notes."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from memory.knowledge.objects import INLINE_BYTES, object_keep

REPORT = "# Расходы за май\n\nАренда офиса — 120 000 ₽\nОблако — 18 400 ₽\nИтого: 138 400 ₽\n"


@pytest.mark.django_db
def test_a_recall_naming_a_text_object_returns_its_content(bob, bob_api):
    obj, _ = object_keep(
        architect=bob, name="Расходы за май.md", media_type="text/markdown", content=REPORT.encode()
    )
    answer = bob_api.recall(f"Покажи объект {obj.pk}")
    assert answer["answer"]["found"] is True and answer["kind"] == "affirmative"
    assert answer["answer"]["form"] == "object"
    assert answer["answer"]["object"]["content"] == REPORT
    assert answer["answer"]["object"]["name"] == "Расходы за май.md"


@pytest.mark.django_db
def test_a_large_or_binary_object_is_named_by_its_path_through_the_door(bob, bob_api, alice_api):
    big = b"x" * (INLINE_BYTES + 1)
    obj, _ = object_keep(architect=bob, name="scan.pdf", media_type="application/pdf", content=big)
    answer = bob_api.recall(f"Дай {obj.pk}")
    card = answer["answer"]["object"]
    assert "content" not in card and card["path"] == f"/internal/v1/objects/{obj.pk}"
    door = Client().get(card["path"], headers={"X-Machine-Secret": settings.MACHINE_SECRET})
    assert door.status_code == 200 and door.content == big
    assert door["Content-Type"] == "application/pdf"
    assert Client().get(card["path"]).status_code == 401
    # another architect naming the id gets nothing of it
    other = alice_api.recall(f"Дай {obj.pk}")
    assert other["answer"]["found"] is False
    assert "object" not in other["answer"]


@pytest.mark.django_db
def test_an_object_is_found_at_level_1_by_its_title(bob, bob_api):
    object_keep(
        architect=bob, name="Расходы за май.md", media_type="text/markdown", content=REPORT.encode()
    )
    answer = bob_api.recall("Какие расходы за май?")
    assert answer["depth_used"] == 1 and answer["answer"]["form"] == "object"
    assert answer["answer"]["object"]["content"] == REPORT
    unrelated = bob_api.recall("Какие доходы за июнь?")
    assert unrelated["answer"]["found"] is False


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "media_type", "content"),
    [
        ("Протокол.md", "text/markdown", ("Строка протокола совещания.\n" * 8_000).encode()),
        ("scan.png", "image/png", bytes(range(256)) * 800),
    ],
    ids=["a 200 KB text", "a binary"],
)
def test_an_object_an_answer_hands_over_is_read_whole_by_its_link_with_the_same_key(
    bob, bob_api, alice_api, name, media_type, content
):
    assert len(content) > 190_000
    obj, _ = object_keep(architect=bob, name=name, media_type=media_type, content=content)
    card = bob_api.recall(f"Дай {obj.pk}")["answer"]["object"]
    assert "content" not in card  # too large, or not text: not inline
    url = card["url"]
    assert url.startswith(f"/api/v1/objects/{obj.pk}?token=")

    read = bob_api.http.get(url)
    assert read.status_code == 200 and read.content == content
    assert read["Content-Type"] == media_type

    # Another architect's key, with the very same link: as if there were no such object.
    stolen = alice_api.http.get(url)
    assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "object_not_found"
    # No key at all; a link for another object; a tampered token.
    assert APIClient().get(url).status_code == 401
    other, _ = object_keep(architect=bob, name="b.txt", media_type="text/plain", content=b"b")
    borrowed = url.replace(str(obj.pk), str(other.pk))
    assert bob_api.http.get(borrowed).json()["error"]["code"] == "object_not_found"
    assert bob_api.http.get(url[:-3] + "xyz").status_code == 404


@pytest.mark.django_db
def test_an_expired_object_link_says_so(bob, bob_api, settings):
    obj, _ = object_keep(architect=bob, name="a.txt", media_type="text/plain", content=b"a")
    url = bob_api.recall(f"Дай {obj.pk}")["answer"]["object"]["url"]
    settings.OBJECT_LINK_SECONDS = -1  # any link is older than this
    expired = bob_api.http.get(url)
    assert expired.status_code == 410 and expired.json()["error"]["code"] == "link_expired"


@pytest.mark.django_db
def test_an_object_holds_where_it_was_kept_for_its_title_and_its_card(bob, bob_api):
    # A document about one place does not answer a question about another as affirmative: its
    # scope is kept with it, read by level 1's object source and by level 4's cards.
    from memory.stores import outbox
    from memory.stores.vectors import vectors

    barcelona = [{"kind": "geo", "place": "barcelona"}]
    madrid = [{"kind": "geo", "place": "madrid"}]
    rules = "Парковка у офиса: только по пропуску, въезд с улицы Арагон.\n"
    obj, _ = object_keep(
        architect=bob,
        name="Правила парковки.md",
        media_type="text/markdown",
        content=rules.encode(),
        summary="правила парковки у офиса",
        scope=barcelona,
    )
    question = "Какие правила парковки у офиса?"
    there = bob_api.recall(question, scope=barcelona)
    assert there["answer"]["found"] and there["answer"]["object"]["id"] == str(obj.pk)
    assert there["kind"] == "affirmative"
    elsewhere = bob_api.recall(question, scope=madrid)
    assert elsewhere["answer"].get("object") is None
    unbound = bob_api.recall(question)  # the question names no place: the answer says it depends
    assert unbound["answer"]["object"]["id"] == str(obj.pk)
    assert unbound["kind"] == "parameter_dependent"
    assert [m["dimension"] for m in unbound["missing"]] == ["geo"]
    assert "barcelona" in unbound["missing"][0]["why"]

    outbox.drain()  # the card's vector, queued with the object

    def cards(scope):
        hits = vectors().search(
            kind="objects", architect_id=bob.pk, query=question, limit=5, scope=scope
        )
        return [h.payload["object"] for h in hits]

    assert cards(barcelona) == [str(obj.pk)] and cards(madrid) == []
