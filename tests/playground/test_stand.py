"""The stand, through Django's test client: the same services as the API, the raw answer shown."""

from __future__ import annotations

import dataclasses
import html as html_lib
import json
import re

import pytest
from django.test import Client

from memory.agent import skills_repo
from memory.contract import registry
from memory.contract.registry import Capability
from memory.i18n import Text
from memory.models import Note, Run, ShapeEntry
from memory.services import instruction

URL = "/{lang}/settings?section=memory-test"


def raw(response) -> dict:
    page = response.content.decode()
    start = page.index('<pre id="raw">') + len('<pre id="raw">')
    return json.loads(html_lib.unescape(page[start : page.index("</pre>", start)]))


def post(client: Client, lang: str = "ru", **fields) -> object:
    return client.post(URL.format(lang=lang), {"scope_cards": "1", **fields})


@pytest.mark.django_db
def test_it_requires_sign_in():
    response = Client().get("/ru/settings", {"section": "memory-test"})
    assert response.status_code == 302
    assert response.url.startswith("/ru/login/")


@pytest.mark.parametrize(
    "lang, title, advanced",
    [
        ("ru", "Стенд памяти", "Расширенные параметры"),
        ("en", "Memory playground", "Advanced parameters"),
    ],
)
@pytest.mark.django_db
def test_it_renders_in_both_languages(browser, lang, title, advanced):
    page = browser.get(URL.format(lang=lang)).content.decode()
    assert title in page and advanced in page
    for p in registry.PARAMS:
        if p.name not in ("text", "lang"):
            assert f'id="control-{p.name}"' in page, p.name
            assert p.label(lang) in page


@pytest.mark.django_db
def test_an_unknown_section_is_404(browser):
    assert browser.get("/ru/settings", {"section": "billing"}).status_code == 404


@pytest.mark.django_db
def test_remember_then_recall_shows_the_raw_answer_and_the_readable_view(browser, carol):
    stored = raw(post(browser, text="У меня есть друг Дима", verb="remember"))
    assert stored["verb"] == "remember"
    response = post(browser, text="Кто мои друзья?", verb="recall", trace="on")
    recalled = raw(response)
    assert recalled["kind"] == "affirmative"
    page = response.content.decode()
    assert 'id="answer-kind">affirmative<' in page
    assert 'id="answer-depth">1 — таблицы<' in page
    assert 'class="fate-accepted" data-param="trace"' in page
    assert '<details id="trace">' in page
    carol.refresh_from_db()
    assert Note.objects.get().architect == carol.architect
    assert Run.objects.get(pk=recalled["run"]).channel == "playground"


@pytest.mark.django_db
def test_a_parameter_of_the_other_verb_is_not_sent_and_the_page_says_so(browser):
    response = post(browser, lang="en", text="x", verb="remember", depth="deep")
    assert "depth" not in raw(response)["params"]
    assert (
        "Not sent with this verb (a parameter of the other verb): depth"
        in response.content.decode()
    )


@pytest.mark.django_db
def test_an_empty_phrase_shows_the_error_body(browser):
    response = post(browser, lang="en", text="  ", verb="recall")
    assert response.status_code == 400
    assert raw(response)["error"]["code"] == "text_required"


@pytest.mark.django_db
def test_the_folded_card_lists_every_value_that_is_set(browser):
    response = browser.post(
        "/en/settings/summary",
        {
            "depth": "deep",
            "trace": "on",
            "thread": "abc",
            "scope_cards": "1 2",
            "scope-1-kind": "geo",
            "scope-1-place": "madrid",
            "scope-2-kind": "calendar",
        },
    )
    summary = response.content.decode()
    assert "Depth: <strong>deep</strong> (recall only)" in summary
    assert "Trace: <strong>on</strong>" in summary
    assert "Thread: <strong>abc</strong> (remember only)" in summary
    assert "Scope: <strong>1 record(s)</strong>" in summary  # the empty second card is no scope
    nothing = browser.post("/en/settings/summary", {"scope_cards": "1"}).content.decode()
    assert "nothing set" in nothing


