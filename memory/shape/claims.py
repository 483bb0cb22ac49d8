"""Kinds of claim («род утверждения»): stored beside every value, so a reader knows how far to
trust it and where it came from."""

from __future__ import annotations

from typing import Literal

from memory.i18n import Text

Claim = Literal["stated", "inferred", "computed", "denied"]
CLAIMS: tuple[Claim, ...] = ("stated", "inferred", "computed", "denied")

MEANING: dict[Claim, Text] = {
    "stated": Text(ru="сказано архитектором прямо", en="stated by the architect in so many words"),
    "inferred": Text(
        ru="выведено памятью или моделью из сказанного; может оказаться неверным",
        en="inferred by the memory or the model from what was said; may prove wrong",
    ),
    "computed": Text(ru="посчитано по таблицам памяти", en="computed from the memory's tables"),
    "denied": Text(
        ru="гипотеза, которую архитектор отверг; хранится, чтобы не предлагать её снова",
        en="a hypothesis the architect rejected; kept so it is not proposed again",
    ),
}
