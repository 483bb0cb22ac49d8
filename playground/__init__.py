"""The stand (``/<lang>/settings?section=memory-test``): a page for the architect that talks to the
memory only through the verbs' own functions and the internal probe door; it owns no memory logic."""
