"""What a user's program does with the installed Python SDK: run by the interpreter of a fresh virtual environment
where the package was installed (from its wheel, or from the directory), with METERING_BASE_URL, METERING_SDK_KEY
and AGENT_KEY. Prints one JSON line of what happened."""

import json
import os

import agent_metering
from agent_metering import Client

failures = []
metering = Client(
    os.environ["METERING_SDK_KEY"],
    os.environ["METERING_BASE_URL"],
    on_error=lambda failure: failures.append({"reason": failure.reason, "message": failure.message}),
)
agent_key = os.environ["AGENT_KEY"]
metering.action(agent_key, "llm_call", metadata={"model": "gpt-4o-mini", "tokens": 1830, "cost": 0.004})
metering.outcome(agent_key, "ticket_resolved", 1)
metering.close()

print(
    json.dumps(
        {
            "version": agent_metering.__version__,
            "file": agent_metering.__file__,
            "failures": failures,
        }
    )
)
