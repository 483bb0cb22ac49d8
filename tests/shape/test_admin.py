from __future__ import annotations

import pytest
from django.test import Client

from memory.models import Architect, ShapeEntry, User
from memory.shape.tools import make_new_kind, promote_to_list

pytestmark = pytest.mark.usefixtures("grown")


@pytest.fixture
def admin_client_() -> Client:
    user = User.objects.create_superuser("root", password="x")
    client = Client()
    client.force_login(user)
    return client


def test_the_catalog_and_each_grown_table_are_readable_in_the_admin(admin_client_):
    alice = Architect.objects.create(name="alice")
    promote_to_list(
        architect=alice,
        kind="команда",
        items=[{"value": "Юля", "fields": {"роль": "продакт-менеджер"}}],
    )
    make_new_kind(architect=alice, kind="любимый цвет", value="синий")
    listing = admin_client_.get("/admin/memory/shapeentry/")
    assert listing.status_code == 200
    assert "komanda" in listing.content.decode()
    table = ShapeEntry.objects.get(kind="table")
    page = admin_client_.get(f"/admin/memory/shapeentry/{table.pk}/rows/").content.decode()
    assert "Юля" in page and "продакт-менеджер [stated]" in page
    column = ShapeEntry.objects.get(name="lyubimy_tsvet")
    assert (
        "синий" in admin_client_.get(f"/admin/memory/shapeentry/{column.pk}/rows/").content.decode()
    )
    # Read-only: no add, no delete.
    assert admin_client_.get("/admin/memory/shapeentry/add/").status_code == 403
    assert admin_client_.get(f"/admin/memory/shapeentry/{table.pk}/delete/").status_code == 403