@pytest.mark.django_db
def test_a_broken_scope_card_is_named_by_its_number_and_empty_cards_are_not_sent(browser):
    response = post(
        browser,
        lang="en",
        text="Такси в Мадриде — Cabify",
        verb="remember",
        scope_cards=["1", "2", "3", "4"],  # one hidden field per card, as the page sends them
        **{
            "scope-1-kind": "geo",
            "scope-1-place": "madrid",
            "scope-2-kind": "calendar",  # empty: not sent
            "scope-3-kind": "geo",  # broken too: a place record with no place
            "scope-3-date": "2026-01-10",
            "scope-4-kind": "calendar",
            "scope-4-date": "2026-02-31",
        },
    )
    answer = raw(response)
    # A scope with a bad record refuses the whole remember: nothing is stored unscoped.
    assert response.status_code == 400
    assert answer["error"]["code"] == "bad_scope"
    assert answer["error"]["params"]["scope"]["fate"] == "bad_form"
    assert answer["error"]["params"]["scope"]["indexes"] == [1, 2]  # the 2nd and 3rd records…
    assert not Note.objects.exists()
    page = response.content.decode()
    for card in (3, 4):  # …are cards 3 and 4
        block = re.search(rf'<div class="card error" id="scope-card-{card}".*?</div>', page, re.S)
        assert block and f"Card {card}: record #2 (index 1)" in block.group(0)
    assert 'class="card error" id="scope-card-1"' not in page
    assert (
        '<details id="advanced" open>' in page
    )  # a card's refusal is never hidden in a folded block


@pytest.mark.django_db
def test_upload_buttons_are_inactive_and_say_why(browser):
    page = browser.get(URL.format(lang="en")).content.decode()
    reason = registry.param("uploads").status("remember").reason.en
    for kind in ("text", "image", "video", "audio", "document"):
        block = re.search(rf'<div class="upload" id="upload-{kind}">(.*?)</div>', page, re.S).group(
            1
        )
        assert "disabled" in block
        assert f"Inactive: {html_lib.escape(reason)}" in block


@pytest.mark.django_db
def test_a_badge_follows_the_registry_with_no_template_edit(browser, monkeypatch):
    trace = registry.param("trace")
    page = browser.get(URL.format(lang="en")).content.decode()
    assert 'data-verb="recall">recall: reaches the service<' in _control(page, "trace")
    blocked = Capability("not_supported", Text(ru="тест", en="switched off for this test"))
    changed = dataclasses.replace(trace, capability=lambda verb: blocked)
    monkeypatch.setattr(
        registry, "PARAMS", tuple(changed if p is trace else p for p in registry.PARAMS)
    )
    monkeypatch.setitem(registry._BY_NAME, "trace", changed)
    page = browser.get(URL.format(lang="en")).content.decode()
    block = _control(page, "trace")
    assert 'data-verb="recall">recall: not supported<' in block
    assert "recall: switched off for this test" in block


def _control(page: str, name: str) -> str:
    return re.search(
        rf'<div class="control" id="control-{name}".*?</div>\s*</div>', page, re.S
    ).group(0)


@pytest.mark.django_db
def test_staff_see_the_reset_and_others_do_not(browser, staff_browser):
    assert 'id="instruction"' in staff_browser.get(URL.format(lang="ru")).content.decode()
    assert 'id="instruction"' not in browser.get(URL.format(lang="ru")).content.decode()
    assert browser.post("/ru/settings/instruction/reset", {"confirm": "yes"}).status_code == 403
    assert browser.get("/ru/settings/instruction/diff").status_code == 403


@pytest.mark.django_db
def test_reset_returns_the_instruction_and_touches_nothing_else(staff_browser, alice_api, settings):
    reference = instruction.reference().text
    alice_api.remember("У меня есть друг Дима")
    notes, runs, entries = Note.objects.count(), Run.objects.count(), ShapeEntry.objects.count()
    skills_before = {p: p.read_text() for p in skills_repo.ensure().glob("*/*.md")}
    assert len(skills_before) >= 5
    path = skills_repo.instruction_path()
    path.write_text(reference + "- Отвечай стихами.\n", encoding="utf-8")

    page = staff_browser.get(URL.format(lang="en")).content.decode()
    assert "Difference from the reference: +1 / −0 lines" in page
    diff = staff_browser.get("/en/settings/instruction/diff").content.decode()
    assert "+- Отвечай стихами." in html_lib.unescape(diff)
    assert (
        staff_browser.post("/en/settings/instruction/reset", {}).status_code == 400
    )  # unconfirmed
    response = staff_browser.post("/en/settings/instruction/reset", {"confirm": "yes"})
    assert response.status_code == 302
    assert path.read_text(encoding="utf-8") == reference
    assert (Note.objects.count(), Run.objects.count(), ShapeEntry.objects.count()) == (
        notes,
        runs,
        entries,
    )
    assert {p: p.read_text() for p in skills_repo.root().glob("*/*.md")} == skills_before
    # The reset is one commit of the instruction alone, by the staff member who pressed it.
    last = skills_repo.history(limit=1)[0]
    assert last.message == "instruction: reset to the reference instruction"
    assert last.author.startswith("staff:")
    assert (
        "The instruction equals the reference."
        in staff_browser.get(URL.format(lang="en")).content.decode()
    )


