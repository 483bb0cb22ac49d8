"""deploy/compose.yaml, checked as a file (containers cannot run on the machines the suite runs
on): every service is health-checked, every outside image pinned, every variable the memory's
services are given is one its settings read, and every dependency names a service."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
MEMORY_SERVICES = ("migrate", "web", "worker", "beat")


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))  # merge keys resolved


def settings_read() -> set[str]:
    """The variables the memory reads: memory/settings.py (env.*("NAME"), os.environ, the
    secrets) and memory_run's own (HOST, PORT)."""
    source = "\n".join(
        (ROOT / path).read_text(encoding="utf-8")
        for path in ("memory/settings.py", "memory/management/commands/memory_run.py")
    )
    names = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z][A-Z0-9_]*)"', source))
    names |= set(re.findall(r'os\.environ(?:\.get)?[\[(]\s*"([A-Z][A-Z0-9_]*)"', source))
    names |= set(re.findall(r'"([A-Z][A-Z0-9_]*)" in os\.environ', source))
    names |= {
        f"{n}{suffix}"
        for n in re.findall(r'_secret\(\s*"([A-Z_]+)"', source)
        for suffix in ("", "_FILE")
    }
    return names


def test_the_settings_reader_sees_what_settings_read():
    read = settings_read()
    assert {
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "QDRANT_URL",
        "LIGHTRAG_URLS",
        "SECRET_KEY",
    } <= read
    assert {"STORES_FILL", "MEMORY_DATA_DIR", "MACHINE_SECRET_FILE", "SHADOW_RATE"} <= read


def test_every_service_is_health_checked_and_every_outside_image_pinned():
    services = _compose()["services"]
    assert {"web", "worker", "beat", "postgres", "redis", "qdrant"} <= set(services)
    # The graph runs in the memory's processes on PostgreSQL: no service an architect.
    assert not any(name.startswith("lightrag") for name in services)
    for name, service in services.items():
        test = (service.get("healthcheck") or {}).get("test")
        assert test, f"{name} has no health check"
        image = service.get("image", "")
        if "build" in service:
            build = service["build"]
            assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve().exists()
            continue
        repo, _, tag = image.rpartition(":")
        assert repo and tag and tag != "latest" and re.search(r"\d", tag), f"{name}: {image}"


def test_every_variable_given_to_the_memory_is_one_its_settings_read():
    services = _compose()["services"]
    read = settings_read()
    for name in MEMORY_SERVICES:
        given = set(services[name].get("environment") or {})
        assert given, name
        assert given <= read, f"{name}: {sorted(given - read)} are read by no setting"
        assert services[name]["env_file"] == "../.env"


def test_the_graph_is_on_the_postgresql_that_has_pgvector():
    services = _compose()["services"]
    assert "pgvector" in services["postgres"]["image"]
    for name in MEMORY_SERVICES:
        url = services[name]["environment"]["GRAPH_DATABASE_URL"]
        assert url.startswith("postgres://") and "@postgres:5432/" in url


def test_the_example_environment_names_only_settings():
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    named = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", text, re.M))
    assert named and named <= settings_read(), sorted(named - settings_read())


def test_dependencies_and_volumes_are_declared():
    compose = _compose()
    services, volumes = compose["services"], set(compose["volumes"])
    for name, service in services.items():
        for needed, how in (service.get("depends_on") or {}).items():
            assert needed in services, f"{name} depends on unknown {needed}"
            assert how["condition"] in ("service_healthy", "service_completed_successfully")
        for mount in service.get("volumes") or []:
            source = mount.split(":", 1)[0]
            assert source in volumes, f"{name}: volume {source} is not declared"
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


@pytest.mark.parametrize("store", ["postgres", "redis", "qdrant"])
def test_the_stores_keep_their_data_in_volumes(store):
    assert _compose()["services"][store].get("volumes")
