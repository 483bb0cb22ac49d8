"""A real lightrag-server (lightrag-hku 1.5.7) against the OpenAI stub: what costs an LLM call.

A level-3 read (`/query/data` with explicit hl_keywords and ll_keywords) must make no LLM call;
the graph can be filled without the LLM through /graph/entity/create and /graph/relation/create;
`/documents/text` is asynchronous and does call the LLM (entity extraction), as does a query
whose keywords the server must extract itself. The stub's request log is the witness.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from tests.lightrag_server.fixtures import (  # noqa: F401 - fixtures, found by pytest
    lightrag_server_factory_fixture,
    lightrag_server_fixture,
)
from tests.lightrag_server.harness import LightRagServer

# The fixtures are imported above so this module runs whether or not tests/conftest.py loads
# tests.lightrag_server.fixtures as a plugin.
pytestmark = [pytest.mark.slow, pytest.mark.lightrag_server]

ADA = {
    "entity_name": "Ada Lovelace",
    "entity_data": {
        "description": "Mathematician who wrote the first computer program",
        "entity_type": "PERSON",
    },
}
ENGINE = {
    "entity_name": "Analytical Engine",
    "entity_data": {
        "description": "Mechanical general-purpose computer designed by Charles Babbage",
        "entity_type": "ARTIFACT",
    },
}
WROTE_FOR = {
    "source_entity": "Ada Lovelace",
    "target_entity": "Analytical Engine",
    "relation_data": {
        "description": "Ada Lovelace wrote a program for the Analytical Engine",
        "keywords": "programming, notes",
        "weight": 1.0,
    },
}
LEVEL3_QUERY = {
    "query": "Who wrote a program for the Analytical Engine?",
    "mode": "mix",
    "hl_keywords": ["computer programming"],
    "ll_keywords": ["Ada Lovelace", "Analytical Engine"],
}
TERMINAL = {"processed", "failed"}


def counts(server: LightRagServer) -> tuple[int, int]:
    return server.llm_calls(), server.embedding_calls()


def fill_graph(http: httpx.Client) -> None:
    for entity in (ADA, ENGINE):
        response = http.post("/graph/entity/create", json=entity)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "success", body
        assert body["data"]["entity_name"] == entity["entity_name"]
        assert body["data"]["graph_data"]["entity_type"] == entity["entity_data"]["entity_type"]
    response = http.post("/graph/relation/create", json=WROTE_FOR)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success", body
    assert (body["data"]["src_entity"], body["data"]["tgt_entity"]) == (
        "Ada Lovelace",
        "Analytical Engine",
    )


def query_data(http: httpx.Client, **overrides: Any) -> dict[str, Any]:
    response = http.post("/query/data", json={**LEVEL3_QUERY, **overrides})
    assert response.status_code == 200, response.text
    return response.json()


def entity_names(body: dict[str, Any]) -> set[str]:
    return {entity["entity_name"] for entity in body["data"].get("entities", [])}


def test_graph_create_and_keyword_query_make_no_llm_call(lightrag_server: LightRagServer) -> None:
    server = lightrag_server
    with server.client() as http:
        llm0, emb0 = counts(server)
        fill_graph(http)
        llm1, emb1 = counts(server)
        assert llm1 - llm0 == 0, "graph creation must not call the LLM"
        assert emb1 - emb0 >= 1, "created entities and relations are embedded"

        body = query_data(http)
        llm2, emb2 = counts(server)

    assert body["status"] == "success", body
    assert set(body) >= {"status", "message", "data", "metadata"}
    assert set(body["data"]) >= {"entities", "relationships", "chunks", "references"}
    assert "Ada Lovelace" in entity_names(body)
    ada = next(e for e in body["data"]["entities"] if e["entity_name"] == "Ada Lovelace")
    assert ada["description"] == ADA["entity_data"]["description"]
    pairs = {(r["src_id"], r["tgt_id"]) for r in body["data"]["relationships"]}
    assert ("Ada Lovelace", "Analytical Engine") in pairs
    assert body["metadata"]["query_mode"] == "mix"
    assert body["metadata"]["keywords"] == {
        "high_level": LEVEL3_QUERY["hl_keywords"],
        "low_level": LEVEL3_QUERY["ll_keywords"],
    }
    assert llm2 - llm1 == 0, "a query with explicit keywords must make 0 LLM calls"
    assert emb2 - emb1 >= 1, "the keywords are embedded for the vector search"


def test_keyword_query_with_no_match_is_a_200_failure_without_llm(
    lightrag_server: LightRagServer,
) -> None:
    server = lightrag_server
    with server.client() as http:
        fill_graph(http)
        llm0, _ = counts(server)
        body = query_data(http, query="zzz", hl_keywords=["qqq"], ll_keywords=["xxyyzz"])
    assert body["status"] == "failure", body
    assert body["data"] == {}
    assert server.llm_calls() - llm0 == 0


def test_query_without_keywords_calls_the_llm(lightrag_server: LightRagServer) -> None:
    """The contrast: without hl/ll keywords the server asks the LLM to extract them."""
    server = lightrag_server
    with server.client() as http:
        fill_graph(http)
        llm0, _ = counts(server)
        response = http.post("/query/data", json={"query": LEVEL3_QUERY["query"], "mode": "mix"})
    assert response.status_code == 200, response.text
    assert server.llm_calls() - llm0 >= 1


def test_documents_text_is_async_and_calls_the_llm(lightrag_server: LightRagServer) -> None:
    server = lightrag_server
    text = "Grace Hopper invented the first compiler. She worked on the Harvard Mark I computer."
    with server.client() as http:
        llm0, emb0 = counts(server)
        response = http.post(
            "/documents/text",
            json={"text": text, "file_source": f"hopper-{uuid.uuid4().hex}.txt"},
        )
        assert response.status_code == 200, response.text
        accepted = response.json()
        assert accepted["status"] == "success", accepted
        track_id = accepted["track_id"]
        assert track_id

        deadline = time.monotonic() + 30
        while True:
            status = http.get(f"/documents/track_status/{track_id}")
            assert status.status_code == 200, status.text
            tracked = status.json()
            docs = tracked["documents"]
            if docs and all(doc["status"] in TERMINAL for doc in docs):
                break
            assert time.monotonic() < deadline, f"document still not processed: {tracked}"
            time.sleep(0.1)

    assert tracked["track_id"] == track_id
    assert tracked["total_count"] == 1
    (doc,) = docs
    assert doc["status"] == "processed", doc
    assert doc["content_length"] == len(text)
    assert doc["chunks_count"] >= 1
    assert server.llm_calls() - llm0 >= 1, "entity extraction calls the LLM"
    assert server.embedding_calls() - emb0 >= 1


def test_data_survives_stop_and_start(lightrag_server: LightRagServer) -> None:
    server = lightrag_server
    with server.client() as http:
        fill_graph(http)
    port = server.port

    server.stop()
    assert not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health", timeout=2, trust_env=False)

    server.start()
    assert server.running and server.port == port
    llm0, _ = counts(server)
    with server.client() as http:
        body = query_data(http)
    assert body["status"] == "success", body
    assert {"Ada Lovelace", "Analytical Engine"} <= entity_names(body)
    assert server.llm_calls() - llm0 == 0


def test_one_workspace_per_process(lightrag_server_factory: Any) -> None:
    """WORKSPACE (env) picks the storage sub-folder; the LIGHTRAG-WORKSPACE header does not
    separate data on the data routes: what one header wrote, another header reads."""
    server = lightrag_server_factory(workspace="alice")
    with server.client() as http:
        response = http.post(
            "/graph/entity/create", json=ADA, headers={"LIGHTRAG-WORKSPACE": "ws_a"}
        )
        assert response.status_code == 200, response.text
        response = http.post(
            "/query/data",
            json={**LEVEL3_QUERY, "ll_keywords": ["Ada Lovelace"]},
            headers={"LIGHTRAG-WORKSPACE": "ws_b"},
        )
    body = response.json()
    assert body["status"] == "success", body
    assert "Ada Lovelace" in entity_names(body)
    assert (server.working_dir / "alice" / "graph_chunk_entity_relation.graphml").is_file()
    assert not (server.working_dir / "ws_a").exists()
    assert not (server.working_dir / "ws_b").exists()
