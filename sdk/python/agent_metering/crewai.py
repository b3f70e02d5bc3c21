"""CrewAI: an event listener that records every LLM call a crew makes as an ``llm_call`` with the model, its
provider and its four token counts (llm_usage.py).

    from agent_metering.crewai import MeteringEventListener
    metering = MeteringEventListener(client, agent_key="research-crew-1")   # create it before crew.kickoff()

With ``budget_estimate`` each LLM call is guarded: its estimated cost is reserved when the call starts
(LLMCallStartedEvent), its llm_call carries ``reservation_id`` (which settles the hold), and a failed call
(LLMCallFailedEvent) releases it. An event listener cannot stop a call, so a call over budget still runs: its
BudgetExceededError goes to ``on_over_budget`` (default: logged). To stop a crew before it starts, wrap
``crew.kickoff()`` in ``reserved(client, agent_key, estimate)``.

CrewAI models are named ``provider/model`` (``openai/gpt-4o``) or by the model alone. Without CrewAI installed,
``record_llm_call(event)`` takes anything shaped like its ``LLMCallCompletedEvent``.
"""

import logging
from collections import deque
from typing import Any, Callable, Deque, Dict, Optional, Tuple, Union

from .llm_usage import _get, llm_call_metadata, record_safely, tokens_of_usage
from .reservations import BudgetExceededError, Estimate, estimate_of, release_quietly

logger = logging.getLogger("agent_metering")

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
        budget_estimate: Optional[Estimate] = None,
        budget_ttl_seconds: Optional[int] = None,
        on_over_budget: Optional[Callable[[BudgetExceededError], None]] = None,
    ) -> None:
        self.client = client
        self.agent_key = agent_key
        self.metadata = dict(metadata or {})
        self.budget_estimate = budget_estimate
        self.budget_ttl_seconds = budget_ttl_seconds
        self.on_over_budget = on_over_budget or _log_over_budget
        # Reservations of calls in flight, by CrewAI's call_id when its events carry one, else in call order per key.
        self._by_call: Dict[Any, str] = {}
        self._in_order: Dict[str, Deque[str]] = {}
        bus = event_bus if event_bus is not None else _crewai_event_bus()
        event_type = event_type if event_type is not None else _crewai_llm_completed_event()
        if bus is not None and event_type is not None:
            self._listen(bus, event_type)

    def _listen(self, bus: Any, event_type: Any) -> None:
        @bus.on(event_type)
        def on_llm_call_completed(source: Any, event: Any) -> None:
            self.record_llm_call(event)

        self._handler = on_llm_call_completed  # kept alive with the listener
        if self.budget_estimate is None:
            return
        started, failed = _crewai_llm_started_and_failed_events()
        if started is not None:

            @bus.on(started)
            def on_llm_call_started(source: Any, event: Any) -> None:
                self.reserve_for_call(event)

            self._started_handler = on_llm_call_started
        if failed is not None:

            @bus.on(failed)
            def on_llm_call_failed(source: Any, event: Any) -> None:
                self.release_for_call(event)

            self._failed_handler = on_llm_call_failed

    def reserve_for_call(self, event: Any) -> None:
        """At a call's start (with a budget): holds its estimate until its llm_call settles it."""
        if self.budget_estimate is None:
            return
        agent_key = self._agent_key(event)
        try:
            reservation = self.client.reserve(
                agent_key, estimate_of(self.budget_estimate, event), ttl_seconds=self.budget_ttl_seconds
            )
        except BudgetExceededError as error:
            self.on_over_budget(error)
            return
        call_id = _get(event, "call_id")
        if call_id is not None:
            self._by_call[call_id] = reservation["id"]
        else:
            self._in_order.setdefault(agent_key, deque()).append(reservation["id"])

    def _take_reservation(self, event: Any) -> Optional[str]:
        call_id = _get(event, "call_id")
        if call_id is not None and call_id in self._by_call:
            return self._by_call.pop(call_id)
        pending = self._in_order.get(self._agent_key(event))
        return pending.popleft() if pending else None

    def release_for_call(self, event: Any) -> None:
        """A failed call gives its hold back."""
        reservation_id = self._take_reservation(event)
        if reservation_id is not None:
            release_quietly(self.client, reservation_id)

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
        reservation_id = self._take_reservation(event)
        if reservation_id is not None:
            extra["reservation_id"] = reservation_id
        record_safely(
            self.client.action,
            self._agent_key(event),
            "llm_call",
            llm_call_metadata(model, provider, tokens_of_usage(usage), extra),
        )


def _log_over_budget(error: BudgetExceededError) -> None:
    logger.warning("LLM call over budget (it ran: a listener cannot stop it): %s %s", error, error.details)


def _crewai_llm_started_and_failed_events() -> Tuple[Any, Any]:  # pragma: no cover - depends on the application
    for module in ("crewai.events", "crewai.utilities.events"):
        try:
            imported = __import__(module, fromlist=["LLMCallStartedEvent", "LLMCallFailedEvent"])
        except ImportError:
            continue
        return getattr(imported, "LLMCallStartedEvent", None), getattr(imported, "LLMCallFailedEvent", None)
    return None, None


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
