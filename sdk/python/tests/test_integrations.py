"""The LangChain/LangGraph and CrewAI integrations: what they record for an LLM call, from the frameworks' usage
shapes (given here as plain objects, so the tests need neither framework installed)."""

import unittest
import uuid
from types import SimpleNamespace

from agent_metering.crewai import MeteringEventListener, split_model
from agent_metering.langchain import MeteringCallbackHandler
from agent_metering.llm_usage import provider_id, split_tokens, tokens_of_usage


class RecordingClient:
    def __init__(self):
        self.events = []

    def action(self, agent_key, type, metadata=None):
        self.events.append({"agent_key": agent_key, "type": type, "metadata": metadata})


def ai_message(usage=None, model_name=None):
    return SimpleNamespace(usage_metadata=usage, response_metadata={"model_name": model_name} if model_name else {})


def llm_result(*messages, llm_output=None):
    return SimpleNamespace(generations=[[SimpleNamespace(message=m) for m in messages]], llm_output=llm_output)


class TokenSplitTest(unittest.TestCase):
    def test_split_takes_cache_reads_out_of_input_and_reasoning_out_of_output(self):
        self.assertEqual(
            split_tokens(100, 50, 30, 20),
            {"input_tokens": 70, "output_tokens": 30, "cached_input_tokens": 30, "reasoning_tokens": 20},
        )
        self.assertEqual(split_tokens(100, 50), {"input_tokens": 100, "output_tokens": 50})
        self.assertEqual(split_tokens(10, 5, 0, 0), {"input_tokens": 10, "output_tokens": 5})
        self.assertEqual(split_tokens(-1, float("nan"), True), {})

    def test_usage_shapes_of_openai_litellm_anthropic_and_langchain(self):
        openai = {
            "prompt_tokens": 1200,
            "completion_tokens": 300,
            "total_tokens": 1500,
            "prompt_tokens_details": {"cached_tokens": 1000},
            "completion_tokens_details": {"reasoning_tokens": 100},
        }
        expected = {"input_tokens": 200, "cached_input_tokens": 1000, "output_tokens": 200, "reasoning_tokens": 100}
        self.assertEqual(tokens_of_usage(openai), expected)
        self.assertEqual(tokens_of_usage(SimpleNamespace(**openai)), expected)
        anthropic = {
            "input_tokens": 150,
            "cache_creation_input_tokens": 50,
            "cache_read_input_tokens": 1000,
            "output_tokens": 300,
        }
        self.assertEqual(
            tokens_of_usage(anthropic), {"input_tokens": 200, "cached_input_tokens": 1000, "output_tokens": 300}
        )
        langchain = {
            "input_tokens": 1200,
            "output_tokens": 300,
            "input_token_details": {"cache_read": 1000},
            "output_token_details": {"reasoning": 100},
        }
        self.assertEqual(tokens_of_usage(langchain), expected)
        self.assertEqual(tokens_of_usage({"cached_prompt_tokens": 5, "prompt_tokens": 8, "completion_tokens": 1}),
                         {"input_tokens": 3, "cached_input_tokens": 5, "output_tokens": 1})
        self.assertEqual(tokens_of_usage(None), {})

    def test_provider_ids(self):
        for name, expected in [
            ("openai", "openai"),
            ("openai.chat", "openai"),
            ("OpenAI", "openai"),
            ("google_genai", "google"),
            ("gemini", "google"),
            ("mistralai", "mistral"),
            ("deepseek", "deepseek"),
            ("xai", "xai"),
            ("anthropic", "anthropic"),
        ]:
            self.assertEqual(provider_id(name), expected, name)
        self.assertIsNone(provider_id(""))
        self.assertIsNone(provider_id(None))


