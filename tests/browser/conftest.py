"""A real Chromium (Debian's, driven by Playwright) against pytest-django's live server.

Playwright's own browser download needs the internet, so the tests launch /usr/bin/chromium by
path and skip, saying so, when it is missing. Each test gets a fresh browser context (no
cookies carried over) and signs in through the real login form.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.models import Architect, User

CHROMIUM = Path("/usr/bin/chromium")
NO_CHROMIUM = "Debian chromium not installed: apt-get install chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    # This network is closed: without these Chromium keeps dialling out and its refused
    # connections slow it down or stall it.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
REPO = Path(__file__).resolve().parents[2]
STAND = "/{lang}/settings?section=memory-test"
TITLE = {"ru": "Стенд памяти", "en": "Memory playground"}

# Screenshots written in this session; the terminal summary names their folder.
WRITTEN: list[Path] = []


def screenshots_dir() -> Path:
    folder = os.environ.get("MEMORY_SCREENSHOTS_DIR") or REPO / "var" / "screenshots"
    return Path(folder).resolve()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if WRITTEN:
        terminalreporter.write_line(f"screenshots: {screenshots_dir()}")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium per module, stopped when the module ends.

    Playwright's sync API runs an asyncio loop in the test thread (on a greenlet), so while it
    is alive Django sees a running event loop and refuses ORM calls made by the test itself
    (creating users, the transactional flush) with SynchronousOnlyOperation. Nothing here is
    async: the ORM calls run in the test thread, never inside that loop, so the guard is lifted
    for exactly as long as Playwright lives, and restored after — the browser is module-scoped,
    not session-scoped, so the rest of the suite never runs beside a live loop or without the
    guard.
    """
    if not CHROMIUM.exists():
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright not installed: pip install -e '.[dev]'"
    )
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_api.sync_playwright().start()
    # The first remember in a process loads the language models: seconds, not milliseconds.
    sync_api.expect.set_options(timeout=30_000)
    try:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()
        sync_api.expect.set_options(timeout=5_000)  # Playwright's default again
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def base_url(live_server: Any, settings: Any) -> str:
    # The stand's probes call the internal door over HTTP: point them at this live server.
    settings.MEMORY_INTERNAL_URL = live_server.url
    return live_server.url


@pytest.fixture
def page(chromium: Any, base_url: str) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, locale="ru-RU")
    context.set_default_timeout(30_000)
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture
def walker(base_url: str) -> User:
    """An ordinary user, a member of their own architect "walker"."""
    architect = Architect.objects.create(name="walker")
    return User.objects.create_user("walker", password="walker-password-1", architect=architect)


@pytest.fixture
def keeper(base_url: str) -> User:
    """A staff user: sees the instruction reset."""
    return User.objects.create_user("keeper", password="keeper-password-1", is_staff=True)


def sign_in_on(tab: Any, base_url: str, user: User, password: str, lang: str = "ru") -> Any:
    """Open the stand, get sent to the login form, fill it in, land back on the stand."""
    from playwright.sync_api import expect

    tab.goto(base_url + STAND.format(lang=lang))
    expect(tab).to_have_url(re.compile(rf"/{lang}/login/\?next="))
    tab.fill("#id_username", user.username)
    tab.fill("#id_password", password)
    tab.click("form button[type=submit]")
    expect(tab).to_have_url(re.compile(rf"/{lang}/settings\?section=memory-test$"))
    expect(tab.locator("h1")).to_have_text(TITLE[lang])
    return tab


@pytest.fixture
def sign_in(page: Any, base_url: str) -> Callable[..., Any]:
    def go(user: User, password: str, lang: str = "ru") -> Any:
        return sign_in_on(page, base_url, user, password, lang)

    return go


@pytest.fixture
def shoot() -> Callable[..., Path]:
    """Save a full-page PNG of the stand into the screenshots folder (``full_page=False``: what
    the window shows, for a page as long as the passport, whose whole was a 15 MB PNG that took
    seconds to encode)."""

    def save(tab: Any, name: str, full_page: bool = True) -> Path:
        folder = screenshots_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        tab.screenshot(path=str(path), full_page=full_page)
        WRITTEN.append(path)
        return path

    return save
