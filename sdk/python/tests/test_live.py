"""The SDK against a real `wrangler dev`: 10,000 events with the server killed (kill -9) and restarted on the same
state in the middle, each counted exactly once; a 429 storm backed off and completed; close() and the exit hook
losing nothing."""

import os
import secrets
import subprocess
import sys
import threading
import time
import unittest

from agent_metering import BudgetExceededError, Client, MeteringApiError, reserved
from agent_metering import client as client_module
from agent_metering._transport import Attempt

from .wrangler_dev import WranglerDev

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def unique(name):
    return f"{name}-{secrets.token_hex(4)}"


def recording_client(worker, sdk_key, **options):
    failures = []
    options.setdefault("flush_at_exit", False)
    client = Client(sdk_key, worker.base, on_error=failures.append, **options)
    return client, failures


class AgainstWranglerDev(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.worker = WranglerDev()
        cls.sdk_key = cls.worker.sdk_key()

    @classmethod
    def tearDownClass(cls):
        cls.worker.stop()

    def test_10000_events_are_counted_exactly_once_across_a_kill_and_restart(self):
        agent_key = unique("py-crash")
        # The server is killed (kill -9) right after it recorded the 40th batch (of about 100), and that answer is
        # lost on the way: the client cannot know the batch was recorded, sends it again once the server is back,
        # and the idempotency keys make the server answer "duplicate" instead of counting it twice.
        requests = []
        restarter = threading.Thread(target=lambda: (time.sleep(0.5), self.worker.restart()))

        def send_then_crash(*args, **kwargs):
            attempt = real_send(*args, **kwargs)
            requests.append(attempt)
            if len(requests) == 40:
                self.worker.crash()
                restarter.start()
                return Attempt("retry", message="network error: the server died before its answer arrived")
            return attempt

        real_send = client_module.send_batch
        client_module.send_batch = send_then_crash
        self.addCleanup(setattr, client_module, "send_batch", real_send)
        client, failures = recording_client(
            self.worker, self.sdk_key, batch_size=100, max_buffered_events=1000, flush_interval=0.05,
            min_backoff=0.1, max_backoff=2.0, max_retries=200, request_timeout=15,
        )
        start = time.monotonic()
        for i in range(10_000):
            # Outcomes every fourth event, with values whose sum is known.
            if i % 4 == 3:
                client.outcome(agent_key, "task_done", i % 10)
            else:
                client.action(agent_key, "llm_call", metadata={"tokens": 10})
        self.assertTrue(client.flush(300))
        self.assertTrue(restarter.ident is not None, "the server was killed in the middle")
        restarter.join(120)
        self.assertTrue(client.close(300))
        stats = client.stats()
        print(
            f"\n# 10,000 events across a crash in {time.monotonic() - start:.1f} s: {stats['requests']} requests, "
            f"{stats['retries']} retries, {stats['duplicates']} answered duplicate",
            file=sys.stderr,
        )
        self.assertEqual(failures, [])
        self.assertEqual(stats["failed"], 0)
        self.assertEqual(stats["processed"] + stats["duplicates"], 10_000)
        self.assertGreater(stats["retries"], 0, "the crash made the client retry")
        self.assertGreaterEqual(stats["duplicates"], 100, "the batch whose answer was lost was answered duplicate")
        usage = self.worker.usage(agent_key)
        self.assertEqual(usage["action:llm_call"]["count"], 7500)
        self.assertEqual(usage["outcome:task_done"]["count"], 2500)
        # Outcome i has value i % 10 for i = 3, 7, 11, …: the values cycle 3, 7, 1, 5, 9 (sum 25 per 5).
        self.assertEqual(usage["outcome:task_done"]["value"], 2500 / 5 * 25)

    def test_close_loses_nothing_that_is_still_buffered(self):
        agent_key = unique("py-close")
        client, failures = recording_client(self.worker, self.sdk_key, batch_size=1000, flush_interval=3600)
        for _ in range(2500):
            client.action(agent_key, "tool_call")
        self.assertGreater(client.stats()["pending"], 0)
        self.assertTrue(client.close(120))
        self.assertEqual(failures, [])
        self.assertEqual(self.worker.usage(agent_key)["action:tool_call"]["count"], 2500)

    def test_the_exit_hook_flushes_a_client_never_closed(self):
        agent_key = unique("py-atexit")
        script = (
            "from agent_metering import Client\n"
            f"c = Client({self.sdk_key!r}, {self.worker.base!r}, flush_interval=3600)\n"
            f"for i in range(1500): c.outcome({agent_key!r}, 'converted_lead', 2)\n"
        )
        env = dict(os.environ, PYTHONPATH=SDK_ROOT)
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
        line = self.worker.usage(agent_key)["outcome:converted_lead"]
        self.assertEqual((line["count"], line["value"]), (1500, 3000))

    def test_events_sent_again_with_the_same_keys_are_counted_once(self):
        agent_key = unique("py-again")

        def send():
            client, failures = recording_client(self.worker, self.sdk_key)
            for i in range(300):
                client.action(agent_key, "llm_call", idempotency_key=f"run-7-step-{i}")
            client.close(60)
            self.assertEqual(failures, [])
            return client.stats()

        self.assertEqual([send()["processed"], send()["duplicates"]], [300, 300])
        self.assertEqual(self.worker.usage(agent_key)["action:llm_call"]["count"], 300)

    def test_an_invalid_event_is_reported_and_the_rest_of_its_batch_recorded(self):
        agent_key = unique("py-invalid")
        client, failures = recording_client(self.worker, self.sdk_key)
        client.action(agent_key, "llm_call", idempotency_key="ok-1")
        client.action(agent_key, "llm_call", metadata={"cost": -1}, idempotency_key="bad")
        client.action(agent_key, "llm_call", idempotency_key="ok-2")
        client.close(60)
        self.assertEqual([(f.reason, [e["idempotency_key"] for e in f.events]) for f in failures], [("invalid", ["bad"])])
        self.assertIn("cost", failures[0].message)
        self.assertEqual(self.worker.usage(agent_key)["action:llm_call"]["count"], 2)

    def test_a_budget_is_reserved_refused_settled_by_the_event_and_released(self):
        agent_key = unique("py-budget")
        plan = self.worker.admin("POST", "/v1/pricing/rate-plans", {"name": "Calls", "base_fee": 10, "charges": [
            {"metric": "calls", "source": {"kind": "action", "type": "llm_call", "aggregate": "count"},
             "model": "per_unit", "unit_price": 0.01}]})
        account = self.worker.admin("POST", "/v1/accounts", {"name": "Budget", "email": "b@example.test"})
        subscription = self.worker.admin("POST", "/v1/subscriptions", {
            "account_id": account["id"], "rate_plan_id": plan["id"], "agent_instance_ids": [agent_key]})
        self.worker.admin("POST", "/v1/alerts", {"subscription_id": subscription["id"], "threshold": 11, "block": True})
        client, failures = recording_client(self.worker, self.sdk_key)
        with reserved(client, agent_key, 0.6, ttl_seconds=60) as reservation:
            with self.assertRaises(BudgetExceededError) as over:
                client.reserve(agent_key, 0.5)
            self.assertEqual(over.exception.details[0]["held"], 0.6)
            client.action(agent_key, "llm_call", metadata={"reservation_id": reservation["id"]})
        client.flush(60)
        self.assertEqual(client.get_reservation(reservation["id"])["status"], "settled")
        spare = client.reserve(agent_key, 0.5)
        self.assertEqual(client.release(spare["id"])["status"], "released")
        with self.assertRaises(MeteringApiError) as twice:
            client.release(spare["id"])
        self.assertEqual(twice.exception.code, "conflict")
        client.close(60)
        self.assertEqual(failures, [])


class InA429Storm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.worker = WranglerDev(RATE_LIMIT_SDK_PER_MINUTE="5")

    @classmethod
    def tearDownClass(cls):
        cls.worker.stop()

    def test_the_client_backs_off_as_retry_after_says_and_completes(self):
        agent_key = unique("py-storm")
        client, failures = recording_client(self.worker, self.worker.sdk_key(), batch_size=100, min_backoff=0.1)
        # The limiter counts in fixed minutes: start early enough in one that the first 6 of the 10 requests fall in
        # it, so that the sixth at least is refused, and every refused one waits for the next minute (Retry-After).
        if time.time() % 60 > 45:
            time.sleep(60.1 - time.time() % 60)
        start = time.monotonic()
        for _ in range(1000):
            client.action(agent_key, "llm_call")
        self.assertTrue(client.close(300))
        stats = client.stats()
        print(f"\n# 1,000 events at 5 requests a minute in {time.monotonic() - start:.1f} s, {stats['retries']} retries", file=sys.stderr)
        self.assertEqual(failures, [])
        self.assertGreaterEqual(stats["retries"], 1, "requests were refused with 429")
        self.assertGreaterEqual(time.monotonic() - start, 60 - 46, "and waited for the next minute")
        self.assertEqual(stats["processed"], 1000)
        self.assertEqual(self.worker.usage(agent_key)["action:llm_call"]["count"], 1000)


if __name__ == "__main__":
    unittest.main()
