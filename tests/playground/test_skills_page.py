"""The skills page: each skill's active version, its candidate, their figures side by side and
the history; staff open, edit and kill candidates (each a commit), nobody else edits; the
reference instruction is out of its reach."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from memory.agent import skills_repo
from memory.models import Run, ShadowCase, SkillCandidate
from memory.services.evolution import candidates

URL = "/en/settings/skills"


def _page(client: Client) -> str:
    response = client.get(URL)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


@pytest.mark.django_db
def test_everyone_signed_in_reads_it_and_only_staff_edit(browser, staff_browser):
    page = _page(browser)
    for name in skills_repo.active():
        assert f'id="skill-{name}"' in page
    assert "release: added" in page  # the history is read from the skills repository
    assert 'class="write-candidate"' not in page and "Only staff may edit." in page
    body = {"body": "Вторая версия.", "reason": "проба"}
    assert browser.post(f"{URL}/naming/candidate", body).status_code == 403
    assert browser.post(f"{URL}/naming/kill", {"reason": "x"}).status_code == 403
    assert skills_repo.candidate("naming") is None
    assert 'class="write-candidate"' in _page(staff_browser)
    assert Client().get(URL).status_code == 302  # signed out: to the sign-in page


@pytest.mark.django_db
def test_staff_open_edit_and_kill_a_candidate_each_one_commit(staff_browser, alice):
    commits = len(skills_repo.history())
    response = staff_browser.post(
        f"{URL}/use-tables/candidate", {"body": "Сначала каталог.", "reason": "слишком много ходов"}
    )
    assert response.status_code == 302
    first = SkillCandidate.objects.get(status="open")
    assert (first.opened_by, first.opened_why) == ("staff:sam", "слишком много ходов")
    assert skills_repo.candidate("use-tables").body == "Сначала каталог."

    staff_browser.post(
        f"{URL}/use-tables/candidate", {"body": "Каталог, потом таблица.", "reason": "уточнил"}
    )
    first.refresh_from_db()
    assert first.status == "replaced"  # its cases measured the old text
    second = SkillCandidate.objects.get(status="open")
    # Figures side by side: one shadow case done, its real run confirmed from outside.
    run = Run.objects.create(
        architect=alice, verb="recall", caller="t", channel="api", status="done",
        model_turns=2, model_seconds=1.5, verdict="confirm",
    )  # fmt: skip
    shadow = Run.objects.create(
        architect=alice, verb="recall", caller="t", channel="shadow", status="done",
        model_turns=1, model_seconds=0.5,
    )  # fmt: skip
    ShadowCase.objects.create(candidate=second, run=run, shadow=shadow, status="done", agrees=True)
    page = _page(staff_browser)
    card = page[page.index('id="skill-use-tables"') :]
    card = card[: card.index("</section>")]
    assert "Каталог, потом таблица." in card
    assert 'data-side="active" data-figure="confirmed">1<' in card
    assert 'data-side="candidate" data-figure="confirmed">1<' in card
    assert 'data-side="active" data-figure="turns">2.0<' in card
    assert 'data-side="candidate" data-figure="turns">1.0<' in card
    assert "cases: 1 · done: 1 · judged: 1 · failed: 0" in card

    assert staff_browser.post(f"{URL}/use-tables/kill", {"reason": ""}).status_code == 400
    assert staff_browser.post(f"{URL}/use-tables/kill", {"reason": "не нужен"}).status_code == 302
    second.refresh_from_db()
    assert (second.status, second.decided_why) == ("killed", "killed by staff:sam: не нужен")
    assert skills_repo.candidate("use-tables") is None
    assert len(skills_repo.history()) == commits + 3  # written, rewritten, killed
    page = _page(staff_browser)
    assert "killed by staff:sam: не нужен" in page  # the history of deaths, with why
    assert "candidate" in skills_repo.history("use-tables")[0].message


@pytest.mark.django_db
def test_no_skills_path_reaches_the_instruction_or_an_active_version(staff_browser, staff):
    from memory.services import instruction

    reference = instruction.reference_set(text="ЭТАЛОН.\n", user=staff).text
    live = skills_repo.instruction_path().read_text(encoding="utf-8")
    active = {n: s.body for n, s in skills_repo.active().items()}
    for name in ("MEMORY-AGENT.md", "MEMORY-AGENT", "..", "%2E%2E", "released.json"):
        for action in ("candidate", "kill"):
            response = staff_browser.post(
                f"{URL}/{name}/{action}", {"body": reference, "reason": "эталон"}
            )
            assert response.status_code in (400, 404), (name, action, response.status_code)
    staff_browser.post(f"{URL}/naming/candidate", {"body": reference, "reason": "эталон"})
    assert skills_repo.instruction_path().read_text(encoding="utf-8") == live
    assert {n: s.body for n, s in skills_repo.active().items()} == active
    assert instruction.reference().text == reference


@pytest.mark.django_db
def test_the_admin_lists_candidates_and_shadow_cases(staff, alice):
    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    candidates.write_candidate("naming", body="B", reason="r", author="staff:t")
    assert "naming" in client.get("/admin/memory/skillcandidate/").content.decode()
    assert client.get("/admin/memory/shadowcase/").status_code == 200
    response = client.post(
        "/admin/memory/skillcandidate/",
        {"action": "kill", "_selected_action": [SkillCandidate.objects.get().pk]},
    )
    assert response.status_code == 302
    assert SkillCandidate.objects.get().status == "killed"
    assert skills_repo.candidate("naming") is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("lang", "heading", "new_skill", "lines"),
    [
        ("ru", "Предложено агентом", "новый навык, читается рядом с use-tables",
         "новые строки инструкции (MEMORY-AGENT.md)"),
        ("en", "Proposed by the agent", "a new skill, read beside use-tables",
         "new instruction lines (MEMORY-AGENT.md)"),
    ],
)  # fmt: skip
def test_staff_see_what_the_agent_proposed_and_may_kill_it(
    staff_browser, lang, heading, new_skill, lines
):
    """A new skill and instruction lines the model proposed are candidates on the page, in the
    page's language, with their figures; staff kill one like any candidate (a commit). On main
    the page listed active skills only, and nothing could be proposed."""
    url = f"/{lang}/settings/skills"
    before = _page_at(staff_browser, url)
    assert heading in before and 'class="skill proposed"' not in before
    candidates.propose_skill(
        "проверка дат", beside="use-tables", description="Когда в вопросе есть дата.",
        body="Сверь дату вопроса с датой записи.", reason="ответы о прошлом", author="model",
    )  # fmt: skip
    candidates.propose_instruction("Даты — навык proverka-dat.", reason="даты", author="model")
    page = _page_at(staff_browser, url)
    card = page[page.index('id="proposed-proverka-dat"') :]
    card = card[: card.index("</section>")]
    assert new_skill in card and "Сверь дату вопроса с датой записи." in card
    assert "model" in card and "ответы о прошлом" in card
    assert 'data-side="candidate" data-figure="confirmed">0<' in card
    assert 'class="kill-candidate"' in card
    card = page[page.index('id="proposed-MEMORY-AGENT"') :]
    card = card[: card.index("</section>")]
    assert lines in card and "- Даты — навык proverka-dat." in card

    response = staff_browser.post(f"{url}/proverka-dat/kill", {"reason": "не нужен"})
    assert response.status_code == 302
    assert SkillCandidate.objects.get(skill="proverka-dat").status == "killed"
    assert "proverka-dat" not in skills_repo.proposed()
    assert 'id="proposed-proverka-dat"' not in _page_at(staff_browser, url)


def _page_at(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return html.unescape(response.content.decode())
