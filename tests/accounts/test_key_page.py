"""A new memory key is shown once, on the page answering the POST that made it, and nowhere else."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.sessions.models import Session
from django.test import Client
from rest_framework.test import APIClient

from memory.models import ApiKey, Architect


@pytest.fixture
def admin_client(staff) -> Client:
    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    return client


@pytest.mark.django_db
def test_the_admin_shows_a_new_key_once_and_keeps_it_nowhere(admin_client):
    architect = Architect.objects.create(name="gil")
    response = admin_client.post(
        "/admin/memory/apikey/add/",
        {"architect": architect.pk, "name": "bot", "max_depth": "standard"},
    )
    # The page is the answer to the POST itself: no redirect that would have to carry the key.
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    body = response.content.decode()
    key = ApiKey.objects.get()
    plaintext = re.search(r'<pre id="new-key"[^>]*>(mem_[^<]+)</pre>', body).group(1)
    assert ApiKey.find(plaintext) == key
    assert body.count(plaintext) == 1
    secret = plaintext.split("_", 2)[2]  # mem_<lookup>_<secret>; the secret may hold "_" itself
    assert body.count(secret) == 1

    # Not in any cookie (the messages cookie included), the session or the admin's log.
    for jar in (response.cookies, admin_client.cookies):
        for morsel in jar.values():
            assert secret not in morsel.value and secret not in morsel.OutputString()
    assert "messages" not in response.cookies
    for session in Session.objects.all():
        assert secret not in str(session.get_decoded())
    assert all(secret not in f"{e.object_repr} {e.change_message}" for e in LogEntry.objects.all())

    # It opens the contract.
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert http.post("/api/v1/recall", {"text": "x"}, format="json").status_code == 200

    # Gone after this answer: the key's page, the list and the next page show only its lookup.
    for url in (
        f"/admin/memory/apikey/{key.pk}/change/",
        "/admin/memory/apikey/",
        "/admin/",
    ):
        page = admin_client.get(url)
        assert page.status_code == 200
        assert secret not in page.content.decode(), url
    assert key.lookup in admin_client.get(f"/admin/memory/apikey/{key.pk}/change/").content.decode()


@pytest.mark.django_db
def test_changing_a_key_shows_no_key_and_keeps_the_secret(admin_client):
    architect = Architect.objects.create(name="gil")
    admin_client.post(
        "/admin/memory/apikey/add/",
        {"architect": architect.pk, "name": "bot", "max_depth": "standard"},
    )
    key = ApiKey.objects.get()
    digest = key.digest
    response = admin_client.post(
        f"/admin/memory/apikey/{key.pk}/change/",
        {"architect": architect.pk, "name": "renamed", "max_depth": "deep"},
    )
    assert response.status_code == 302  # an ordinary change: the usual redirect, no key page
    key.refresh_from_db()
    assert (key.name, key.max_depth, key.digest) == ("renamed", "deep", digest)
