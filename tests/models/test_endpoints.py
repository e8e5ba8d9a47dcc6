"""A dead OpenAI-compatible endpoint stops a job in seconds, before its first item, with an error that names the
model (or judge), the base_url and the key's variable, never the key: a closed local port (connection refused), a
host that does not resolve, a TLS handshake with a plain-HTTP server, a key the endpoint refuses. A live endpoint
without a /models health check, or a slow one, is left to the requests and their retries."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO, build_bench
from helpers.fake_openai import FakeOpenAI

from virtuebench.support.openai_client import probe_connection

KEY = "sk-test-secret-0123456789"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """60 items at 64 frames: 12 synthetic videos of five questions each."""
    return build_bench(tmp_path_factory.mktemp("bench"), 12, 70, [64])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gpt4o(base_url: str) -> dict:
    entry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())["GPT-4o"]
    return {**entry, "settings": {**entry["settings"], "base_url": base_url}}


def run_cli(module: str, *args: str, env_key: bool = True) -> tuple[subprocess.CompletedProcess, float]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **({"OPENAI_API_KEY": KEY} if env_key else {})}
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120, env={**env, "PYTHONPATH": str(REPO / "src")}
    )
    return run, time.monotonic() - started


def test_a_dead_base_url_fails_a_60_item_job_in_seconds(bench, tmp_path):
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    out = tmp_path / "responses.jsonl"
    run, seconds = run_cli(
        "virtuebench.inference",
        *("--instances", str(bench / "instances.parquet"), "--frames-dir", str(bench / "frames"), "--model", "GPT-4o"),
        *("--model-config", json.dumps(gpt4o(base_url)), "--prompt", "honest", "--level", "64", "--out", str(out)),
    )
    print(f"\ndead base_url: exit {run.returncode} after {seconds:.1f} s: {run.stderr.strip()[-300:]}")
    # Stopped before its first item, not after every item's retries (14 s an item): no item was asked or recorded
    # (an event, not a time; the seconds, printed, depend on the machine's load).
    assert run.returncode == 1 and "request failed" not in run.stderr
    assert not Path(f"{out}.partial").exists() or not Path(f"{out}.partial").read_text()
    assert base_url in run.stderr and "GPT-4o" in run.stderr and "gpt-4o" in run.stderr and "OPENAI_API_KEY" in run.stderr
    assert "connection refused" in run.stderr and KEY not in run.stderr
    assert not out.exists()  # no item was recorded as answered or failed: nothing to clean up


def test_the_llm_judge_stops_at_a_dead_base_url(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": i, "question": "Q?", "answer": "A.", "response": f"R{i}"}) + "\n" for i in range(60)))
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    config = {"kind": "llm", "model": "gpt-4o-2024-08-06", "base_url": base_url, "api_key_env": "OPENAI_API_KEY"}
    run, seconds = run_cli(
        "virtuebench.judge",
        str(items),
        "--judge",
        "gpt-4o",
        "--judge-config",
        json.dumps(config),
        "--out",
        str(tmp_path / "out.jsonl"),
        "--cache",
        str(tmp_path / "cache"),
    )
    print(f"\ndead base_url: the judge exits {run.returncode} after {seconds:.1f} s")
    assert run.returncode == 1 and "request failed" not in run.stderr, run.stderr[-2000:]  # before its first item
    assert not any((tmp_path / "cache").rglob("*.json")) and not (tmp_path / "out.jsonl").exists()
    assert not Path(f"{tmp_path / 'out.jsonl'}.partial").exists() or not Path(f"{tmp_path / 'out.jsonl'}.partial").read_text()
    assert base_url in run.stderr and "judge gpt-4o" in run.stderr and "OPENAI_API_KEY" in run.stderr and KEY not in run.stderr


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch):
    """The probe skips hosts reached through a proxy: these tests see the machine's own network, whatever the shell has."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_a_host_behind_a_proxy_is_left_to_the_client(monkeypatch):
    """On a cluster that reaches the API only through HTTPS_PROXY a direct connection fails though the client's would
    not: the probe does not judge such a host (the client's own /models check still runs, through the proxy)."""
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    assert "connection refused" in probe_connection(dead)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert probe_connection(dead) is None
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # a host the proxy is bypassed for is probed again
    assert "connection refused" in probe_connection(dead)
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")  # only https goes through it: plain http is probed
    assert "connection refused" in probe_connection(dead)


def test_dns_and_tls_failures_are_named():
    assert "does not resolve" in probe_connection("https://no-such-host.invalid/v1")
    with FakeOpenAI() as server:  # plain HTTP: a TLS handshake with it fails
        port = server.base_url.split(":")[2].split("/")[0]
        assert "TLS handshake" in probe_connection(f"https://127.0.0.1:{port}/v1")
        assert probe_connection(server.base_url) is None


def test_a_refused_key_stops_the_backend_and_a_live_endpoint_passes(monkeypatch):
    from virtuebench.models.openai_api import BackendSetupError, OpenAIBackend

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI(valid_key="sk-the-right-one") as server:
        with pytest.raises(BackendSetupError, match=r"refused the key in OPENAI_API_KEY \(HTTP 401\)") as error:
            OpenAIBackend({"model": "gpt-4o", "base_url": server.base_url})
        assert KEY not in str(error.value)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-the-right-one")
        OpenAIBackend({"model": "gpt-4o", "base_url": server.base_url})  # the health check passes
