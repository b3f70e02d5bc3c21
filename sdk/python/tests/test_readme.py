"""The READMEs' Python examples run as written (against a local fake of the batch endpoints)."""

import os
import re
import unittest

from .fake_api import FakeApi

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(os.path.dirname(SDK_ROOT))


def first_example(readme):
    with open(readme, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return next(block for block in blocks if "from agent_metering import Client" in block)


class ReadmeExamples(unittest.TestCase):
    def run_example(self, readme):
        api = FakeApi()
        self.addCleanup(api.close)
        code = re.sub(r'"https?://[^"]+"', repr(api.url), first_example(readme))
        os.environ["METERING_SDK_KEY"] = "sk_test_readme"
        self.addCleanup(os.environ.pop, "METERING_SDK_KEY")
        namespace = {}
        exec(compile(code, readme, "exec"), namespace)
        namespace["metering"].close()
        return {r["path"]: r["body"]["events"] for r in api.requests}

    def test_the_root_readme_example(self):
        sent = self.run_example(os.path.join(REPO_ROOT, "README.md"))
        self.assertEqual([e["action_type"] for e in sent["/v1/actions/batch"]], ["llm_call"])
        self.assertEqual([(e["outcome_type"], e["value"]) for e in sent["/v1/outcomes/batch"]], [("converted_lead", 1200)])

    def test_the_sdk_readme_example(self):
        sent = self.run_example(os.path.join(SDK_ROOT, "README.md"))
        self.assertEqual(sent["/v1/actions/batch"][0]["metadata"], {"model": "gpt-4o-mini", "tokens": 1830, "cost": 0.004})
        self.assertEqual(sent["/v1/outcomes/batch"][0]["outcome_type"], "ticket_resolved")


if __name__ == "__main__":
    unittest.main()
