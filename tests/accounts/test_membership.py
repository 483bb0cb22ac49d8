"""A user belongs to an architect only by explicit membership; a matching name grants nothing."""

from __future__ import annotations

import html as html_lib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from memory.auth import NoMemory, caller_for_user
from memory.models import Architect, Note, Run, User

STAND = "/{lang}/settings?section=memory-test"
NO_MEMORY = {
    "ru": "нет памяти: она не состоит ни в одном архитекторе",
    "en": "has no memory assigned: it is not a member of any architect",
}


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def ask(client: Client, verb: str, text: str, lang: str = "ru", **headers: str):
    return client.post(
        STAND.format(lang=lang), {"scope_cards": "1", "verb": verb, "text": text}, **headers
    )


def raw(response) -> dict:
    page = response.content.decode()
    start = page.index('<pre id="raw">') + len('<pre id="raw">')
    return json.loads(html_lib.unescape(page[start : page.index("</pre>", start)]))


@pytest.fixture
def alices_note(alice_api) -> str:
    """Alice's memory holds a friend called Дима; her recall finds him."""
    alice_api.remember("У меня есть друг Дима")
    assert "Дима" in json.dumps(alice_api.recall("Кто мои друзья?"), ensure_ascii=False)
    return "Дима"


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_user_named_like_an_architect_gets_nothing_of_hers(alice, alices_note, lang):
    namesake = User.objects.create_user("alice", password="namesake-password")
    client = signed_in(namesake)
    architects, notes, runs = Architect.objects.count(), Note.objects.count(), Run.objects.count()

    recalled = ask(client, "recall", "Кто мои друзья?", lang)
    page = recalled.content.decode()
    assert recalled.status_code == 403
    assert NO_MEMORY[lang] in page and "memory_member alice" in page
    assert alices_note not in page

    stored = ask(client, "remember", "Я тоже дружу с Петей", lang)
    assert stored.status_code == 403 and NO_MEMORY[lang] in stored.content.decode()

    namesake.refresh_from_db()
    assert namesake.architect_id is None  # no membership was created
    assert (Architect.objects.count(), Note.objects.count(), Run.objects.count()) == (
        architects,
        notes,
        runs,
    )


@pytest.mark.django_db
def test_every_view_that_reaches_for_a_memory_answers_no_memory(alice, alices_note):
    namesake = User.objects.create_user("alice", password="namesake-password")
    client = signed_in(namesake)
    alices_run = Run.objects.filter(architect=alice).first()

    # htmx asks for a fragment: it takes the answer's place (htmx swaps only 2xx answers).
    fragment = ask(client, "recall", "Кто мои друзья?", HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert fragment.status_code == 200
    assert body.startswith('<div id="no-memory"') and NO_MEMORY["ru"] in body
    assert alices_note not in body and "<html" not in body

    progress = client.get(f"/en/settings/runs/{alices_run.pk}/progress")
    assert progress.status_code == 403 and NO_MEMORY["en"] in progress.content.decode()
    assert "data-status" not in progress.content.decode()  # nothing of her run is shown

    probe = client.post("/en/settings/probe/vectors", {"question": "Дима", "kind": "notes"})
    assert probe.status_code == 403 and NO_MEMORY["en"] in probe.content.decode()
    assert alices_note not in probe.content.decode()

    # The page itself still opens (it touches no memory), and nothing was attached on the way.
    assert client.get(STAND.format(lang="ru")).status_code == 200
    namesake.refresh_from_db()
    assert namesake.architect_id is None


@pytest.mark.django_db
def test_caller_for_user_refuses_a_user_with_no_membership_and_creates_nothing(alice):
    namesake = User.objects.create_user("alice")
    with pytest.raises(NoMemory):
        caller_for_user(namesake)
    assert list(Architect.objects.values_list("name", flat=True)) == ["alice"]
    namesake.refresh_from_db()
    assert namesake.architect_id is None


@pytest.mark.django_db
def test_an_explicit_membership_opens_the_architects_memory(alice, alices_note):
    # Any name will do: what counts is the membership, not the name.
    dana = User.objects.create_user("dana", password="dana-password", architect=alice)
    recalled = ask(signed_in(dana), "recall", "Кто мои друзья?")
    assert recalled.status_code == 200
    answer = raw(recalled)
    assert answer["kind"] == "affirmative"
    assert alices_note in json.dumps(answer, ensure_ascii=False)
    assert Run.objects.get(pk=answer["run"]).architect == alice


@pytest.mark.django_db
def test_staff_give_a_membership_in_the_admin(alice, alices_note, staff):
    staff.is_superuser = True
    staff.save()
    admin = signed_in(staff)
    response = admin.post(
        "/admin/memory/user/add/",
        {
            "username": "erin",
            "password1": "erin-Password-42",
            "password2": "erin-Password-42",
            "usable_password": "true",
            "architect": alice.pk,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    erin = User.objects.get(username="erin")
    assert erin.architect == alice
    answer = raw(ask(signed_in(erin), "recall", "Кто мои друзья?"))
    assert alices_note in json.dumps(answer, ensure_ascii=False)


def member(*args: str) -> list[str]:
    out = StringIO()
    call_command("memory_member", *args, stdout=out)
    return out.getvalue().strip().splitlines()


@pytest.mark.django_db
def test_the_command_makes_a_member_of_an_existing_architect(alice, alices_note):
    dana = User.objects.create_user("dana", password="dana-password")
    assert member("dana", "alice") == ["dana is now a member of alice"]
    dana.refresh_from_db()
    assert dana.architect == alice
    answer = raw(ask(signed_in(dana), "recall", "Кто мои друзья?"))
    assert alices_note in json.dumps(answer, ensure_ascii=False)
    assert member("dana", "alice") == ["dana was already a member of alice"]


@pytest.mark.django_db
def test_the_command_moves_a_member_and_says_so(alice, bob):
    User.objects.create_user("dana", architect=alice)
    assert member("dana", "bob") == ["dana moved from alice to bob (no longer sees alice's memory)"]
    assert User.objects.get(username="dana").architect == bob


@pytest.mark.django_db
def test_the_command_refuses_an_unknown_architect_unless_told_to_create_it(alice):
    dana = User.objects.create_user("dana")
    with pytest.raises(CommandError, match="no architect named 'alise'"):
        member("dana", "alise")
    dana.refresh_from_db()
    assert dana.architect_id is None
    assert not Architect.objects.filter(name="alise").exists()

    assert member("dana", "dora", "--create-architect") == [
        "architect created: dora",
        "dana is now a member of dora",
    ]
    dana.refresh_from_db()
    assert dana.architect == Architect.objects.get(name="dora")


@pytest.mark.django_db
def test_the_command_refuses_an_unknown_user_and_empty_names(alice):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        member("nobody", "alice")
    with pytest.raises(CommandError, match="must not be empty"):
        member(" ", "alice")
    with pytest.raises(CommandError, match="must not be empty"):
        member("alice", " ")
    assert not User.objects.exists()
    assert list(Architect.objects.values_list("name", flat=True)) == ["alice"]
