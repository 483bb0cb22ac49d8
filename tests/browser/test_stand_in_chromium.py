"""The Memory playground in a real Chromium: folding, scope cards, uploads, answers, staff.

The Django-test-client tests (tests/playground) prove what the server renders; these prove
what a person sees and does: htmx swaps really happen, a folded block really hides its
controls and its summary really shows the set values, reasons are on screen, not in tooltips.
"""

from __future__ import annotations

import json

import pytest

from memory.agent import skills_repo
from memory.services import instruction
from tests.browser.conftest import sign_in_on

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright not installed: pip install -e '.[dev]'"
)
expect = sync_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

UPLOAD_KINDS = ("text", "image", "video", "audio", "document")
WORDS = {
    "ru": {
        "advanced": "Расширенные параметры",
        "nothing": "ничего не выставлено",
        "depth": "Глубина: deep (только recall)",
        "trace": "Цепочка поиска: вкл",
        "scope": "Охват: записей: {n}",
        "card": "Карточка {n}",
        "inactive": "Кнопка неактивна:",
    },
    "en": {
        "advanced": "Advanced parameters",
        "nothing": "nothing set",
        "depth": "Depth: deep (recall only)",
        "trace": "Trace: on",
        "scope": "Scope: {n} record(s)",
        "card": "Card {n}",
        "inactive": "Inactive:",
    },
}


def is_open(page, selector: str = "#advanced") -> bool:
    return page.eval_on_selector(selector, "el => el.open")


def raw(page) -> dict:
    return json.loads(page.locator("#raw").text_content())


def sent(page) -> dict:
    """The request body the stand sent (the 'Sent' block under the answer)."""
    return json.loads(page.locator("#readable > details:not(#trace) pre").text_content())


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_stand_renders_in_both_languages(page, sign_in, walker, shoot, lang):
    sign_in(walker, "walker-password-1", lang)
    assert page.title() == {"ru": "Стенд памяти", "en": "Memory playground"}[lang]
    assert page.get_attribute("html", "lang") == lang
    summary = page.locator("#advanced > summary")
    expect(summary).to_contain_text(WORDS[lang]["advanced"])
    expect(summary).to_contain_text(WORDS[lang]["nothing"])
    assert not is_open(page)
    expect(page.locator("#control-depth")).to_be_hidden()
    shoot(page, f"stand-{lang}-folded.png")

    summary.click()
    assert is_open(page)
    controls = page.locator("#controls > .control")
    assert controls.count() >= 9
    for i in range(controls.count()):
        expect(controls.nth(i)).to_be_visible()
    expect(page.locator("#control-trace .badge").first).to_be_visible()
    shoot(page, f"stand-{lang}-unfolded.png")

    other = "en" if lang == "ru" else "ru"
    page.click(f"header nav a[hreflang={other}]")
    expect(page.locator("h1")).to_have_text(
        {"ru": "Стенд памяти", "en": "Memory playground"}[other]
    )


def test_the_folded_block_lists_what_is_set(page, sign_in, walker):
    sign_in(walker, "walker-password-1", "en")
    advanced = page.locator("#advanced")
    summary_line = page.locator("#advanced-summary")
    assert not is_open(page), "the advanced block is folded by default"
    expect(summary_line).to_have_text("nothing set")

    page.click("#advanced > summary")
    assert is_open(page)
    page.check("#control-depth input[name=depth][value=deep]")
    expect(summary_line).to_contain_text(WORDS["en"]["depth"])
    page.check("#control-trace input[name=trace]")
    expect(summary_line).to_contain_text(WORDS["en"]["trace"])
    page.select_option("#scope-card-1 select", "geo")
    page.fill("#scope-card-1 input[name=scope-1-place]", "madrid")
    expect(summary_line).to_contain_text(WORDS["en"]["scope"].format(n=1))

    page.click("#advanced > summary")
    assert not is_open(page)
    expect(advanced.locator("#control-depth")).to_be_hidden()
    for value in ("depth", "trace"):
        expect(summary_line).to_contain_text(WORDS["en"][value])
    expect(summary_line).to_contain_text(WORDS["en"]["scope"].format(n=1))
    expect(summary_line).to_be_visible()
    items = page.locator("#set-values > li")
    expect(items).to_have_count(3)
    for i in range(3):
        expect(items.nth(i)).to_be_visible()


