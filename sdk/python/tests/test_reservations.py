"""Budget reservations: reserve/release/get_reservation over HTTP, the ``reserved`` guard, and the budget hooks of
the LangChain/LangGraph handler and the CrewAI listener (frameworks given as plain objects)."""

import json
import threading
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

from agent_metering import BudgetExceededError, Client, MeteringApiError, reserved
from agent_metering.crewai import MeteringEventListener
from agent_metering.langchain import MeteringCallbackHandler


class FakeReservationApi:
    """Reservations by id, budget_exceeded beyond ``available``; keeps every request."""

    def __init__(self, available=1.0):
        self.available = available
        self.held = 0.0
        self.reservations = {}
        self.requests = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, method):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length)) if length else None
                api.requests.append({"method": method, "path": self.path, "body": body,
                                     "headers": {k.lower(): v for k, v in self.headers.items()}})
                status, answer = api.route(method, self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.answer("GET")

            def do_POST(self):
                self.answer("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def route(self, method, path, body):
        if path.endswith("/batch"):
            events = body["events"]
            return 201, {"results": [{"status": "processed"} for _ in events], "processed": len(events), "duplicates": 0}
        if method == "POST" and path == "/v1/reservations":
            if self.held + body["amount"] > self.available:
                details = [{"alert_id": "alr_1", "threshold": 10, "spent": 9, "held": self.held,
                            "requested": body["amount"]}]
                return 409, {"error": {"code": "budget_exceeded", "message": "over budget", "details": details,
                                       "request_id": "req_1"}}
            self.held += body["amount"]
            reservation = {"id": f"rsv_{len(self.reservations) + 1}", "amount": body["amount"], "status": "held"}
            self.reservations[reservation["id"]] = reservation
            return 201, reservation
        parts = path.split("/")
        reservation = self.reservations.get(parts[3]) if len(parts) > 3 else None
        if reservation is None:
            return 404, {"error": {"code": "not_found", "message": "no such", "request_id": "req_2"}}
        if path.endswith("/release"):
            if reservation["status"] != "held":
                return 409, {"error": {"code": "conflict", "message": "not held", "request_id": "req_3"}}
            reservation["status"] = "released"
            self.held -= reservation["amount"]
        return 200, reservation

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ClientReservationsTest(unittest.TestCase):
    def setUp(self):
        self.api = FakeReservationApi(available=1.0)
        self.client = Client("sk_test_abc", self.api.url + "/", flush_at_exit=False)

    def tearDown(self):
        self.client.close()
        self.api.close()

    def test_reserve_get_and_release_are_sent_at_once_with_the_key(self):
        reservation = self.client.reserve("bot-1", 0.4, ttl_seconds=60, description="d")
        self.assertEqual(reservation, {"id": "rsv_1", "amount": 0.4, "status": "held"})
        first = self.api.requests[0]
        self.assertEqual((first["method"], first["path"]), ("POST", "/v1/reservations"))
        self.assertEqual(first["body"], {"agent_key": "bot-1", "amount": 0.4, "ttl_seconds": 60, "description": "d"})
        self.assertEqual(first["headers"]["authorization"], "Bearer sk_test_abc")
        self.assertEqual(self.client.get_reservation("rsv_1")["status"], "held")
        self.assertEqual(self.client.release("rsv_1")["status"], "released")
        self.assertEqual(
            [(r["method"], r["path"]) for r in self.api.requests],
            [("POST", "/v1/reservations"), ("GET", "/v1/reservations/rsv_1"), ("POST", "/v1/reservations/rsv_1/release")],
        )
        self.assertIsNone(self.api.requests[2]["body"])

    def test_refusals_raise_with_the_api_code(self):
        with self.assertRaises(BudgetExceededError) as over:
            self.client.reserve("bot-1", 2)
        self.assertIsInstance(over.exception, MeteringApiError)
        self.assertEqual((over.exception.status, over.exception.code, over.exception.request_id),
                         (409, "budget_exceeded", "req_1"))
        self.assertEqual(over.exception.details,
                         [{"alert_id": "alr_1", "threshold": 10, "spent": 9, "held": 0.0, "requested": 2}])
        with self.assertRaises(MeteringApiError) as unknown:
            self.client.release("rsv_nope")
        self.assertEqual((unknown.exception.status, unknown.exception.code), (404, "not_found"))
        held = self.client.reserve("bot-1", 0.5)
        self.client.release(held["id"])
        with self.assertRaises(MeteringApiError) as twice:
            self.client.release(held["id"])
        self.assertEqual(twice.exception.code, "conflict")
        for agent_key, amount in [("", 1), ("bot", 0), ("bot", -1), ("bot", True), ("bot", float("nan"))]:
            with self.assertRaises(TypeError):
                self.client.reserve(agent_key, amount)

    def test_reserved_releases_when_the_block_raises_and_does_not_run_it_over_budget(self):
        with reserved(self.client, "bot-1", 0.3) as reservation:
            self.client.action("bot-1", "llm_call", metadata={"reservation_id": reservation["id"]})
        self.assertEqual(self.api.reservations["rsv_1"]["status"], "held")  # the event settles it
        with self.assertRaises(RuntimeError):
            with reserved(self.client, "bot-1", 0.3):
                raise RuntimeError("model down")
        self.assertEqual(self.api.reservations["rsv_2"]["status"], "released")
        ran = []
        with self.assertRaises(BudgetExceededError):
            with reserved(self.client, "bot-1", 5):
                ran.append(True)
        self.assertEqual(ran, [])


class FakeBudgetClient:
    """Records events, reservations and releases; refuses reservations beyond ``available``."""

    def __init__(self, available=1.0):
        self.available = available
        self.events, self.reserved, self.released = [], [], []

    def action(self, agent_key, type, metadata=None):
        self.events.append({"agent_key": agent_key, "type": type, "metadata": metadata})

    def reserve(self, agent_key, amount, ttl_seconds=None, description=None):
        if sum(a for _, a, _ in self.reserved) + amount > self.available:
            raise BudgetExceededError("over budget", [{"alert_id": "alr_1"}])
        reservation_id = f"rsv_{len(self.reserved) + 1}"
        self.reserved.append((agent_key, amount, ttl_seconds))
        return {"id": reservation_id}

    def release(self, reservation_id):
        self.released.append(reservation_id)


def llm_result(usage):
    message = SimpleNamespace(usage_metadata=usage, response_metadata={"model_name": "gpt-4o-mini"})
    return SimpleNamespace(generations=[[SimpleNamespace(message=message)]], llm_output=None)


class LangChainBudgetTest(unittest.TestCase):
    def test_reserves_at_start_settles_with_the_llm_call_releases_on_error_and_stops_over_budget(self):
        client = FakeBudgetClient(available=1.0)
        handler = MeteringCallbackHandler(
            client, "lg-agent", budget_estimate=lambda params: 0.4 if params.get("model") else 0.1, budget_ttl_seconds=30
        )
        self.assertTrue(handler.raise_error)
        run = uuid.uuid4()
        handler.on_chat_model_start({}, [[]], run_id=run, invocation_params={"model": "gpt-4o-mini"})
        self.assertEqual(client.reserved, [("lg-agent", 0.4, 30)])
        handler.on_llm_end(llm_result({"input_tokens": 10, "output_tokens": 5}), run_id=run)
        self.assertEqual(client.events[0]["metadata"]["reservation_id"], "rsv_1")

        failed = uuid.uuid4()
        handler.on_llm_start({}, ["hi"], run_id=failed, invocation_params={})
        handler.on_llm_error(RuntimeError("down"), run_id=failed)
        self.assertEqual(client.released, ["rsv_2"])

        with self.assertRaises(BudgetExceededError):
            handler.on_chat_model_start({}, [[]], run_id=uuid.uuid4(), invocation_params={"model": "big"})
            handler.on_chat_model_start({}, [[]], run_id=uuid.uuid4(), invocation_params={"model": "big"})
        self.assertEqual(len(client.events), 1)

    def test_without_a_budget_it_reserves_nothing_and_raises_nothing(self):
        client = FakeBudgetClient(available=0)
        handler = MeteringCallbackHandler(client, "lg-agent")
        self.assertFalse(handler.raise_error)
        run = uuid.uuid4()
        handler.on_chat_model_start({}, [[]], run_id=run)
        handler.on_llm_end(llm_result({"input_tokens": 1, "output_tokens": 1}), run_id=run)
        self.assertEqual(client.reserved, [])
        self.assertNotIn("reservation_id", client.events[0]["metadata"])


class CrewAIBudgetTest(unittest.TestCase):
    def listener(self, client, **options):
        return MeteringEventListener(client, "crew-1", event_bus=None, event_type=None, budget_estimate=0.3, **options)

    def test_settles_by_call_id_and_in_call_order_and_releases_failed_calls(self):
        client = FakeBudgetClient(available=1.0)
        listener = self.listener(client)
        usage = {"prompt_tokens": 10, "completion_tokens": 5}
        listener.reserve_for_call(SimpleNamespace(call_id="c1", model="openai/gpt-4o"))
        listener.reserve_for_call(SimpleNamespace(model="openai/gpt-4o"))
        listener.reserve_for_call(SimpleNamespace(model="openai/gpt-4o"))
        listener.record_llm_call(SimpleNamespace(call_id="c1", model="openai/gpt-4o", usage=usage))
        listener.record_llm_call(SimpleNamespace(model="openai/gpt-4o", usage=usage))
        listener.release_for_call(SimpleNamespace(model="openai/gpt-4o"))
        self.assertEqual([e["metadata"]["reservation_id"] for e in client.events], ["rsv_1", "rsv_2"])
        self.assertEqual(client.released, ["rsv_3"])
        # Nothing left in flight: a later call records no reservation.
        listener.record_llm_call(SimpleNamespace(model="gpt-4o", usage=usage))
        self.assertNotIn("reservation_id", client.events[2]["metadata"])

    def test_a_call_over_budget_is_reported_not_raised_and_settles_nothing(self):
        client = FakeBudgetClient(available=0.1)
        refused = []
        listener = self.listener(client, on_over_budget=refused.append)
        listener.reserve_for_call(SimpleNamespace(model="gpt-4o"))
        self.assertEqual(len(refused), 1)
        self.assertIsInstance(refused[0], BudgetExceededError)
        listener.record_llm_call(SimpleNamespace(model="gpt-4o", usage={"prompt_tokens": 1}))
        self.assertNotIn("reservation_id", client.events[0]["metadata"])


if __name__ == "__main__":
    unittest.main()
