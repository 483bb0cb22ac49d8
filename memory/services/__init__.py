"""The verbs and what they share: ``remember`` and ``recall``, their common cycle (``cycle``), level
5's job (``research``), skill evolution (``evolution``), the relearning cycle, denial, idempotency,
run records and the instruction's reset. Below them: the contract's definition, the ladder, the
knowledge and the stores; above them only the doors and the Celery tasks."""
