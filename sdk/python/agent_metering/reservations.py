"""Budget reservations: hold the estimated cost of a step before running it, then send the step's event with
``metadata["reservation_id"]`` (which settles the hold) or release it when the step fails. Unlike events, these are
answered at once: the agent needs the answer before it goes on.

    reservation = client.reserve("support-bot-1", 0.05, ttl_seconds=120)   # BudgetExceededError when over budget
    client.release(reservation["id"])                                       # the step is not done after all

    with reserved(client, "support-bot-1", 0.05) as reservation:           # released if the block raises
        answer = call_the_model()
        client.action("support-bot-1", "llm_call", metadata={"reservation_id": reservation["id"]})
"""

from __future__ import annotations

import json
import logging
import math
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

logger = logging.getLogger("agent_metering")


class MeteringApiError(Exception):
    """The API refused a reservation call: ``status`` and ``code`` are the API's."""

    def __init__(self, status: int, code: str, message: str, request_id: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.request_id = request_id


class BudgetExceededError(MeteringApiError):
    """The reservation does not fit a budget (409 budget_exceeded); ``details`` name each alert it exceeds:
    ``[{"alert_id", "threshold", "spent", "held", "requested"}]``."""

    def __init__(self, message: str, details: List[Dict[str, Any]], request_id: Optional[str] = None) -> None:
        super().__init__(409, "budget_exceeded", message, request_id)
        self.details = details


def request_reservation(
    base_url: str, api_key: str, method: str, path: str, body: Optional[Dict[str, Any]], timeout: float
) -> Dict[str, Any]:
    headers = {"Authorization": f"Bearer {api_key}", "User-Agent": "agent-metering-python"}
    data = None
    if body is not None:
        data = json.dumps(body, separators=(",", ":"), allow_nan=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(f"{base_url}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    try:
        answer = json.loads(text) if text else None
    except ValueError:
        answer = None
    if 200 <= status < 300 and isinstance(answer, dict):
        return answer
    error_body = answer.get("error") if isinstance(answer, dict) else None
    error_body = error_body if isinstance(error_body, dict) else {}
    code = error_body.get("code") or "http_error"
    message = error_body.get("message") or f"HTTP {status}"
    if code == "budget_exceeded":
        raise BudgetExceededError(message, list(error_body.get("details") or []), error_body.get("request_id"))
    raise MeteringApiError(status, code, message, error_body.get("request_id"))


def reservation_body(
    agent_key: str, amount: Union[int, float], ttl_seconds: Optional[int], description: Optional[str]
) -> Dict[str, Any]:
    if not isinstance(agent_key, str) or not agent_key:
        raise TypeError("agent_key must be a non-empty string")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) or amount <= 0:
        raise TypeError("amount must be a number > 0")
    body: Dict[str, Any] = {"agent_key": agent_key, "amount": amount}
    if ttl_seconds is not None:
        body["ttl_seconds"] = ttl_seconds
    if description is not None:
        body["description"] = description
    return body


def reservation_path(reservation_id: str, suffix: str = "") -> str:
    return f"/v1/reservations/{urllib.parse.quote(reservation_id, safe='')}{suffix}"


def release_quietly(client: Any, reservation_id: str) -> None:
    """A failed release shortens nothing: the hold expires at its time."""
    try:
        client.release(reservation_id)
    except Exception as error:  # noqa: BLE001 - the caller's own error matters more
        logger.error("could not release reservation %s: %r", reservation_id, error)


@contextmanager
def reserved(
    client: Any,
    agent_key: str,
    estimate: Union[int, float],
    *,
    ttl_seconds: Optional[int] = None,
    description: Optional[str] = None,
) -> Iterator[Dict[str, Any]]:
    """The budget guard: reserves ``estimate`` (BudgetExceededError, and the block does not run, when it does not
    fit), yields the reservation, and releases it when the block raises. The event the block sends with
    ``metadata={"reservation_id": reservation["id"]}`` settles it."""
    reservation = client.reserve(agent_key, estimate, ttl_seconds=ttl_seconds, description=description)
    try:
        yield reservation
    except BaseException:
        release_quietly(client, reservation["id"])
        raise


# A call's estimated cost: a number, or a function of what the framework tells of the call.
Estimate = Union[int, float, Callable[[Any], Union[int, float]]]


def estimate_of(estimate: Estimate, call: Any) -> Union[int, float]:
    return estimate(call) if callable(estimate) else estimate
