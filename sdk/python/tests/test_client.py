"""The client against a local fake of the batch endpoints: batching, keys, retries, errors, back-pressure, exit."""

import os
import re
import subprocess
import sys
import threading
import time
import unittest
from datetime import datetime, timezone

from agent_metering import Client, parse_retry_after

from .fake_api import FakeApi, accept, api_error

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ClientTestCase(unittest.TestCase):
    def start(self, answer=accept, **options):
        api = FakeApi(answer)
        self.addCleanup(api.close)
        failures = []
        options.setdefault("min_backoff", 0.001)
        options.setdefault("max_backoff", 0.004)
        client = Client("sk_test_abc", api.url + "/", on_error=failures.append, flush_at_exit=False, **options)
        self.addCleanup(client.close, 10)
        return api, client, failures


class Batching(ClientTestCase):
    def test_full_batches_by_size_then_the_rest_on_flush_in_the_wire_shape(self):
        api, client, failures = self.start(batch_size=500, flush_interval=60)
        for i in range(1200):
            client.action("agent-1", "llm_call", metadata={"tokens": i})
        self.assertTrue(client.flush(10))
        self.assertEqual(sorted(len(r["body"]["events"]) for r in api.requests), [200, 500, 500])
        first = api.requests[0]
        self.assertEqual(first["path"], "/v1/actions/batch")
        self.assertEqual(first["headers"]["authorization"], "Bearer sk_test_abc")
        self.assertEqual(first["headers"]["content-type"], "application/json")
        event = first["body"]["events"][3]
        self.assertEqual(set(event), {"agent_key", "action_type", "metadata", "timestamp", "idempotency_key"})
        self.assertEqual((event["agent_key"], event["action_type"], event["metadata"]), ("agent-1", "llm_call", {"tokens": 3}))
        self.assertRegex(event["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertEqual(len(set(api.keys())), 1200)
        self.assertEqual(client.stats()["processed"], 1200)
        self.assertEqual(client.stats()["pending"], 0)
        self.assertEqual(failures, [])

    def test_a_partial_batch_goes_out_when_the_interval_passes(self):
        api, client, _ = self.start(flush_interval=0.05)
        client.outcome("agent-1", "converted_lead", 12.5)
        client.outcome("agent-1", "converted_lead", 0, idempotency_key="mine")
        deadline = time.monotonic() + 3
        while not api.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(len(api.requests), 1)
        self.assertEqual(api.requests[0]["path"], "/v1/outcomes/batch")
        events = api.requests[0]["body"]["events"]
        self.assertEqual([(e["outcome_type"], e["value"]) for e in events], [("converted_lead", 12.5), ("converted_lead", 0)])
        self.assertEqual(events[1]["idempotency_key"], "mine")

    def test_timestamps_given_as_datetime_or_string(self):
        api, client, _ = self.start()
        client.action("a", "t", timestamp=datetime(2026, 11, 21, 10, 0, tzinfo=timezone.utc))
        client.action("a", "t", timestamp="2026-11-21T11:00:00+01:00")
        client.flush(10)
        self.assertEqual(
            [e["timestamp"] for e in api.requests[0]["body"]["events"]],
            ["2026-11-21T10:00:00.000Z", "2026-11-21T11:00:00+01:00"],
        )

    def test_programmer_errors_raise_at_the_call_and_a_closed_client_refuses_events(self):
        _, client, _ = self.start()
        with self.assertRaises(TypeError):
            client.action("", "t")
        with self.assertRaises(TypeError):
            client.outcome("a", "t", float("nan"))
        with self.assertRaises(TypeError):
            client.outcome("a", "t", "1")
        client.close()
        with self.assertRaises(RuntimeError):
            client.action("a", "t")


class Retries(ClientTestCase):
    def test_5xx_and_dropped_connections_are_retried_with_the_same_keys(self):
        def answer(request, index):
            if index == 0:
                return api_error(503, "internal_error")
            if index == 1:
                return None
            return accept(request)

        api, client, failures = self.start(answer)
        for _ in range(3):
            client.action("a", "llm_call")
        client.flush(10)
        self.assertEqual(len(api.requests), 3)
        keys = [api.keys([r]) for r in api.requests]
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(keys[0], keys[2])
        self.assertEqual(failures, [])
        stats = client.stats()
        self.assertEqual((stats["processed"], stats["retries"], stats["failed"]), (3, 2, 0))

    def test_waits_at_least_retry_after_after_a_429(self):
        times = []

        def answer(request, index):
            times.append(time.monotonic())
            if index == 0:
                return 429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "1"}
            return accept(request)

        _, client, failures = self.start(answer)
        client.action("a", "t")
        client.flush(10)
        self.assertEqual(len(times), 2)
        self.assertGreaterEqual(times[1] - times[0], 0.99)
        self.assertEqual(failures, [])

    def test_backoff_is_exponential_with_jitter_capped_and_never_below_retry_after(self):
        _, client, _ = self.start(min_backoff=0.1, max_backoff=1.0)
        for retry, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (5, 1.0), (9, 1.0)]:
            values = [client.backoff(retry) for _ in range(200)]
            self.assertGreaterEqual(min(values), ceiling / 2)
            self.assertLessEqual(max(values), ceiling)
            self.assertGreater(len(set(values)), 1)
        self.assertTrue(all(client.backoff(1, 5.0) >= 5.0 for _ in range(100)))

    def test_retries_exhausted_reports_the_events(self):
        api, client, failures = self.start(lambda r, i: api_error(500, "internal_error"), max_retries=3)
        client.action("a", "t", idempotency_key="k1")
        client.action("a", "t", idempotency_key="k2")
        client.flush(10)
        self.assertEqual(len(api.requests), 4)
        self.assertEqual(len(failures), 1)
        self.assertEqual((failures[0].reason, failures[0].status, failures[0].code), ("retries_exhausted", 500, "internal_error"))
        self.assertEqual([e["idempotency_key"] for e in failures[0].events], ["k1", "k2"])
        self.assertEqual(client.stats()["failed"], 2)

    def test_a_401_is_not_retried(self):
        api, client, failures = self.start(lambda r, i: api_error(401, "unauthorized"))
        client.action("a", "t")
        client.flush(10)
        self.assertEqual(len(api.requests), 1)
        self.assertEqual([(f.reason, f.status, len(f.events)) for f in failures], [("rejected", 401, 1)])

    def test_the_invalid_events_of_a_400_are_reported_and_the_rest_sent_again(self):
        def answer(request, index):
            if index == 0:
                return api_error(
                    400,
                    "validation_error",
                    [
                        {"path": "events[1].metadata.cost", "message": "cost must be a number ≥ 0"},
                        {"path": "events[3].action_type", "message": "must be 1–100 characters"},
                    ],
                )
            return accept(request)

        api, client, failures = self.start(answer)
        for key in ["k0", "k1", "k2", "k3"]:
            client.action("a", "t", idempotency_key=key)
        client.flush(10)
        self.assertEqual(api.keys([api.requests[1]]), ["k0", "k2"])
        self.assertEqual(
            [(f.reason, f.events[0]["idempotency_key"], f.details) for f in failures],
            [
                ("invalid", "k1", [{"path": "metadata.cost", "message": "cost must be a number ≥ 0"}]),
                ("invalid", "k3", [{"path": "action_type", "message": "must be 1–100 characters"}]),
            ],
        )
        self.assertEqual(failures[0].events[0]["kind"], "action")

    def test_a_batch_too_large_is_split(self):
        api, client, failures = self.start(
            lambda r, i: api_error(413, "payload_too_large") if len(r["body"]["events"]) > 2 else accept(r)
        )
        for _ in range(7):
            client.action("a", "t")
        client.flush(10)
        self.assertEqual(failures, [])
        self.assertEqual(client.stats()["processed"], 7)
        delivered = [r for r in api.requests if len(r["body"]["events"]) <= 2]
        self.assertEqual(len(set(api.keys(delivered))), 7)