@pytest.mark.django_db
def test_only_staff_can_change_the_reference(carol, staff):
    with pytest.raises(instruction.NotStaff):
        instruction.reference_set(text="x", user=carol)
    assert instruction.reference_set(text="новый эталон", user=staff).text == "новый эталон"
    assert instruction.reference().text == "новый эталон"


def test_no_tool_and_no_view_but_the_staff_reset_writes_the_reference(
    grown, browser, carol, staff, settings
):
    """Every agent tool and every stand path a non-staff user has is run with the reference's
    text and name as its input; neither the instruction file nor the stored references change.
    (The earlier check read the tools' code for a name, and could not see a call by another.)"""
    from memory.agent import tools
    from memory.models import InstructionReference

    reference = instruction.reference_set(text="ЭТАЛОН: отвечай одним словом.\n", user=staff).text
    path = skills_repo.instruction_path()
    current = path.read_text(encoding="utf-8")
    assert current != reference
    references = list(InstructionReference.objects.order_by("pk").values_list("pk", "text"))
    arguments = {
        "write_value": {"kind": "инструкция", "value": reference},
        "make_new_kind": {"kind": "инструкция памяти", "value": reference},
        "promote_to_list": {"kind": "эталоны", "items": [{"value": reference}]},
        "read_catalog": {},
        "read_table": {"table": "root"},
        "ask_graph": {"question": f"{reference} MEMORY-AGENT.md"},
        "find_notes": {"words": f"{reference} MEMORY-AGENT.md"},
        "keep_object": {
            "name": "MEMORY-AGENT.md",
            "media_type": "text/markdown",
            "content": reference,
            "summary": "эталон инструкции",
        },
        "write_candidate": {"skill": "MEMORY-AGENT.md", "body": reference, "reason": "эталон"},
        "propose_skill": {
            "name": "MEMORY-AGENT.md",
            "beside": "naming",
            "description": "эталон",
            "body": reference,
            "reason": "эталон",
        },
        # Lines proposed for the instruction are a candidate of it, never the live file.
        "propose_instruction": {"lines": reference, "reason": "эталон"},
    }
    assert set(arguments) == {t.name for t in tools.TOOLS}  # a new tool is exercised here too
    active = {n: s.body for n, s in skills_repo.active().items()}
    run = Run.objects.create(architect=carol.architect, verb="remember", caller="t", channel="api")
    # The evolution's own run may write candidates: it too is tried on every skill name and on
    # the instruction's, and reaches neither the instruction nor an active version.
    evolve = Run.objects.create(
        architect=carol.architect, verb="evolve", caller="t", channel="shadow"
    )
    targets = ["MEMORY-AGENT.md", "MEMORY-AGENT", "../MEMORY-AGENT.md", ".", "", *active]
    for each in (run, evolve):
        with tools.bound(tools.Tenant(architect=carol.architect, run=each)):
            for name, given in arguments.items():
                key = {"write_candidate": "skill", "propose_skill": "name"}.get(name)
                for skill in targets if key else [None]:
                    try:
                        tools.call(name, {**given, key: skill} if key else given)
                    except tools.ToolRefused:
                        pass  # a refusal is recorded, and writes nothing either
        assert {c.tool for c in each.tool_calls.all()} == set(arguments)  # each one really ran
    assert {n: s.body for n, s in skills_repo.active().items()} == active
    assert skills_repo.candidate("naming").body == reference.strip()  # it did write, beside

    for verb in ("remember", "recall"):
        post(browser, text=reference, verb=verb)
    browser.post("/ru/settings/summary", {"scope_cards": "1", "thread": reference})
    browser.post("/ru/settings/probe/graph", {"question": reference})
    browser.post("/ru/settings/probe/vectors", {"question": reference, "kind": "notes"})
    assert browser.post("/ru/settings/instruction/reset", {"confirm": "yes"}).status_code == 403

    assert path.read_text(encoding="utf-8") == current
    assert list(InstructionReference.objects.order_by("pk").values_list("pk", "text")) == references
    # The one path that does write it, so the check above can fail.
    staff_client = Client()
    staff_client.force_login(staff)
    staff_client.post("/ru/settings/instruction/reset", {"confirm": "yes"})
    assert path.read_text(encoding="utf-8") == reference


