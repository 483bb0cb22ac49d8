"""Signed-in browsers for the stand's pages: Carol (a member of her architect) and a staff member."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture
def browser(carol) -> Client:
    client = Client()
    client.force_login(carol)
    return client


@pytest.fixture
def staff_browser(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client
