"""Client: actions and outcomes buffered and sent in batches by a background thread.

- Every event carries an idempotency key (the caller's, or ``<client id>-<n>``), so a batch sent again after a
  timeout or a crash of the server is answered ``duplicate`` for what was already recorded: never counted twice.
- Retries back off exponentially with jitter and wait at least what ``Retry-After`` says.
- A 400 names the invalid events: those are reported and the rest of the batch is sent again (the API stored
  nothing). A 413 splits the batch.
- The buffer is bounded: beyond ``max_buffered_events``, ``action()``/``outcome()`` block until there is room.
  Nothing is dropped; whatever cannot be recorded is handed to ``on_error`` with the reason.
- What is buffered is flushed at interpreter exit (atexit), and by ``flush()`` and ``close()``.
"""

from __future__ import annotations

import atexit
import logging
import math
import random
import secrets
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Deque, Dict, List, Optional, Union

from ._transport import Attempt, send_batch
from .reservations import request_reservation, reservation_body, reservation_path

logger = logging.getLogger("agent_metering")

MAX_BATCH = 1000

Metadata = Dict[str, Union[str, int, float, bool, None]]


@dataclass
class DeliveryFailure:
    """Handed to ``on_error``: which events were not recorded, and why.

    reason: ``invalid`` (the API refused these events; the rest of their batch was sent), ``rejected`` (refused for
    good: 401, 403, other 4xx) or ``retries_exhausted`` (network errors, 429 or 5xx after every retry).
    events: the events as sent (``agent_key``, ``action_type``/``outcome_type``, ``idempotency_key``…), each with
    its ``kind``.
    """

    reason: str
    events: List[Dict[str, Any]]
    message: str
    status: Optional[int] = None
    code: Optional[str] = None
    details: List[Dict[str, str]] = field(default_factory=list)


@dataclass
class DeliveryReport:
    kind: str
    events: List[Dict[str, Any]]
    processed: int
    duplicates: int


@dataclass
class _Held:
    kind: str
    event: Dict[str, Any]
    epoch: int


def _default_on_error(failure: DeliveryFailure) -> None:
    logger.error(
        "%d event(s) not recorded (%s): %s; idempotency keys: %s",
        len(failure.events),
        failure.reason,
        failure.message,
        [e.get("idempotency_key") for e in failure.events],
    )


def _timestamp(value: Union[None, str, datetime]) -> str:
    if value is None:
        value = datetime.now(timezone.utc)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, str):
        return value
    raise TypeError("timestamp must be a datetime or an ISO 8601 string")


