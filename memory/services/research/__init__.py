"""Level 5: research, the skill ``deep-analysis`` (PASSPORT.md §16), as a Celery job: its life in
``job``, the investigation in ``steps``.

A recall at ``extreme`` whose levels 1–4 found nothing starts one (``start``): a ``Research``
row named by the recall's run, sent to Celery once the row commits. The job (``conduct``,
idempotent by that run id) follows the owner's order, writing its progress as it goes:

1. the entities the question points at, from the tables (the rows of a table its words name:
   "friends" → the friends);
2. the graph per entity — what is told about each;
3. the vectors — the question by meaning;
4. up to ten terms related to the question's unknown word (a word no note holds): the model's
   when one is set, else the graph's neighbours of that word;
5. the graph (and the full-text index) per term: a note found by a term that names one of the
   entities links the entity to the unknown word;
6. a satisfying answer with its chain of basis (the note, the run that recorded it, the term),
   or an honest unsatisfying one saying what was tried and what could not be done.

The answer is a hypothesis (``probabilistic``): the owner's rule is that the chain may be wrong,
so the basis and the result are kept, not the reasoning. A found answer goes through the
relearning cycle, level 5, so the same question is cheap next time.
"""
