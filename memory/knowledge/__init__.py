"""The notes and what is known from them, below the ladder and above the stores: writing a note
and its full-text index (``notes``), level 1's one statement over the indexes (``lookup``),
current value and history (``supersede``), objects and their cards (``objects``), and filling the
vectors and the graph from a note through the outbox (``fill``). The levels and the verbs read
and write through here; nothing here imports the ladder or the verbs."""
