from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from memory.models import ApiKey, Architect


def _run(*args: str) -> list[str]:
    out = StringIO()
    call_command("memory_key", *args, stdout=out)
    return out.getvalue().strip().splitlines()


@pytest.mark.django_db
def test_it_creates_the_architect_and_prints_the_key_last():
    lines = _run("--architect", "dora", "--max-depth", "deep")
    assert lines[0] == "architect created: dora"
    plaintext = lines[-1]
    key = ApiKey.objects.get()
    assert key.architect == Architect.objects.get(name="dora")
    assert key.max_depth == "deep"
    # Stored hashed: the plaintext appears nowhere in the row.
    assert plaintext not in (key.digest, key.lookup)
    assert ApiKey.find(plaintext) == key


@pytest.mark.django_db
def test_a_key_defaults_to_standard_depth_and_reuses_the_architect(alice):
    lines = _run("--architect", "alice")
    assert "architect created" not in lines[0]
    assert ApiKey.objects.get().max_depth == "standard"


@pytest.mark.django_db
def test_the_printed_key_opens_the_contract():
    plaintext = _run("--architect", "erin")[-1]
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert http.post("/api/v1/recall", {"text": "x"}, format="json").status_code == 200


@pytest.mark.django_db
def test_a_key_with_the_right_lookup_but_wrong_secret_is_refused():
    plaintext = _run("--architect", "erin")[-1]
    forged = plaintext[:-4] + "AAAA"
    assert ApiKey.find(forged) is None
    assert ApiKey.find("mem_nothing") is None
    assert ApiKey.find("") is None
