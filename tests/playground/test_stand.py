"""The minimal stand: signed in, it talks to the same services as the API and shows the raw answer."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memory.models import Note, Run


@pytest.fixture
def browser(carol) -> Client:
    client = Client()
    client.force_login(carol)
    return client


@pytest.mark.django_db
def test_it_requires_sign_in():
    response = Client().get("/ru/settings", {"section": "memory-test"})
    assert response.status_code == 302
    assert response.url.startswith("/ru/login/")


@pytest.mark.parametrize("lang, title", [("ru", "Стенд памяти"), ("en", "Memory playground")])
@pytest.mark.django_db
def test_it_renders_in_both_languages(browser, lang, title):
    response = browser.get(f"/{lang}/settings", {"section": "memory-test"})
    assert response.status_code == 200
    assert title in response.content.decode()


@pytest.mark.django_db
def test_an_unknown_section_is_404(browser):
    assert browser.get("/ru/settings", {"section": "billing"}).status_code == 404


def _answer(response) -> dict:
    html = response.content.decode()
    start = html.index('<pre id="answer">') + len('<pre id="answer">')
    raw = html[start : html.index("</pre>", start)]
    import html as html_lib

    return json.loads(html_lib.unescape(raw))


@pytest.mark.django_db
def test_remember_then_recall_shows_the_raw_answer(browser, carol):
    stored = _answer(
        browser.post(
            "/ru/settings?section=memory-test",
            {"verb": "remember", "text": "У меня есть друг Дима"},
        )
    )
    assert stored["verb"] == "remember"
    recalled = _answer(
        browser.post(
            "/ru/settings?section=memory-test", {"verb": "recall", "text": "Кто мои друзья?"}
        )
    )
    assert recalled["kind"] == "affirmative"
    assert recalled["depth_used"] == 1
    carol.refresh_from_db()
    assert Note.objects.get().architect == carol.architect
    assert Run.objects.get(pk=recalled["run"]).channel == "playground"


@pytest.mark.django_db
def test_an_empty_phrase_shows_the_error_body(browser):
    response = browser.post("/en/settings?section=memory-test", {"verb": "recall", "text": "  "})
    assert response.status_code == 400
    assert _answer(response)["error"]["code"] == "text_required"
