"""Objects: the agent keeps a document it composed; its card makes it findable at level 4."""

from __future__ import annotations

import pytest
from django.core.files.storage import storages

from memory.knowledge.objects import object_keep, object_read
from memory.models import MemoryObject, OutboxItem, ToolCall
from memory.stores.objects import CARD_TEXT_CHARS, card_text

REPORT = "# Расходы за май\n\nАренда офиса — 120 000 ₽\nОблако — 18 400 ₽\nИтого: 138 400 ₽\n"


def test_a_card_is_name_description_and_the_start_of_the_text():
    text = "а" * (CARD_TEXT_CHARS + 100)
    card = card_text(name="отчёт.md", description="расходы за май", text=text)
    assert card.startswith("отчёт.md\nрасходы за май\n")
    assert len(card) == len("отчёт.md\nрасходы за май\n") + CARD_TEXT_CHARS
    assert (
        card_text(name="scan.jpg", description="скан паспорта", text=None)
        == "scan.jpg\nскан паспорта"
    )


@pytest.mark.django_db
def test_an_object_keeps_its_bytes_hash_and_an_eternal_id(alice):
    obj, item = object_keep(
        architect=alice,
        name="май.md",
        media_type="text/markdown",
        content=REPORT.encode(),
        summary="расходы за май",
    )
    assert obj.size == len(REPORT.encode())
    assert len(obj.sha256) == 64
    assert storages["objects"].exists(obj.storage_key)
    assert object_read(architect=alice, object_id=str(obj.pk))[1] == REPORT.encode()
    assert item.store == "vectors" and item.payload["kind"] == "objects"


@pytest.mark.slow
@pytest.mark.usefixtures("grown")
def test_the_agent_keeps_a_document_and_level_4_returns_it_as_an_object(
    fake_claude, bob, client_for
):
    fake_claude.script(
        [
            {
                "match": "Фраза: «",
                "system_match": "разбор фразы",
                "result": '{"entities": [], "relations": []}',
            },
            {
                "match": "Запомни",
                "tools": [
                    {
                        "name": "keep_object",
                        "arguments": {
                            "name": "Расходы за май.md",
                            "media_type": "text/markdown",
                            "content": REPORT,
                            "summary": "Расходы за май: аренда офиса и облако, итого 138 400 ₽.",
                        },
                    }
                ],
                "result": "Сохранил отчёт.",
            },
        ]
    )
    api = client_for(bob, "deep")
    stored = api.remember("Составь и сохрани отчёт о расходах за май")
    (call,) = ToolCall.objects.filter(tool="keep_object")
    assert not call.error
    obj = MemoryObject.objects.get(pk=call.result["object"])
    assert obj.origin == "answer" and obj.architect == bob
    # The card was queued by the MCP server process and delivered by the owner after the turn.
    # The note, the note in its context, and the object's card.
    assert stored["stores"]["vectors"] == {"status": "written", "items": 3}
    assert not OutboxItem.objects.filter(status="queued").exists()

    answer = api.recall("Сколько мы потратили на аренду и облако в мае?", depth="deep")
    assert answer["depth_used"] == 4
    assert answer["answer"]["form"] == "object"
    card = answer["answer"]["object"]
    assert {k: card[k] for k in ("id", "media_type", "summary")} == {
        "id": str(obj.pk),
        "media_type": "text/markdown",
        "summary": "Расходы за май: аренда офиса и облако, итого 138 400 ₽.",
    }
    assert card["content"] == REPORT  # a small text object comes inline
