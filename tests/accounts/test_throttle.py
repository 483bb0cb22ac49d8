"""Sign-in is throttled by django-axes per username + IP; the memory's API (Bearer keys) is not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

LOCKED = {
    "ru": "Слишком много неудачных попыток входа",
    "en": "Too many failed sign-in attempts",
}


def sign_in(client: Client, url: str, username: str, password: str, **extra: str):
    return client.post(url, {"username": username, "password": password}, **extra)


def signed_in_as(client: Client) -> str | None:
    return client.session.get("_auth_user_id")


def lock(url: str, username: str, **extra: str) -> Client:
    """Fail AXES_FAILURE_LIMIT times: the last failure already answers with the lockout page."""
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    for attempt in range(1, limit + 1):
        response = sign_in(client, url, username, f"wrong-{attempt}", **extra)
        assert response.status_code == (429 if attempt == limit else 200), attempt
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_wrong_passwords_lock_the_login_even_for_the_right_password(carol, lang):
    url = f"/{lang}/login/"
    client = lock(url, "carol")
    response = sign_in(client, url, "carol", "carol-password")
    assert response.status_code == 429
    page = response.content.decode()
    assert LOCKED[lang] in page and "<h1>" in page  # a page, in the page's language
    assert response["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    assert signed_in_as(client) is None
    assert "sessionid" not in response.cookies


@pytest.mark.django_db
def test_the_lock_is_for_the_username_from_that_address_only(carol, staff):
    lock("/ru/login/", "carol")
    # The same person from another address, and another person from the same address, pass.
    elsewhere = Client(REMOTE_ADDR="10.0.0.2")
    assert sign_in(elsewhere, "/ru/login/", "carol", "carol-password").status_code == 302
    assert signed_in_as(elsewhere) == str(carol.pk)
    neighbour = Client()
    assert sign_in(neighbour, "/ru/login/", "sam", "sam-password").status_code == 302
    assert signed_in_as(neighbour) == str(staff.pk)


@pytest.mark.django_db
def test_the_lock_lifts_after_the_cool_off(carol):
    client = lock("/ru/login/", "carol")
    assert sign_in(client, "/ru/login/", "carol", "carol-password").status_code == 429
    past = timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(minutes=1)
    AccessAttempt.objects.update(attempt_time=past)
    assert sign_in(client, "/ru/login/", "carol", "carol-password").status_code == 302
    assert signed_in_as(client) == str(carol.pk)


@pytest.mark.django_db
def test_a_successful_sign_in_resets_the_count(carol):
    client = Client()
    for _ in range(2):
        for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
            assert sign_in(client, "/ru/login/", "carol", f"wrong-{attempt}").status_code == 200
        assert sign_in(client, "/ru/login/", "carol", "carol-password").status_code == 302
        client.logout()


@pytest.mark.django_db
def test_the_admin_login_is_throttled_too(staff):
    url = "/admin/login/?next=/admin/"
    client = lock(url, "sam")
    response = sign_in(client, url, "sam", "sam-password")
    assert response.status_code == 429
    assert LOCKED["ru"] in response.content.decode()
    assert signed_in_as(client) is None
    assert client.get("/admin/").status_code == 302  # still sent to the login


@pytest.mark.django_db
def test_the_memory_api_is_not_throttled(carol, alice_api):
    lock("/ru/login/", "carol")  # this address now has a locked sign-in
    attempts = AccessAttempt.objects.count()
    stranger = APIClient()
    for n in range(settings.AXES_FAILURE_LIMIT * 2):
        stranger.credentials(HTTP_AUTHORIZATION=f"Bearer mem_{n:012x}_forged")
        response = stranger.post("/api/v1/recall", {"text": "друзья"}, format="json")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "bad_key"
    assert AccessAttempt.objects.count() == attempts  # a bad key is no sign-in attempt
    assert alice_api.recall("Кто мои друзья?")["verb"] == "recall"  # a good key answers 200
