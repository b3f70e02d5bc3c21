"""LangChain and LangGraph: a callback handler that records every LLM or chat-model call as an ``llm_call`` with the
model, its provider and its four token counts (llm_usage.py), and every tool run as a ``tool_call``.

    from agent_metering.langchain import MeteringCallbackHandler
    metering = MeteringCallbackHandler(client, agent_key="support-bot-1")
    model.invoke(messages, config={"callbacks": [metering]})   # or graph.invoke(state, config={"callbacks": [...]})

With ``budget_estimate`` each model call is guarded: its estimated cost is reserved when it starts (a call that
does not fit fails with BudgetExceededError before the model is asked), its llm_call carries
``reservation_id`` (which settles the hold), and a call that fails releases it.

LangChain itself is optional: without it installed the handler still works with any caller of its methods.
"""

import time
from typing import Any, Callable, Dict, Optional, Union
from uuid import UUID

from .llm_usage import _get, add_tokens, llm_call_metadata, record_safely, split_tokens, tokens_of_usage
from .reservations import Estimate, estimate_of, release_quietly

try:  # pragma: no cover - depends on what the application installed
    from langchain_core.callbacks import BaseCallbackHandler as _Base
except ImportError:  # pragma: no cover

    class _Base:  # type: ignore[no-redef]
        """What LangChain's callback manager reads from a handler, when langchain_core is not installed."""

        raise_error = False
        run_inline = False
        ignore_llm = False
        ignore_chat_model = False
        ignore_chain = False
        ignore_agent = False
        ignore_retriever = False
        ignore_retry = False
        ignore_custom_event = False


AgentKey = Union[str, Callable[[], str]]


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


class MeteringCallbackHandler(_Base):
    name = "agent_metering"

    def __init__(
        self,
        client: Any,
        agent_key: AgentKey,
        *,
        metadata: Optional[Dict[str, Any]] = None,
        record_tools: bool = True,
        budget_estimate: Optional[Estimate] = None,
        budget_ttl_seconds: Optional[int] = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.agent_key = agent_key
        self.metadata = dict(metadata or {})
        self.record_tools = record_tools
        self.budget_estimate = budget_estimate
        self.budget_ttl_seconds = budget_ttl_seconds
        if budget_estimate is not None:
            # A refused reservation must stop the call: LangChain raises a handler's error only when told to.
            self.raise_error = True
        self._models: Dict[UUID, Dict[str, Optional[str]]] = {}
        self._tools: Dict[UUID, Dict[str, Any]] = {}
        self._reservations: Dict[UUID, str] = {}

    def _agent_key(self) -> str:
        return self.agent_key() if callable(self.agent_key) else self.agent_key

    def _remember_model(self, run_id: UUID, metadata: Optional[Dict[str, Any]], kwargs: Dict[str, Any]) -> None:
        params = kwargs.get("invocation_params") or {}
        model = (
            _text((metadata or {}).get("ls_model_name"))
            or _text(params.get("model"))
            or _text(params.get("model_name"))
        )
        self._models[run_id] = {"model": model, "provider": _text((metadata or {}).get("ls_provider"))}

    # ---- LLM calls -----------------------------------------------------------------------------------------

    def _reserve(self, run_id: UUID, kwargs: Dict[str, Any]) -> None:
        if self.budget_estimate is None:
            return
        amount = estimate_of(self.budget_estimate, kwargs.get("invocation_params") or {})
        reservation = self.client.reserve(self._agent_key(), amount, ttl_seconds=self.budget_ttl_seconds)
        self._reservations[run_id] = reservation["id"]

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, metadata=None, **kwargs: Any) -> None:
        self._remember_model(run_id, metadata, kwargs)
        self._reserve(run_id, kwargs)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, metadata=None, **kwargs: Any
    ) -> None:
        self._remember_model(run_id, metadata, kwargs)
        self._reserve(run_id, kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        start = self._models.pop(run_id, {})
        counts: Optional[Dict[str, Any]] = None
        model: Optional[str] = None
        for generations in _get(response, "generations") or []:
            for generation in generations:
                message = _get(generation, "message")
                usage = _get(message, "usage_metadata")
                if usage:
                    # input_tokens count cache reads, output_tokens count reasoning: split them out.
                    split = split_tokens(
                        _get(usage, "input_tokens") or 0,
                        _get(usage, "output_tokens") or 0,
                        _get(_get(usage, "input_token_details"), "cache_read"),
                        _get(_get(usage, "output_token_details"), "reasoning"),
                    )
                    counts = split if counts is None else add_tokens(counts, split)
                response_metadata = _get(message, "response_metadata") or {}
                model = model or _text(response_metadata.get("model_name")) or _text(response_metadata.get("model"))
        llm_output = _get(response, "llm_output") or {}
        if counts is None:
            # Older integrations report the whole call's usage in llm_output.
            counts = tokens_of_usage(llm_output.get("token_usage") or llm_output.get("usage"))
        model = model or _text(llm_output.get("model_name")) or start.get("model")
        extra = dict(self.metadata)
        reservation_id = self._reservations.pop(run_id, None)
        if reservation_id is not None:
            extra["reservation_id"] = reservation_id
        record_safely(
            self.client.action,
            self._agent_key(),
            "llm_call",
            llm_call_metadata(model, start.get("provider"), counts, extra),
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._models.pop(run_id, None)
        reservation_id = self._reservations.pop(run_id, None)
        if reservation_id is not None:
            release_quietly(self.client, reservation_id)

    # ---- tools ---------------------------------------------------------------------------------------------

    def on_tool_start(self, serialized: Any, input_str: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if not self.record_tools:
            return
        name = _text(kwargs.get("name")) or _text(_get(serialized, "name")) or "tool"
        self._tools[run_id] = {"name": name, "started": time.monotonic()}

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end_tool(run_id, True)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end_tool(run_id, False)

    def _end_tool(self, run_id: UUID, ok: bool) -> None:
        tool = self._tools.pop(run_id, None)
        if tool is None:
            return
        duration_ms = round((time.monotonic() - tool["started"]) * 1000)
        metadata = {**self.metadata, "tool": tool["name"], "ok": ok, "duration_ms": duration_ms}
        record_safely(self.client.action, self._agent_key(), "tool_call", metadata)
