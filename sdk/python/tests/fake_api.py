"""A local HTTP server that answers like the batch endpoints, or as each test says, and keeps every request."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def accept(request, index=None):
    events = request["body"]["events"]
    return 201, {"results": [{"status": "processed"} for _ in events], "processed": len(events), "duplicates": 0}, {}


def api_error(status, code, details=None):
    body = {"error": {"code": code, "message": f"{code} happened", "request_id": "req_1"}}
    if details is not None:
        body["error"]["details"] = details
    return status, body, {}


class FakeApi:
    """answer(request, index) returns (status, body, headers), or None to drop the connection unanswered."""

    def __init__(self, answer=accept):
        self.answer = answer
        self.requests = []
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                request = {
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(self.rfile.read(length)),
                }
                with api.lock:
                    api.requests.append(request)
                    index = len(api.requests) - 1
                result = api.answer(request, index)
                if result is None:
                    self.close_connection = True
                    return
                status, body, headers = result
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def keys(self, requests=None):
        return [e["idempotency_key"] for r in (self.requests if requests is None else requests) for e in r["body"]["events"]]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
