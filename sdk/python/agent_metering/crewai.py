"""CrewAI: an event listener that records every LLM call a crew makes as an ``llm_call`` with the model, its
provider and its four token counts (llm_usage.py).

    from agent_metering.crewai import MeteringEventListener
    metering = MeteringEventListener(client, agent_key="research-crew-1")   # create it before crew.kickoff()

CrewAI models are named ``provider/model`` (``openai/gpt-4o``) or by the model alone. Without CrewAI installed,
``record_llm_call(event)`` takes anything shaped like its ``LLMCallCompletedEvent``.
"""

from typing import Any, Callable, Dict, Optional, Tuple, Union

from .llm_usage import _get, llm_call_metadata, record_safely, tokens_of_usage

AgentKey = Union[str, Callable[[Any], str]]


def split_model(name: Any) -> Tuple[Optional[str], Optional[str]]:
    """(provider, model) from CrewAI's model name: ``anthropic/claude-sonnet-4-5`` or ``gpt-4o``."""
    if not isinstance(name, str) or not name:
        return None, None
    if "/" in name:
        provider, model = name.split("/", 1)
        return provider, model
    return None, name


class MeteringEventListener:
    def __init__(
        self,
        client: Any,
        agent_key: AgentKey,
        *,
        metadata: Optional[Dict[str, Any]] = None,
        event_bus: Any = None,
        event_type: Any = None,
    ) -> None:
        self.client = client
        self.agent_key = agent_key
        self.metadata = dict(metadata or {})
        bus = event_bus if event_bus is not None else _crewai_event_bus()
        event_type = event_type if event_type is not None else _crewai_llm_completed_event()
        if bus is not None and event_type is not None:
            self._listen(bus, event_type)

    def _listen(self, bus: Any, event_type: Any) -> None:
        @bus.on(event_type)
        def on_llm_call_completed(source: Any, event: Any) -> None:
            self.record_llm_call(event)

        self._handler = on_llm_call_completed  # kept alive with the listener

    def _agent_key(self, event: Any) -> str:
        return self.agent_key(event) if callable(self.agent_key) else self.agent_key

    def record_llm_call(self, event: Any) -> None:
        provider, model = split_model(_get(event, "model"))
        usage = _get(event, "usage")
        if usage is None:
            usage = _get(_get(event, "response"), "usage")
        extra = dict(self.metadata)
        agent_role = _get(event, "agent_role")
        if isinstance(agent_role, str) and agent_role and "crew_agent" not in extra:
            extra["crew_agent"] = agent_role[:200]
        record_safely(
            self.client.action,
            self._agent_key(event),
            "llm_call",
            llm_call_metadata(model, provider, tokens_of_usage(usage), extra),
        )


def _crewai_event_bus() -> Any:  # pragma: no cover - depends on what the application installed
    try:
        from crewai.events import crewai_event_bus

        return crewai_event_bus
    except ImportError:
        try:
            from crewai.utilities.events import crewai_event_bus

            return crewai_event_bus
        except ImportError:
            return None


def _crewai_llm_completed_event() -> Any:  # pragma: no cover - depends on what the application installed
    try:
        from crewai.events import LLMCallCompletedEvent

        return LLMCallCompletedEvent
    except ImportError:
        try:
            from crewai.utilities.events import LLMCallCompletedEvent

            return LLMCallCompletedEvent
        except ImportError:
            return None