@pytest.mark.django_db
def test_the_progress_partial_shows_a_runs_state(browser, carol):
    answer = raw(post(browser, text="x", verb="recall"))
    fragment = browser.get(f"/ru/settings/runs/{answer['run']}/progress").content.decode()
    assert 'data-status="done"' in fragment
    assert "hx-trigger" not in fragment  # a finished run is not polled


@pytest.mark.django_db
def test_the_progress_partial_shows_a_research_live_until_it_ends(browser, carol):
    from memory.models import Research, Run

    answer = raw(post(browser, text="x", verb="recall"))
    run = Run.objects.get(pk=answer["run"])
    research = Research.objects.create(
        run=run,
        architect=carol.architect,
        question="x",
        lang="ru",
        status="running",
        progress={
            "entities": ["Денис"],
            "terms": ["Кремль"],
            "model_turns": 1,
            "seconds": 2.5,
            "steps": [{"step": "tables", "label": "сущности из таблиц"}],
        },
    )
    url = f"/ru/settings/runs/{run.pk}/progress"
    fragment = browser.get(url).content.decode()
    assert 'id="research" data-status="running"' in fragment
    assert "Денис" in fragment and "Кремль" in fragment and "сущности из таблиц" in fragment
    assert 'hx-trigger="every 1s"' in fragment  # polled while the job runs
    Research.objects.filter(pk=research.pk).update(status="done", answer={"text": "Итог."})
    fragment = browser.get(url).content.decode()
    assert 'data-status="done"' in fragment and "Итог." in fragment
    assert "hx-trigger" not in fragment


@pytest.mark.django_db
def test_the_probe_asks_the_stores_this_process_owns_and_the_secret_stays_on_the_server(
    browser, carol, settings
):
    from memory.stores.graph import graph
    from memory.stores.graph_types import Chunk, Entity, Relation

    settings.MEMORY_INTERNAL_URL = ""  # the owner needs no door to ask its own stores
    chunk = Chunk(id="note-1", content="Мой друг Денис служил в Кремле с 1992 по 1994 год.")
    graph().insert(
        architect_id=carol.architect.pk,
        chunks=[chunk],
        entities=[Entity("Денис", "person", source=chunk.id), Entity("Кремль", source=chunk.id)],
        relations=[Relation("Денис", "Кремль", "служил с 1992 по 1994", "служба", chunk.id)],
    )
    found = json.loads(
        html_lib.unescape(
            re.search(
                r'<pre id="probe-json">(.*?)</pre>',
                browser.post(
                    "/en/settings/probe/graph", {"question": "Где служил Денис?"}
                ).content.decode(),
                re.S,
            ).group(1)
        )
    )
    assert found["engine"] == "lightrag-local"
    assert found["sent"]["architect"] == carol.architect.pk
    assert found["sent"]["hl_keywords"] and found["sent"]["ll_keywords"]
    assert "Денис" in {e["name"] for e in found["answer"]["entities"]}
    vectors = html_lib.unescape(
        browser.post(
            "/en/settings/probe/vectors", {"question": "друг", "kind": "notes"}
        ).content.decode()
    )
    assert '"engine": "qdrant-local"' in vectors and '"hits": []' in vectors
    bad_kind = html_lib.unescape(
        browser.post("/en/settings/probe/vectors", {"question": "x", "kind": "x"}).content.decode()
    )
    assert '"code": "bad_form"' in bad_kind
    for page in (vectors, bad_kind, browser.get(URL.format(lang="en")).content.decode()):
        assert settings.MACHINE_SECRET not in page
