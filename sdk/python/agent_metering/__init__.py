"""Agent Metering & Billing: send what your agents do (actions) and achieve (outcomes).

Standard library only; Python ≥ 3.9.
"""

from ._transport import parse_retry_after
from .client import Client, DeliveryFailure, DeliveryReport

__all__ = ["Client", "DeliveryFailure", "DeliveryReport", "parse_retry_after"]
__version__ = "0.1.0"