class BackPressureAndExit(ClientTestCase):
    def test_callers_wait_when_the_buffer_is_full_and_none_is_lost(self):
        gate = threading.Event()

        def answer(request, index):
            gate.wait(10)
            return accept(request)

        api, client, _ = self.start(answer, batch_size=2, max_buffered_events=4, flush_interval=0.01)
        done = []

        def produce():
            for i in range(7):
                client.action("a", "t", idempotency_key=f"k{i}")
                done.append(i)

        producer = threading.Thread(target=produce)
        producer.start()
        time.sleep(0.3)
        # 4 held (2 being sent, 2 queued): the fifth call waits.
        self.assertEqual(done, [0, 1, 2, 3])
        gate.set()
        producer.join(10)
        self.assertTrue(client.flush(10))
        self.assertEqual(done, list(range(7)))
        self.assertEqual(sorted(api.keys()), [f"k{i}" for i in range(7)])

    def test_close_waits_for_events_being_retried(self):
        api, client, failures = self.start(
            lambda r, i: api_error(503, "internal_error") if i < 3 else accept(r), batch_size=10, flush_interval=60
        )
        for i in range(25):
            client.outcome("a", "o", i)
        self.assertTrue(client.close(20))
        self.assertEqual(failures, [])
        self.assertEqual(client.stats()["processed"], 25)
        self.assertEqual(sorted(e["value"] for r in api.requests[3:] for e in r["body"]["events"]), list(range(25)))

    def test_what_is_buffered_is_sent_at_interpreter_exit(self):
        api = FakeApi()
        self.addCleanup(api.close)
        script = (
            "from agent_metering import Client\n"
            f"c = Client('sk_test_abc', {api.url!r}, flush_interval=3600)\n"
            "for i in range(150): c.action('a', 't', metadata={'i': i})\n"
        )
        env = dict(os.environ, PYTHONPATH=SDK_ROOT)
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=30)
        self.assertEqual(sorted(e["metadata"]["i"] for r in api.requests for e in r["body"]["events"]), list(range(150)))


class RetryAfter(unittest.TestCase):
    def test_seconds_and_http_dates(self):
        self.assertEqual(parse_retry_after("7"), 7.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        now = datetime(2026, 11, 21, 10, 0, tzinfo=timezone.utc).timestamp()
        self.assertEqual(parse_retry_after("Sat, 21 Nov 2026 10:00:05 GMT", now), 5.0)


if __name__ == "__main__":
    unittest.main()
