"""The model behind one narrow interface: ``run(prompt, system, tools, thread) → ModelResult``.

Every failure has a name and says whether trying again can help. A foreign or lost thread is
its own refusal (``thread_not_found``), never "the model answered out of form" (PASSPORT.md §12).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from memory.errors import MemoryServiceError
from memory.i18n import Text


class ModelError(MemoryServiceError):
    code = "model_failed"
    status = 502
    retryable = True
    # What the failed call(s) spent: a call that was made is counted on its run whether or not
    # it answered in form (turns, tokens when the model reported them). None: no call was made.
    usage: ModelResult | None = None

    def spent(self, usage: ModelResult | None) -> ModelError:
        """Attach what was spent before this failure (added to what the failure itself spent)."""
        if usage is not None:
            self.usage = usage.add(self.usage) if self.usage is not None else usage
        return self


class ThreadNotFound(ModelError):
    """The thread is unknown to this architect, bound to another folder, or lost by the CLI."""

    code = "thread_not_found"
    status = 404
    retryable = False


class ModelTimeout(ModelError):
    code = "model_timeout"
    status = 504
    retryable = True


class ModelNotInstalled(ModelError):
    code = "model_not_installed"
    status = 503
    retryable = False


class ModelBadOutput(ModelError):
    """The model answered, but not in the form asked for (after the one repair attempt)."""

    code = "model_bad_output"
    status = 502
    retryable = True


class ModelNotConfigured(ModelError):
    code = "model_not_configured"
    status = 503
    retryable = False


@dataclass(frozen=True)
class ToolGrant:
    """Whose tenant the tools act in, and for which run. Set by the memory, never by the model."""

    architect_id: int
    run_id: str
    tools: tuple[str, ...]


def failed_call(seconds: float = 0.0) -> ModelResult:
    """A call that was made and failed without reporting its usage: one turn, no tokens known."""
    return ModelResult(text="", thread="", turns=1, seconds=round(seconds, 3))


@dataclass
class ModelResult:
    text: str
    thread: str
    turns: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: Decimal | None = None
    seconds: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)

    def add(self, other: ModelResult | None) -> ModelResult:
        """Totals of two calls of one request cycle (e.g. a reply and its repair)."""
        if other is None:
            return self
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or Decimal(0)) + (other.cost_usd or Decimal(0))
        return ModelResult(
            text=other.text,
            thread=other.thread or self.thread,
            turns=self.turns + other.turns,
            tokens_in=self.tokens_in + other.tokens_in,
            tokens_out=self.tokens_out + other.tokens_out,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
            cost_usd=cost,
            seconds=round(self.seconds + other.seconds, 3),
            raw=other.raw,
        )


class ModelBackend(Protocol):
    name: str
    workdir: str

    def run(
        self,
        *,
        prompt: str,
        system: str,
        tools: ToolGrant | None,
        thread: str | None,
        timeout: float,
    ) -> ModelResult: ...


NOT_CONFIGURED = Text(
    ru="модель не настроена (MODEL_BACKEND=none)", en="no model is configured (MODEL_BACKEND=none)"
)


class NoModel:
    """The embedded default: there is no model. Callers check ``configured`` and say so."""

    name = "none"
    workdir = ""
    configured = False

    def run(self, **kwargs: Any) -> ModelResult:
        raise ModelNotConfigured(NOT_CONFIGURED("en"))
