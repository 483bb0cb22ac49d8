"""The passport on a page: PASSPORT.md rendered for a human (headings, tables, code), linked from
the stand and the skills page, in either language's chrome; raw HTML in it is never rendered."""

from __future__ import annotations

import pytest
from django.test import Client

from playground import views

URL = "/{lang}/settings/passport"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("lang", "lead"), [("ru", "Как память построена"), ("en", "How the memory")]
)
def test_the_passport_reads_as_a_page_in_either_chrome(browser, lang, lead):
    page = browser.get(URL.format(lang=lang)).content.decode()
    assert lead in page
    assert "<h1>Паспорт памяти — как она построена</h1>" in page
    assert "<h2>19. Устройство кода: слои и одно направление импортов</h2>" in page
    assert "<table>" in page and "<th>" in page  # its tables are tables
    assert "<code>memory/apps.py</code>" in page  # its code is code


@pytest.mark.django_db
def test_the_stand_and_the_skills_page_link_to_it_and_strangers_sign_in_first(browser):
    for path in ("/en/settings?section=memory-test", "/en/settings/skills"):
        assert (
            'id="passport-link" href="/en/settings/passport"' in browser.get(path).content.decode()
        )
    assert Client().get(URL.format(lang="en")).status_code == 302


@pytest.mark.django_db
def test_html_in_the_markdown_is_shown_not_run(browser, tmp_path, monkeypatch):
    fake = tmp_path / "PASSPORT.md"
    fake.write_text("# Т\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    monkeypatch.setattr(views, "PASSPORT", fake)
    page = browser.get(URL.format(lang="ru")).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<td>1</td>" in page
