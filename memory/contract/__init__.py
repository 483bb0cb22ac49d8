"""The two-verb contract's definition: its parameter registry, shapes, parsing and fates, limits,
errors and version. The verbs, the HTTP door (``memory.api``) and the playground read it."""
