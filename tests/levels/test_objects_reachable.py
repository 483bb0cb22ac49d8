"""Objects are reachable: named by id they come back whole (or by their door path), and their
titles are found at level 1 by the same terms and the same answer bar as notes."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

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