class LangChainHandlerTest(unittest.TestCase):
    def setUp(self):
        self.client = RecordingClient()
        self.handler = MeteringCallbackHandler(self.client, "lc-agent", metadata={"graph": "triage"})

    def test_records_a_chat_model_call_with_model_provider_and_the_four_counts(self):
        run = uuid.uuid4()
        self.handler.on_chat_model_start(
            {}, [[]], run_id=run, metadata={"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}
        )
        usage = {
            "input_tokens": 1200,
            "output_tokens": 300,
            "total_tokens": 1500,
            "input_token_details": {"cache_read": 1024},
            "output_token_details": {"reasoning": 120},
        }
        self.handler.on_llm_end(llm_result(ai_message(usage, "gpt-4o-mini-2024-07-18")), run_id=run)
        self.assertEqual(
            self.client.events,
            [
                {
                    "agent_key": "lc-agent",
                    "type": "llm_call",
                    "metadata": {
                        "graph": "triage",
                        "model": "gpt-4o-mini-2024-07-18",
                        "provider": "openai",
                        "input_tokens": 176,
                        "output_tokens": 180,
                        "cached_input_tokens": 1024,
                        "reasoning_tokens": 120,
                        "tokens": 1500,
                    },
                }
            ],
        )

    def test_adds_the_usage_of_several_generations_and_falls_back_to_llm_output(self):
        run = uuid.uuid4()
        self.handler.on_llm_start({}, ["hi"], run_id=run, invocation_params={"model": "mistral-small-latest"},
                                  metadata={"ls_provider": "mistralai"})
        self.handler.on_llm_end(
            llm_result(ai_message({"input_tokens": 10, "output_tokens": 5}),
                       ai_message({"input_tokens": 20, "output_tokens": 5})),
            run_id=run,
        )
        older = uuid.uuid4()
        self.handler.on_llm_start({}, ["hi"], run_id=older, invocation_params={"model_name": "gpt-4o"})
        self.handler.on_llm_end(
            llm_result(ai_message(), llm_output={"token_usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
            run_id=older,
        )
        first, second = (e["metadata"] for e in self.client.events)
        self.assertEqual(first["model"], "mistral-small-latest")
        self.assertEqual(first["provider"], "mistral")
        self.assertEqual((first["input_tokens"], first["output_tokens"], first["tokens"]), (30, 10, 40))
        self.assertEqual(second["model"], "gpt-4o")
        self.assertNotIn("provider", second)
        self.assertEqual((second["input_tokens"], second["output_tokens"]), (7, 3))

    def test_records_tool_runs_and_forgets_failed_llm_calls(self):
        run = uuid.uuid4()
        self.handler.on_chat_model_start({}, [[]], run_id=run)
        self.handler.on_llm_error(RuntimeError("boom"), run_id=run)
        tool = uuid.uuid4()
        self.handler.on_tool_start({"name": "search"}, "query", run_id=tool)
        self.handler.on_tool_error(RuntimeError("timeout"), run_id=tool)
        self.assertEqual(len(self.client.events), 1)
        event = self.client.events[0]
        self.assertEqual(event["type"], "tool_call")
        self.assertEqual(event["metadata"]["tool"], "search")
        self.assertFalse(event["metadata"]["ok"])

    def test_a_failing_client_never_breaks_the_call(self):
        class Broken:
            def action(self, *args, **kwargs):
                raise RuntimeError("buffer closed")

        handler = MeteringCallbackHandler(Broken(), "a")
        run = uuid.uuid4()
        handler.on_chat_model_start({}, [[]], run_id=run)
        handler.on_llm_end(llm_result(ai_message({"input_tokens": 1, "output_tokens": 1})), run_id=run)


class CrewAIListenerTest(unittest.TestCase):
    def test_split_model(self):
        self.assertEqual(split_model("anthropic/claude-sonnet-4-5"), ("anthropic", "claude-sonnet-4-5"))
        self.assertEqual(split_model("gpt-4o"), (None, "gpt-4o"))
        self.assertEqual(split_model(None), (None, None))

    def test_records_each_completed_llm_call_from_the_event_bus(self):
        class Completed:
            def __init__(self, **fields):
                self.__dict__.update(fields)

        class Bus:
            def __init__(self):
                self.handlers = {}

            def on(self, event_type):
                def register(handler):
                    self.handlers.setdefault(event_type, []).append(handler)
                    return handler

                return register

            def emit(self, source, event):
                for handler in self.handlers.get(type(event), []):
                    handler(source, event)

        client = RecordingClient()
        bus = Bus()
        MeteringEventListener(client, "crew-1", event_bus=bus, event_type=Completed, metadata={"crew": "research"})
        bus.emit(None, Completed(
            model="openai/gpt-4o",
            agent_role="Researcher",
            usage={
                "prompt_tokens": 2000,
                "completion_tokens": 500,
                "prompt_tokens_details": {"cached_tokens": 1500},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        ))
        # No usage on the event: read it from the LiteLLM response.
        bus.emit(None, Completed(
            model="gemini/gemini-2.5-flash",
            response=SimpleNamespace(usage=SimpleNamespace(prompt_tokens=40, completion_tokens=60,
                                                           completion_tokens_details={"reasoning_tokens": 25})),
        ))
        first, second = client.events
        self.assertEqual(first["agent_key"], "crew-1")
        self.assertEqual(first["metadata"], {
            "crew": "research",
            "crew_agent": "Researcher",
            "model": "gpt-4o",
            "provider": "openai",
            "input_tokens": 500,
            "output_tokens": 500,
            "cached_input_tokens": 1500,
            "tokens": 2500,
        })
        self.assertEqual(second["metadata"]["provider"], "google")
        self.assertEqual(second["metadata"]["model"], "gemini-2.5-flash")
        self.assertEqual(
            (second["metadata"]["input_tokens"], second["metadata"]["output_tokens"],
             second["metadata"]["reasoning_tokens"]),
            (40, 35, 25),
        )


if __name__ == "__main__":
    unittest.main()
