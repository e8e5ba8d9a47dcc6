"""A real HTTP server on 127.0.0.1 speaking the Chat Completions shape, for judge and backend tests.

The reply is chosen by the prediction inside the judge prompt ("Model Prediction: ..."):
  scenario:prose        valid JSON inside prose
  scenario:wrongfields  JSON with the wrong fields, every time
  scenario:flaky-format malformed once, then valid
  scenario:ratelimit    429 twice, then valid
  scenario:error500     500 once, then valid
  scenario:slow         unanswered until the client gives up and asks again (its timeout, whatever it is), then valid
  scenario:echo-auth    401 whose body echoes the Authorization header
anything else: a verdict from simple rules (refusal if the prediction says the video lacks the
information; judgement per the paper's Case A / Case B). Every request is counted per prediction.

A letter-grade prompt (a test's own, with "Target to match: ..." and "Reply to grade: ..." lines; never the
authors' text) is answered with a grade letter: "A" where the prediction contains the gold target, "C" where it
says it cannot tell, else "B"; and by scenario:
  scenario:grade-lower  "b" (a lower-case letter)
  scenario:grade-spaced "  A  " and a newline
  scenario:garbage      "The grade is A", every time (not a letter first)
  scenario:empty        "", every time
  scenario:flaky-grade  "?" once, then "A"
Each letter-grade request's parameters (its messages' roles in place of the messages) are kept in `grader_bodies`.

With `echo_auth=True` the server repeats what a careless proxy or a debugging endpoint might: every reply, otherwise
valid (a verdict, a grade letter, a model's answer, the CVRR-ES reason), and every error body carries the request's
Authorization header and its bare key, and the reported model snapshot ends with the key. `judge_faults` injects a
fault at the n-th judge request (1-based), as `backend_faults` does for model requests: "500" (500 once).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections import Counter

REFUSAL = "The video does not provide enough information"


class FakeOpenAI:
    def __init__(
        self,
        slow_s: float = 60.0,
        backend_faults: dict[int, str] | None = None,
        backend_delay_s: float = 0.0,
        valid_key: str | None = None,
        echo_auth: bool = False,
        judge_faults: dict[int, str] | None = None,
        port: int = 0,
    ):
        self.requests: Counter[str] = Counter()
        self.echo_auth = echo_auth
        self.echoed = 0  # replies and error bodies that carried the request's key
        self.judge_faults = judge_faults or {}
        self.judge_requests = 0
        self.valid_key = valid_key  # GET /models answers 401 to any other key (None: every key is good)
        # Backend mode (requests carrying images): fault injected at the n-th request (1-based), by kind:
        # "429", "500", "slow", "malformed" (HTTP 200 whose body is not JSON), "nochoices", "length" (a reply cut
        # off at the token limit) and "length-null" (no content at all: the whole limit spent reasoning).
        self.backend_faults = backend_faults or {}
        self.backend_delay_s = backend_delay_s
        self.backend_requests = 0
        # Model requests are counted per item, FakeOpenAI.item(question, content): two instances may share a question
        # (the demo asks "What colour is the border around the picture?" of several videos), never their frames too.
        self.answered: Counter[str] = Counter()  # item -> successful replies (a reply the client gave up on included)
        self.fault_items: dict[int, str] = {}  # the n-th model request's item, for each n in backend_faults
        self.fault_callers: dict[int, str] = {}  # the n-th model request's Authorization header, for each n in backend_faults
        # (item, Authorization header) -> model requests: a test that gives each run of a job its own key tells the runs'
        # requests apart by who sent them, not by when they arrived (a request of a killed run may be counted late).
        self.asked_by: Counter[tuple[str, str]] = Counter()
        self.images_seen: list[int] = []
        self.bodies: list[dict] = []  # each backend request's parameters (messages left out)
        self.grader_bodies: list[dict] = []  # each letter-grade request's parameters (its messages' roles, not their text)
        self.judge_bodies: list[dict] = []  # each llm judge request's parameters (messages left out)
        self.labels_seen: list[list[str]] = []  # each backend request's text parts before its prompt
        self.authorizations: set[str] = set()
        # A slow request is held until the same item is asked again (the client timed out and retried), at most
        # `slow_s`: no race between a fixed delay and the client's timeout on a loaded machine.
        self.slow_s = slow_s
        self.lock = threading.Lock()
        self.asked_again = threading.Condition(self.lock)
        self.backend_asked: Counter[str] = Counter()  # item -> backend requests
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.handle(self, body)

            def do_GET(self):  # the health check OpenAI-compatible servers offer
                if not self.path.rstrip("/").endswith("/models"):
                    return server._send(self, 404, {"error": {"message": "not found"}})
                if server.valid_key and self.headers.get("Authorization") != f"Bearer {server.valid_key}":
                    return server._send(self, 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
                server._send(self, 200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def log_message(self, *args):
                pass

        # port 0: any free one; another (a documented server's, tests/models/test_models_doc.py): OSError where it is taken
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.slow_s = 0.0
            self.asked_again.notify_all()  # release a held request
        self.httpd.shutdown()
        self.httpd.server_close()  # the port is free again at once

    @staticmethod
    def item(question: str, content: list[dict]) -> str:
        """A model request's item: its question and a digest of its images (the frames of one video at one level), so
        that two instances sharing a question are told apart; a test gets an instance's from build_messages."""
        import hashlib

        images = "".join(part["image_url"]["url"] for part in content if part["type"] == "image_url")
        return f"{question} [{hashlib.sha1(images.encode()).hexdigest()[:12]}]"

    def _hold_until_asked_again(self, counter: Counter[str], key: str, seen: int) -> None:
        """Until `counter[key]` passes `seen` (the count when this request came), the server closes, or `slow_s`."""
        with self.lock:
            self.asked_again.wait_for(lambda: counter[key] > seen or self.slow_s == 0.0, timeout=self.slow_s)

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def echo(self, handler) -> str:
        """The request's credentials as an endpoint that echoes them writes them ("" unless echo_auth)."""
        if not self.echo_auth:
            return ""
        authorization = handler.headers.get("Authorization", "")
        with self.lock:
            self.echoed += 1
        return f" [request headers: Authorization: {authorization}; api key: {authorization.removeprefix('Bearer ')}]"

    def _snapshot(self, handler, body: dict) -> str:
        """The model the reply names: the requested one plus "-snapshot" (plus the key, with echo_auth)."""
        echoed = handler.headers.get("Authorization", "").removeprefix("Bearer ") if self.echo_auth else ""
        return body["model"] + "-snapshot" + (f"-{echoed}" if echoed else "")

    def _send(self, handler, status: int, payload: dict, headers: dict | None = None) -> None:
        if status >= 400 and self.echo_auth and isinstance(payload.get("error"), dict):
            payload = {"error": {**payload["error"], "message": payload["error"].get("message", "") + self.echo(handler)}}
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def handle(self, handler, body: dict) -> None:
        content = body["messages"][-1]["content"]
        if isinstance(content, list):
            return self.handle_backend(handler, body, content)
        if "Target to match: " in content:
            return self.handle_grader(handler, body, content)
        prediction = re.search(r"(?:Model Prediction|Predicted Answer): (.*)", content).group(1).strip()
        truth = re.search(r"(?:Ground Truth Answer|Ground truth correct Answer): (.*)", content).group(1).strip()
        with self.lock:
            self.requests[prediction] += 1
            count = self.requests[prediction]
            self.judge_requests += 1
            self.judge_bodies.append({key: value for key, value in body.items() if key != "messages"})
            fault = self.judge_faults.get(self.judge_requests)
            self.authorizations.add(handler.headers.get("Authorization", ""))
            self.asked_again.notify_all()
        if fault == "500":
            return self._send(handler, 500, {"error": {"message": "boom", "type": "server_error"}})
        if prediction == "scenario:ratelimit" and count <= 2:
            return self._send(handler, 429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"Retry-After": "0"})
        if prediction == "scenario:error500" and count == 1:
            return self._send(handler, 500, {"error": {"message": "boom", "type": "server_error"}})
        if prediction == "scenario:slow" and count == 1:
            self._hold_until_asked_again(self.requests, prediction, count)
        if prediction == "scenario:echo-auth":
            return self._send(handler, 401, {"error": {"message": f"bad key {handler.headers.get('Authorization')}", "type": "auth"}})
        if "Python dictionary" in content:  # the CVRR-ES prompt
            correct = prediction.lower().split(".")[0] == truth.lower().split(".")[0]
            reason = "fake" + self.echo(handler)
            reply = str({"pred": "correct" if correct else "incorrect", "score": 5 if correct else 1, "reason": reason})
        elif prediction == "scenario:prose":
            reply = 'Here is my evaluation: {"refusal": 0, "judgement": 1}. Hope that helps!'
        elif prediction == "scenario:wrongfields" or (prediction == "scenario:flaky-format" and count == 1):
            reply = '{"refusal": 0, "correct": 1}'
        else:
            refusal = int("not provide enough information" in prediction.lower() or "cannot" in prediction.lower())
            if truth.startswith(REFUSAL):
                judgement = refusal
            else:
                judgement = int(not refusal and truth.lower().strip(".") in prediction.lower())
            reply = json.dumps({"refusal": refusal, "judgement": judgement})
        if "Python dictionary" not in content:  # the CVRR-ES reply echoes inside its reason
            reply += self.echo(handler)
        self._reply(handler, body, content, reply)

    def _reply(self, handler, body: dict, content: str, reply: str) -> None:
        self._send(
            handler,
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": self._snapshot(handler, body),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(content) // 4, "completion_tokens": 12, "total_tokens": len(content) // 4 + 12},
            },
        )

    def handle_grader(self, handler, body: dict, content: str) -> None:
        """A letter-grade request: one user message, answered with a grade letter (see the module's docstring)."""
        prediction = re.search(r"Reply to grade: (.*)", content).group(1).strip()
        target = re.search(r"Target to match: (.*)", content).group(1).strip()
        with self.lock:
            self.requests[prediction] += 1
            count = self.requests[prediction]
            self.authorizations.add(handler.headers.get("Authorization", ""))
            self.grader_bodies.append(
                {**{key: value for key, value in body.items() if key != "messages"}, "roles": [m["role"] for m in body["messages"]]}
            )
        scripted = {
            "scenario:grade-lower": "b",
            "scenario:grade-spaced": "  A  \n",
            "scenario:garbage": "The grade is A",
            "scenario:empty": "",
        }
        if prediction in scripted:
            reply = scripted[prediction]
        elif prediction == "scenario:flaky-grade":
            reply = "?" if count == 1 else "A"
        elif target.lower() in prediction.lower():
            reply = "A"
        elif "cannot tell" in prediction.lower():
            reply = "C"
        else:
            reply = "B"
        self._reply(handler, body, content, reply + self.echo(handler))

    #: Gemini 2.5's thinking tokens at most, by `reasoning_effort` (its OpenAI compatibility maps the levels to budgets;
    #: none turns thinking off on Flash only), and with none given: dynamic thinking, up to the model's maximum budget
    #: (Flash 24,576, Pro 32,768: the Gemini API's thinking guide). Its OpenAI compatibility counts them against
    #: max_tokens, so a limit below the budget can leave no room for the answer. This fake spends the whole budget.
    GEMINI_THINKING = {"none": 0, "low": 1024, "medium": 8192, "high": 24576}
    GEMINI_MAX_BUDGET = {"gemini-2.5-flash": 24576, "gemini-2.5-pro": 32768}

    def thinking_tokens(self, body: dict) -> int:
        model = str(body.get("model", ""))
        if model not in self.GEMINI_MAX_BUDGET:
            return 0
        effort = body.get("reasoning_effort")
        return self.GEMINI_THINKING[effort] if effort in self.GEMINI_THINKING else self.GEMINI_MAX_BUDGET[model]

    def rejected_parameter(self, body: dict) -> dict | None:
        """What the real API rejects with HTTP 400 for a reasoning model (gpt-5, o-series; not gpt-5-chat):
        a temperature other than 1, and max_tokens. The bodies are OpenAI's."""
        model = body["model"]
        if not re.match(r"(gpt-5(?!-chat)|o\d)", model):
            return None
        if "temperature" in body and body["temperature"] != 1:
            return {
                "message": f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                "Only the default (1) value is supported.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }
        if "max_tokens" in body:
            return {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        return None

    def handle_backend(self, handler, body: dict, content: list) -> None:
        """A model request: images then the prompt; the answer names the number of frames seen."""
        with self.lock:
            self.bodies.append({key: value for key, value in body.items() if key != "messages"})
            self.backend_requests += 1
            number = self.backend_requests
            self.authorizations.add(handler.headers.get("Authorization", ""))
        rejected = self.rejected_parameter(body)
        if rejected:
            return self._send(handler, 400, {"error": rejected})
        fault = self.backend_faults.get(number)
        prompt = content[-1]["text"]
        item = self.item(prompt.split("Question:")[-1].strip(), content)
        caller = handler.headers.get("Authorization", "")
        with self.lock:
            self.backend_asked[item] += 1
            self.asked_by[(item, caller)] += 1
            asked = self.backend_asked[item]
            if fault:
                self.fault_items[number] = item
                self.fault_callers[number] = caller
            self.asked_again.notify_all()
        images = sum(part["type"] == "image_url" for part in content)
        if fault == "429":
            return self._send(handler, 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if fault == "500":
            return self._send(handler, 500, {"error": {"message": "boom"}})
        if fault == "slow":
            self._hold_until_asked_again(self.backend_asked, item, asked)
        if fault == "malformed":
            data = b"<html>not json</html>"
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        if fault == "nochoices":
            return self._send(handler, 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"], "choices": []})
        if fault in ("length", "length-null"):
            content_out = "The car is probably" if fault == "length" else None
            message = {"role": "assistant", "content": content_out}
            choice = {"index": 0, "message": message, "finish_reason": "length"}
            return self._send(
                handler, 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"], "choices": [choice]}
            )
        thinking, limit = self.thinking_tokens(body), body.get("max_completion_tokens") or body.get("max_tokens")
        if limit is not None and thinking + 5 > limit:  # the whole limit spent thinking: no answer, as Gemini's API does
            choice = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "length"}
            usage = {"prompt_tokens": 100 * images, "completion_tokens": limit, "completion_tokens_details": {"reasoning_tokens": limit}}
            return self._send(
                handler,
                200,
                {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"], "choices": [choice], "usage": usage},
            )
        time.sleep(self.backend_delay_s)
        with self.lock:
            self.answered[item] += 1
            self.images_seen.append(images)
            self.labels_seen.append([part["text"] for part in content[:-1] if part["type"] == "text"])
        self._send(
            handler,
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": self._snapshot(handler, body),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"I saw {images} frames.{self.echo(handler)}"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 100 * images,
                    "completion_tokens": thinking + 5,
                    "total_tokens": 100 * images + thinking + 5,
                    **({"completion_tokens_details": {"reasoning_tokens": thinking}} if thinking else {}),
                },
            },
        )


def api_entry(server: FakeOpenAI) -> dict:
    """A registry entry for a model behind `server` (OpenAI-compatible, greedy, no key): the workflow tests' `api`."""
    return {
        "backend": "openai",
        "family": "openai",
        "env": "envs/api.yaml",
        "verified": "a fake Chat Completions server (tests/helpers/fake_openai.py)",
        "settings": {"model": "fake-vlm", "base_url": server.base_url, "api_key_env": None, "temperature": 0.0, "max_tokens": 64},
    }
