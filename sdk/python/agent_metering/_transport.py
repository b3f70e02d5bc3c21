"""One request of a batch and what its answer means for the events in it (the client decides what to do next).

Standard library only: urllib.request, json.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

_EVENT_PATH = re.compile(r"^events\[(\d+)\](?:\.(.*))?$")


@dataclass
class Attempt:
    """outcome is one of: delivered, invalid, retry, too_large, rejected."""

    outcome: str
    status: Optional[int] = None
    code: Optional[str] = None
    message: str = ""
    processed: int = 0
    duplicates: int = 0
    retry_after: Optional[float] = None
    invalid: Dict[int, List[Dict[str, str]]] = field(default_factory=dict)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), or None."""
    if value is None or value.strip() == "":
        return None
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def send_batch(base_url: str, api_key: str, kind: str, events: List[Dict[str, Any]], timeout: float) -> Attempt:
    path = "actions" if kind == "action" else "outcomes"
    body = json.dumps({"events": events}, separators=(",", ":"), allow_nan=False).encode("utf-8")
    request = urllib.request.Request(
        f"{base_url}/v1/{path}/batch",
        data=body,
        method="POST",
        headers={
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "User-Agent": "agent-metering-python",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text, headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        try:
            text = error.read()
        except (OSError, http.client.HTTPException):
            text = b""
        status, headers = error.code, error.headers
    except (urllib.error.URLError, OSError, http.client.HTTPException, socket.timeout) as error:
        return Attempt("retry", message=f"network error: {error}")

    try:
        answer = json.loads(text) if text else None
    except ValueError:
        answer = None
    if status in (200, 201):
        if isinstance(answer, dict) and isinstance(answer.get("processed"), int) and isinstance(answer.get("duplicates"), int):
            return Attempt("delivered", status=status, processed=answer["processed"], duplicates=answer["duplicates"])
        # Not the API's answer (a proxy's page?): the events may not be recorded, so send them again.
        return Attempt("retry", status=status, message=f"unexpected answer to {status}: {text[:200]!r}")

    error_body = answer.get("error") if isinstance(answer, dict) else None
    error_body = error_body if isinstance(error_body, dict) else {}
    code = error_body.get("code")
    message = error_body.get("message") or f"HTTP {status}"
    details = error_body.get("details")
    if status == 400 and code == "validation_error" and isinstance(details, list) and details:
        invalid: Dict[int, List[Dict[str, str]]] = {}
        for detail in details:
            match = _EVENT_PATH.match(str(detail.get("path", "")))
            index = int(match.group(1)) if match else -1
            if not 0 <= index < len(events):
                # An error that names no event (the batch itself): nothing can be sent as it is.
                return Attempt("rejected", status=status, code=code, message=f"{detail.get('path')}: {detail.get('message')}")
            invalid.setdefault(index, []).append({"path": match.group(2) or "", "message": str(detail.get("message", message))})
        return Attempt("invalid", status=status, code=code, message=message, invalid=invalid)
    if status == 413:
        return Attempt("too_large", status=status, code=code, message=message)
    if status in (408, 429) or status >= 500 or (status == 409 and code == "idempotency_key_in_use"):
        return Attempt(
            "retry", status=status, code=code, message=message, retry_after=parse_retry_after(headers.get("Retry-After"))
        )
    return Attempt("rejected", status=status, code=code, message=message)
