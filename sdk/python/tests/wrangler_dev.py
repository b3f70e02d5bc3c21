"""`wrangler dev` for the live tests, started the way the project's harnesses start it (test/bench/worker.mjs):
loopback, a free port, migrations applied to fresh local state in a temp dir, its own process group — plus a
kill -9 of the whole group and a restart on the same state and port."""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
WRANGLER = os.path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js")
# The project pins Node 24 (wrangler needs ≥ 22) as a dev dependency; the machine's node may be older.
_PINNED_NODE = os.path.join(ROOT, "node_modules", ".bin", "node")
NODE = os.environ.get("NODE") or (_PINNED_NODE if os.path.exists(_PINNED_NODE) else shutil.which("node") or "node")
ENV = dict(os.environ, WRANGLER_SEND_METRICS="false", CI="true")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WranglerDev:
    def __init__(self, **variables):
        root = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        self.state = tempfile.mkdtemp(prefix="amb-sdk-py-", dir=root)
        migrate = subprocess.run(
            [NODE, WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", self.state],
            cwd=ROOT, env=ENV, capture_output=True, text=True,
        )
        if migrate.returncode != 0:
            raise RuntimeError(f"migrations failed:\n{migrate.stderr}{migrate.stdout}")
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.admin_key = "sk_api_" + secrets.token_hex(24)
        self.variables = {
            "ADMIN_API_KEY": self.admin_key,
            "RATE_LIMIT_SDK_PER_MINUTE": "1000000000",
            "RATE_LIMIT_API_PER_MINUTE": "1000000000",
            **variables,
        }
        self.process = None
        self.start()

    def start(self):
        args = [NODE, WRANGLER, "dev", "--ip", "127.0.0.1", "--port", str(self.port), "--persist-to", self.state]
        args += ["--log-level", "error", "--show-interactive-dev-session=false"]
        for name, value in self.variables.items():
            args += ["--var", f"{name}:{value}"]
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            args, cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.log.seek(0)
        raise RuntimeError(f"wrangler dev did not start:\n{self.log.read().decode(errors='replace')}")

    def _kill(self, sig):
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass

    def crash(self):
        """kill -9 of wrangler and workerd (the whole process group): no shutdown, no flush."""
        self._kill(signal.SIGKILL)
        self.process.wait()
        # workerd may outlive the group leader for a moment; the group is gone once nothing answers.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def restart(self):
        self.log.close()
        self.start()

    def stop(self):
        self._kill(signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self._kill(signal.SIGKILL)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()
        shutil.rmtree(self.state, ignore_errors=True)

    def admin(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Authorization": f"Bearer {self.admin_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def sdk_key(self):
        return self.admin("POST", "/v1/api-keys", {"type": "sdk", "name": "python sdk live test"})["key"]

    def usage(self, agent_key):
        """{"action:llm_call": {count, value}, …} for one instance over the current month."""
        report = self.admin("GET", "/v1/usage?" + urllib.parse.urlencode({"agent_key": agent_key}))
        return {f"{line['kind']}:{line['type']}": line for line in report["usage"]}
