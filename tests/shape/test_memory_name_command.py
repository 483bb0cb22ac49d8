from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memory.models import Architect
from memory.shape.tools import promote_to_list


def _run(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("memory_name", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code), out.getvalue()
    return 0, out.getvalue()


@pytest.mark.django_db
def test_it_prints_the_name_and_exits_0():
    assert _run("Команда") == (0, "komanda  (new; scheme wikipedia; key «команда»)\n")


@pytest.mark.django_db
def test_it_prints_the_refusal_and_exits_1():
    code, out = _run("x; DROP TABLE users")
    assert code == 1
    assert out == "refused: «x; DROP TABLE users» is not a name: it contains a semicolon ';'\n"


@pytest.mark.usefixtures("grown")
def test_with_an_architect_it_shows_reuse():
    alice = Architect.objects.create(name="alice")
    promote_to_list(architect=alice, kind="друзья", items=["Дима"])
    code, out = _run("друг", "--architect", "alice")
    assert code == 0
    assert out.startswith("druzya  (reuses existing;")
