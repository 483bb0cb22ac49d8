"""Skills evolve (PASSPORT.md §17; the owner's passport §11, §14.4): only by measurement.

1. Misses are read from run facts: verdicts ``reject``, recalls that found nothing, runs that
   cost more model turns than the skill's median by a factor (``misses``).
2. A repeated miss opens a candidate beside the active version: written by the model through
   ``write_candidate`` (it can write only candidate files) when one is configured, or by staff.
3. A declared share of real requests that used the skill (``SHADOW_RATE``, exactly: every
   1/rate-th one), within a daily cap on model turns (``SHADOW_DAILY_TURNS``), is replayed with
   the candidate by Celery, off the answer path, on a run of the ``shadow`` channel. The shadow's
   answer is never returned nor kept: only whether it agrees with the answer the real run gave.
4. The verdict comes from outside, on the real run's answer, and tells for both sides: a shadow
   answer that agrees with a confirmed answer is confirmed, one that agrees with a rejected answer
   is rejected, and the opposite when it does not agree. Cases whose real run has no verdict are
   incomplete, never wins. The memory's evolution run answers nobody: its verdict is the fate
   of the candidate it wrote (``measure.writer_verdict``), recorded the same way, so
   evolve-skill's candidates are judged too. With ``PROMOTE_MIN`` judged cases a candidate that wins on verdicts
   by ``PROMOTE_MARGIN`` and costs no more (turns, model seconds) is promoted; after
   ``CANDIDATE_MAX_CASES`` cases one that did not is deleted with the reason. Each is one commit.

The package, one module a seam: ``measure`` (answers in brief, agreement, misses, the figures and
the verdict: pure reads of run facts), ``candidates`` (writing, killing and deciding one),
``share`` (which real runs are replayed: the share and the day's cap), ``shadow`` (the replay and
the periodic watch, Celery's side). A shadow replay raises the flag in the leaf
``memory.shadowing``, which the model adapters read.
"""
