"""Property: no name reaches DDL unless it passed the naming function.

Random Unicode labels go through the real tool; every DDL statement the database receives is
captured, and each identifier in it must be one the naming function produced (or one of the
memory's fixed names).
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Architect
from memory.shape import names, physical
from memory.shape.tools import make_new_kind

FIXED = {"mem_root", "id", "architect_id"}
QUOTED = re.compile(r'"([^"]+)"')


@pytest.mark.usefixtures("grown")
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    label=st.one_of(
        st.text(max_size=40),
        st.text(alphabet="абвгдеёжзийклмнопрстуфхцчшщъыьэюя -_;'\"\\.", max_size=30),
    )
)
def test_only_names_that_passed_the_function_reach_ddl(label):
    architect, _ = Architect.objects.get_or_create(name="prop")
    with physical.growth() as editor:
        physical.ensure_root(editor)
    statements: list[str] = []

    def capture(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    try:
        expected = names.check(label)
    except names.NameRefused:
        expected = None
    report = None
    with connection.execute_wrapper(capture):
        try:
            report = make_new_kind(architect=architect, kind=label, value="v")
        except names.NameRefused:
            assert expected is None
    ddl = [s for s in statements if s.lstrip().upper().startswith(("ALTER", "CREATE", "DROP"))]
    if expected is None:
        assert ddl == []
        return
    assert report is not None
    if report.tables[0].action == "add_columns":
        assert len(ddl) >= 3  # the capture sees the ALTER TABLE statements it checks
    allowed = FIXED | {
        expected.name,
        expected.name + names.KIND_SUFFIX,
        expected.name + names.BASIS_SUFFIX,
    }
    for statement in ddl:
        for identifier in QUOTED.findall(statement):
            if identifier.startswith("new__") or identifier.startswith("mem_root__"):
                continue  # SQLite's own temporary names, never built from labels
            assert identifier in allowed, (label, statement)