class Client:
    """Sends metering events to Agent Metering & Billing.

    >>> client = Client("sk_live_...", "https://metering.example.com")
    >>> client.action("support-bot-1", "llm_call", metadata={"tokens": 1830, "cost": 0.004})
    >>> client.outcome("support-bot-1", "ticket_resolved", 1)
    >>> client.close()  # or let atexit flush
    """

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        batch_size: int = 500,
        flush_interval: float = 1.0,
        max_buffered_events: int = 10_000,
        max_retries: int = 10,
        min_backoff: float = 0.25,
        max_backoff: float = 30.0,
        request_timeout: float = 30.0,
        on_error: Optional[Callable[[DeliveryFailure], None]] = None,
        on_delivered: Optional[Callable[[DeliveryReport], None]] = None,
        flush_at_exit: bool = True,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        if not base_url:
            raise ValueError("base_url is required")
        if not (isinstance(batch_size, int) and 1 <= batch_size <= MAX_BATCH):
            raise ValueError("batch_size must be an integer from 1 to 1000")
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.max_buffered_events = max(batch_size, max_buffered_events)
        self.max_retries = max_retries
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.request_timeout = request_timeout
        self.on_error = on_error or _default_on_error
        self.on_delivered = on_delivered

        self._client_id = f"{int(time.time() * 1000):x}{secrets.token_hex(8)}"
        self._counter = 0
        self._lock = threading.Condition()
        self._queues: Dict[str, Deque[_Held]] = {"action": deque(), "outcome": deque()}
        self._order: Deque[str] = deque()  # the kind of each queued event, oldest first
        self._buffered = 0  # queued or being sent: what the bound applies to
        self._epoch = 0
        self._unsettled: Dict[int, int] = {}
        self._drain_epoch = -1  # events of this flush generation and before go out in partial batches
        self._first_queued_at: Optional[float] = None
        self._closed = False
        self._stopping = False
        self._counts = {"processed": 0, "duplicates": 0, "failed": 0, "retries": 0, "requests": 0}
        self._thread = threading.Thread(target=self._run, name="agent-metering", daemon=True)
        self._thread.start()
        self._atexit: Optional[Callable[[], None]] = None
        if flush_at_exit:
            ref = weakref.ref(self)

            def flush_at_exit_hook() -> None:
                client = ref()
                if client is not None:
                    client.close()

            self._atexit = flush_at_exit_hook
            atexit.register(flush_at_exit_hook)

    # ----------------------------------------------------------------------------------------------- public API

    def action(
        self,
        agent_key: str,
        type: str,
        metadata: Optional[Metadata] = None,
        timestamp: Union[None, str, datetime] = None,
        idempotency_key: Optional[str] = None,
    ) -> None:
        """Records an action. Returns once buffered (at once, unless the buffer is full: then it waits)."""
        event = self._prepare("action", agent_key, type, metadata, timestamp, idempotency_key)
        event["action_type"] = type
        self._enqueue("action", event)

    def outcome(
        self,
        agent_key: str,
        type: str,
        value: Union[int, float],
        metadata: Optional[Metadata] = None,
        timestamp: Union[None, str, datetime] = None,
        idempotency_key: Optional[str] = None,
    ) -> None:
        """Records an outcome (value: a finite number ≥ 0). Returns once buffered."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TypeError("value must be a finite number")
        event = self._prepare("outcome", agent_key, type, metadata, timestamp, idempotency_key)
        event["outcome_type"] = type
        event["value"] = value
        self._enqueue("outcome", event)

    def reserve(
        self,
        agent_key: str,
        amount: Union[int, float],
        *,
        ttl_seconds: Optional[int] = None,
        description: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Holds ``amount`` of the instance's budget before a step (sent at once, not buffered); returns the
        reservation. Raises BudgetExceededError when it does not fit. Send the step's event with
        ``metadata={"reservation_id": ...}`` to settle it, or ``release()`` it; it expires after ttl_seconds."""
        body = reservation_body(agent_key, amount, ttl_seconds, description)
        return request_reservation(self.base_url, self.api_key, "POST", "/v1/reservations", body, self.request_timeout)

    def release(self, reservation_id: str) -> Dict[str, Any]:
        """Gives a held reservation back at once (MeteringApiError 409 conflict when it is no longer held)."""
        path = reservation_path(reservation_id, "/release")
        return request_reservation(self.base_url, self.api_key, "POST", path, None, self.request_timeout)

    def get_reservation(self, reservation_id: str) -> Dict[str, Any]:
        path = reservation_path(reservation_id)
        return request_reservation(self.base_url, self.api_key, "GET", path, None, self.request_timeout)

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends everything recorded so far; returns once each event is recorded or reported to on_error
        (True), or when timeout seconds passed (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            epoch = self._epoch
            self._epoch += 1
            self._drain_epoch = max(self._drain_epoch, epoch)
            self._lock.notify_all()
            while any(e <= epoch for e in self._unsettled):
                if threading.current_thread() is self._thread:
                    return False  # a callback flushing from the sender thread would wait for itself
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._lock.wait(remaining)
        return True

    def close(self, timeout: Optional[float] = None) -> bool:
        """Flushes, then stops the background thread and refuses new events. Returns False on a timeout."""
        with self._lock:
            self._closed = True
        done = self.flush(timeout)
        if done:
            with self._lock:
                self._stopping = True
                self._lock.notify_all()
            if threading.current_thread() is not self._thread:
                self._thread.join(timeout)
            if self._atexit is not None:
                atexit.unregister(self._atexit)
                self._atexit = None
        return done

    def stats(self) -> Dict[str, int]:
        with self._lock:
            return {"pending": sum(self._unsettled.values()), **self._counts}

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------------ internals

    def _prepare(self, kind, agent_key, type, metadata, timestamp, idempotency_key) -> Dict[str, Any]:
        if not isinstance(agent_key, str) or not agent_key:
            raise TypeError(f"{kind}: agent_key must be a non-empty string")
        if not isinstance(type, str) or not type:
            raise TypeError(f"{kind}: type must be a non-empty string")
        if metadata is not None and not isinstance(metadata, dict):
            raise TypeError(f"{kind}: metadata must be a dict")
        event: Dict[str, Any] = {"agent_key": agent_key, "timestamp": _timestamp(timestamp)}
        if metadata is not None:
            event["metadata"] = metadata
        if idempotency_key is None:
            with self._lock:
                self._counter += 1
                idempotency_key = f"{self._client_id}-{self._counter:x}"
        event["idempotency_key"] = idempotency_key
        return event

    def _enqueue(self, kind: str, event: Dict[str, Any]) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the client is closed; create a new one")
            # Back-pressure: wait for room (not on the sender thread itself, which makes the room).
            if threading.current_thread() is not self._thread:
                while self._buffered >= self.max_buffered_events:
                    self._lock.wait()
            held = _Held(kind, event, self._epoch)
            self._unsettled[held.epoch] = self._unsettled.get(held.epoch, 0) + 1
            self._buffered += 1
            self._queues[kind].append(held)
            self._order.append(kind)
            if self._first_queued_at is None:
                self._first_queued_at = time.monotonic()
            self._lock.notify_all()

    def _next_batch(self) -> Optional[List[_Held]]:
        """Under the lock: a batch ready to send (full, or drained by the interval or a flush), or None."""
        if not self._order:
            return None
        kind = self._order[0]
        queue = self._queues[kind]
        interval_passed = (
            self._first_queued_at is not None and time.monotonic() - self._first_queued_at >= self.flush_interval
        )
        full = {k for k, q in self._queues.items() if len(q) >= self.batch_size}
        if full and kind not in full:
            kind = next(iter(full))
            queue = self._queues[kind]
        elif not full and not interval_passed and queue[0].epoch > self._drain_epoch:
            return None
        batch = [queue.popleft() for _ in range(min(self.batch_size, len(queue)))]
        for _ in batch:
            self._order.remove(kind)
        self._first_queued_at = time.monotonic() if self._order else None
        return batch

    def _run(self) -> None:
        while True:
            with self._lock:
                batch = self._next_batch()
                while batch is None:
                    if self._stopping and not self._order:
                        return
                    wait = None
                    if self._first_queued_at is not None:
                        wait = max(0.0, self._first_queued_at + self.flush_interval - time.monotonic())
                    self._lock.wait(wait)
                    batch = self._next_batch()
            try:
                self._deliver(batch)
            finally:
                with self._lock:
                    self._buffered -= len(batch)
                    self._lock.notify_all()

    def _deliver(self, batch: List[_Held]) -> None:
        """Sends one batch until every event in it is recorded or reported. Never raises."""
        kind = batch[0].kind
        pending = batch
        retries = 0
        try:
            while pending:
                with self._lock:
                    self._counts["requests"] += 1
                attempt = send_batch(
                    self.base_url, self.api_key, kind, [h.event for h in pending], self.request_timeout
                )
                if attempt.outcome == "delivered":
                    with self._lock:
                        self._counts["processed"] += attempt.processed
                        self._counts["duplicates"] += attempt.duplicates
                    events = [self._reported(h) for h in pending]
                    self._settle(pending)
                    pending = []
                    if self.on_delivered is not None:
                        self._safely(self.on_delivered, DeliveryReport(kind, events, attempt.processed, attempt.duplicates))
                elif attempt.outcome == "invalid":
                    rest = []
                    for index, held in enumerate(pending):
                        details = attempt.invalid.get(index)
                        if details is None:
                            rest.append(held)
                        else:
                            message = "; ".join(f"{d['path']}: {d['message']}" if d["path"] else d["message"] for d in details)
                            self._fail([held], "invalid", attempt, message, details)
                    pending = rest
                elif attempt.outcome == "too_large" and len(pending) > 1:
                    half = (len(pending) + 1) // 2
                    self._deliver(pending[:half])
                    self._deliver(pending[half:])
                    pending = []
                elif attempt.outcome in ("rejected", "too_large"):
                    self._fail(pending, "rejected", attempt, attempt.message)
                    pending = []
                elif retries >= self.max_retries:
                    self._fail(pending, "retries_exhausted", attempt, f"gave up after {retries + 1} attempts: {attempt.message}")
                    pending = []
                else:
                    retries += 1
                    with self._lock:
                        self._counts["retries"] += 1
                    time.sleep(self.backoff(retries, attempt.retry_after))
        except Exception as error:  # a bug: the events are still reported, never lost silently
            self._fail(pending, "retries_exhausted", Attempt("retry"), f"unexpected error: {error!r}")

    def backoff(self, retry: int, retry_after: Optional[float] = None) -> float:
        """Exponential backoff with "equal jitter", never shorter than the server's Retry-After."""
        if retry_after is not None:
            # Spread the clients that were told the same instant over a little time after it.
            return retry_after + random.uniform(0, min(1.0, self.min_backoff * 2))
        ceiling = min(self.max_backoff, self.min_backoff * 2 ** (retry - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    @staticmethod
    def _reported(held: _Held) -> Dict[str, Any]:
        return {"kind": held.kind, **held.event}

    def _fail(self, held: List[_Held], reason: str, attempt: Attempt, message: str, details=None) -> None:
        if not held:
            return
        with self._lock:
            self._counts["failed"] += len(held)
        events = [self._reported(h) for h in held]
        self._settle(held)
        failure = DeliveryFailure(reason, events, message, attempt.status, attempt.code, list(details or []))
        self._safely(self.on_error, failure)

    def _settle(self, held: List[_Held]) -> None:
        with self._lock:
            for h in held:
                left = self._unsettled[h.epoch] - 1
                if left:
                    self._unsettled[h.epoch] = left
                else:
                    del self._unsettled[h.epoch]
            self._lock.notify_all()

    @staticmethod
    def _safely(callback: Callable[[Any], None], argument: Any) -> None:
        try:
            callback(argument)
        except Exception:
            logger.exception("agent_metering: a callback raised")