# The page sends one hidden ``scope_cards`` input per card; ``playground.forms.read`` takes
# ``post.get("scope_cards")``, i.e. only the LAST card's number, so every other card is dropped
# (from the summary, from what is sent, and from the re-rendered form). The test-client tests
# post the numbers space-joined in one field, which hides it. Strict: it fails once fixed.
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_broken_scope_card_is_named_by_its_number_and_an_empty_card_is_not_sent(
    page, sign_in, walker, lang
):
    sign_in(walker, "walker-password-1", lang)
    page.fill("#text", "Такси в Мадриде — Cabify")
    page.click("#advanced > summary")

    # Card 1: a place. Card 2: left empty. Card 3: a real day. Card 4: 31 February.
    page.select_option("#scope-card-1 select", "geo")
    page.fill("input[name=scope-1-place]", "madrid")
    for number in (2, 3, 4, 5):
        page.click("#add-record")
        expect(page.locator(f"#scope-card-{number}")).to_contain_text(
            WORDS[lang]["card"].format(n=number)
        )
    page.fill("input[name=scope-3-date]", "2026-01-10")
    page.fill("input[name=scope-4-date]", "2026-02-31")
    page.fill("input[name=scope-5-place]", "lisbon")
    page.click("#scope-card-5 .card-remove")  # a removed card is gone, not sent
    expect(page.locator("#scope-card-5")).to_have_count(0)
    # A summary swap takes milliseconds; no need to wait out the cold-start timeout here.
    expect(page.locator("#advanced-summary")).to_contain_text(
        WORDS[lang]["scope"].format(n=3), timeout=10_000
    )

    page.click("#remember")
    broken = page.locator("#scope-card-4 .error-text")
    expect(broken).to_contain_text(WORDS[lang]["card"].format(n=4) + ":")
    expect(page.locator("#fates li[data-param=scope]")).to_contain_text("bad_form")

    answer = raw(page)
    # The whole remember is refused (nothing is stored unscoped), and the refusal is shown.
    assert answer["error"]["code"] == "bad_scope"
    assert answer["error"]["params"]["scope"]["fate"] == "bad_form"
    assert answer["error"]["params"]["scope"]["index"] == 2  # the third record sent is card 4
    assert sent(page)["scope"] == [
        {"kind": "geo", "place": "madrid"},
        {"kind": "calendar", "date": "2026-01-10"},
        {"kind": "calendar", "date": "2026-02-31"},
    ]  # card 2 (empty) and card 5 (removed) were not sent
    # The class comes with the swapped-in page: wait for it as Playwright does for text.
    expect(page.locator("#scope-card-4")).to_have_class("card error")
    for number in (1, 2, 3):
        assert "error" not in page.get_attribute(f"#scope-card-{number}", "class").split()
        expect(page.locator(f"#scope-card-{number} .error-text")).to_have_count(0)
    expect(page.locator("#scope-card-5")).to_have_count(0)

    # A card's refusal is never hidden in a folded block: the block comes back open.
    assert is_open(page)
    expect(broken).to_be_visible()


def test_upload_buttons_are_disabled_and_say_why_on_screen(page, sign_in, walker):
    sign_in(walker, "walker-password-1", "en")
    page.click("#advanced > summary")
    uploads = page.locator("#control-uploads")
    uploads.scroll_into_view_if_needed()
    expect(uploads.locator(".upload")).to_have_count(len(UPLOAD_KINDS))
    for kind in UPLOAD_KINDS:
        button = page.locator(f"#upload-{kind} button")
        reason = page.locator(f"#upload-{kind} .reason")
        expect(button).to_be_disabled()
        assert button.get_attribute("aria-disabled") == "true"
        assert reason.is_visible(), kind
        expect(reason).to_contain_text(WORDS["en"]["inactive"])
        box = reason.bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0, kind


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_remember_then_recall_shows_the_answer(page, sign_in, walker, shoot, lang):
    sign_in(walker, "walker-password-1", lang)
    page.fill("#text", "У меня есть друг Дима")
    page.click("#remember")
    expect(page.locator("#raw")).to_contain_text('"verb": "remember"')

    page.fill("#text", "Кто мои друзья?")
    page.click("#recall")
    expect(page.locator("#answer-kind")).to_have_text("affirmative")
    expect(page.locator("#raw")).to_contain_text('"depth_used": 1')
    answer = raw(page)
    assert answer["verb"] == "recall" and answer["kind"] == "affirmative"
    expect(page.locator("#answer-depth")).to_contain_text("1 — ")
    expect(page.locator("#fates")).to_be_attached()
    expect(page.locator("#report")).to_be_visible()
    shoot(page, f"stand-{lang}-answer.png")


