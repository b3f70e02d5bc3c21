"""Agent Metering & Billing: send what your agents do (actions) and achieve (outcomes).

Standard library only; Python ≥ 3.9.
"""

from ._transport import parse_retry_after
from .client import Client, DeliveryFailure, DeliveryReport
from .reservations import BudgetExceededError, MeteringApiError, reserved

__all__ = [
    "BudgetExceededError",
    "Client",
    "DeliveryFailure",
    "DeliveryReport",
    "MeteringApiError",
    "parse_retry_after",
    "reserved",
]
__version__ = "0.1.0"