def test_staff_see_the_instruction_reset_and_others_do_not(
    page, sign_in, walker, keeper, settings, chromium, base_url
):
    reference = instruction.reference().text
    settings_path = skills_repo.instruction_path()
    settings_path.write_text(reference + "- Отвечай стихами.\n", encoding="utf-8")

    sign_in(keeper, "keeper-password-1", "en")
    section = page.locator("#instruction")
    expect(section).to_be_visible()
    expect(page.locator("#difference")).to_contain_text("+1 / −0 lines")
    expect(page.locator("#reset")).to_be_visible()
    page.check("#instruction input[name=confirm]")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#reset")  # htmx asks to confirm, the server answers with a refresh
    expect(page.locator("#difference")).to_have_text("The instruction equals the reference.")
    expect(page.locator("#reset")).to_have_count(0)
    assert settings_path.read_text(encoding="utf-8") == reference

    other = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = sign_in_on(other.new_page(), base_url, walker, "walker-password-1", "en")
        expect(tab.locator("h1")).to_have_text("Memory playground")
        expect(tab.locator("#instruction")).to_have_count(0)
        expect(tab.locator("#reset")).to_have_count(0)
    finally:
        other.close()


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_passport_is_a_page_reached_from_the_stand(page, sign_in, walker, shoot, lang):
    sign_in(walker, "walker-password-1", lang)
    page.click("#passport-link")
    expect(page).to_have_url(f"{page.url.split('/settings')[0]}/settings/passport")
    assert page.get_attribute("html", "lang") == lang
    article = page.locator("#passport")
    expect(article.locator("h1")).to_have_text("Паспорт памяти — как она построена")
    expect(article.locator("h2").first).to_be_visible()
    assert article.locator("table").count() >= 1 and article.locator("code").count() > 10
    lead = {"ru": "Как память построена", "en": "How the memory is built"}[lang]
    expect(page.locator("#passport-page > p.help")).to_contain_text(lead)
    shoot(page, f"passport-{lang}.png", full_page=False)


def test_a_conclusion_is_denied_in_one_click_with_the_humans_words(
    page, sign_in, walker, shoot, settings
):
    settings.RELEARN_FROM_LEVEL = 3  # a level-3 conclusion kept, as a level-4 one is by default
    # The graph joins two facts (level 3), the relearning cycle keeps the conclusion; the stand
    # offers to deny it beside the answer, fills deny with its run and asks for the words.
    sign_in(walker, "walker-password-1", "ru")
    for fact in (
        "Мой брат Антон работает хирургом в областной больнице.",
        "Моя дочь Вера учится играть на виолончели.",
    ):
        before = page.locator("#answer-run").all_text_contents()
        page.fill("#text", fact)
        page.click("#remember")
        # the swap is done when the answer names a new run
        expect(page.locator("#answer-run")).not_to_have_text(before[0] if before else "")
    page.fill("#text", "Где работает Антон и на чём учится играть Вера?")
    page.click("#recall")
    expect(page.locator("#answer-depth")).to_contain_text("3 — ")
    run = raw(page)["run"]
    assert raw(page)["relearned"]["summary"]

    page.click("#deny-conclusion")
    expect(page.locator("#control-deny textarea")).to_have_value(run)
    assert page.eval_on_selector("#text", "el => el.placeholder").startswith("Ваши слова")
    assert page.eval_on_selector("#text", "el => document.activeElement === el")
    page.fill("#text", "Вера давно бросила виолончель, теперь она учится на флейте.")
    page.click("#remember")
    expect(page.locator("#raw")).to_contain_text('"verb": "remember"')
    expect(page.locator('#fates li[data-param="deny"]')).to_contain_text("accepted")
    shoot(page, "stand-deny-conclusion.png")
