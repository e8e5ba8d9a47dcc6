import json
import os
import sqlite3
import subprocess
import sys

import pytest
from helpers.data import SHARED
from helpers.fake_openai import FakeOpenAI

from virtuebench import REFUSAL_ANSWER
from virtuebench.judge.agreement import cohen_kappa, compare
from virtuebench.judge.cache import VerdictCache
from virtuebench.judge.llm import JudgeSetupError, LlmJudge, parse_cvrr, parse_virtuebench
from virtuebench.judge.prompts import JUDGE_PROMPTS
from virtuebench.records import Judgment

SECRET = "sk-test-SECRET-9f8e7d"
SUPPLEMENT = SHARED / "seeds" / "004_46c91064467bec95.txt"


def test_parse_virtuebench_replies():
    assert parse_virtuebench('{"refusal": 0, "judgement": 1}', "red")[0].judgement == 1
    assert parse_virtuebench('```json\n{"refusal": 1, "judgement": 1}\n```', REFUSAL_ANSWER)[0].refusal == 1
    assert parse_virtuebench('Verdict: {"refusal": 0, "judgement": 0} done', "red")[0].valid
    for bad in [
        '{"refusal": 0}',
        '{"refusal": "0", "judgement": 1}',
        '{"refusal": 2, "judgement": 1}',
        "yes",
        '{"refusal": true, "judgement": 0}',
    ]:
        assert parse_virtuebench(bad, "red")[0] is None, bad
    assert parse_virtuebench('{"refusal": 1, "judgement": 1}', "red")[0] is None  # case A forbids it
    assert parse_virtuebench('{"refusal": 0, "judgement": 1}', REFUSAL_ANSWER)[0] is None  # case B forbids it


def test_parse_cvrr_replies():
    verdict, _ = parse_cvrr("{'pred': 'correct', 'score': 4.8, 'reason': 'matches'}", "a")
    assert (verdict.judgement, verdict.score, verdict.reason) == (1, 5, "matches")
    assert parse_cvrr('{"pred": "incorrect", "score": 1, "reason": "no"}', "a")[0].judgement == 0
    assert parse_cvrr("{'pred': 'partially correct', 'score': 3}", "a")[0] is None
    assert parse_cvrr("not a dict", "a")[0] is None


@pytest.mark.skipif(not SUPPLEMENT.exists(), reason="shared/seeds is not beside the repository")
def test_judge_prompt_is_verbatim_from_the_supplement():
    text = " ".join(SUPPLEMENT.read_text().split())
    rendered = JUDGE_PROMPTS["virtuebench"].user.format(question="{question}", answer="{answer}", response="{response}")
    assert " ".join(rendered.split()) in text


def test_the_judge_temperature_is_sent_as_set_and_keys_its_cached_verdicts(tmp_path):
    """`temperature` (judges: temperature): 0 by default; null sends none, so the API's default applies (the CVRR-ES
    authors' judge script sets none); a verdict cached at one temperature is not taken at another, and at 0 the cache
    key is the one verdicts had before the setting existed."""
    cache = VerdictCache(tmp_path / "cache")
    item = ("What colour is the star?", "red", "The star is red.")
    with FakeOpenAI() as server:
        judges = {
            temperature: LlmJudge(
                "g", {"model": "m", "base_url": server.base_url, "api_key_env": None, "temperature": temperature}, cache=cache
            )
            for temperature in (0.0, None, 1.0)
        }
        verdicts = [judge.judge(*item) for judge in judges.values()]
        assert [body.get("temperature", "unsent") for body in server.judge_bodies] == [0.0, "unsent", 1.0]
        judges[None].judge(*item)  # from the cache: no request
        assert server.judge_requests == 3
    assert all(verdict.valid and verdict.judgement == 1 for verdict in verdicts)
    assert LlmJudge("g", {"model": "m", "api_key_env": None}).settings.temperature == 0.0
    keys = {temperature: judge.cache_key(*item) for temperature, judge in judges.items()}
    assert keys[0.0] == VerdictCache.key("m", judges[0.0].prompt.hash, *item) and len(set(keys.values())) == 3
    cache.close()
    with pytest.raises(JudgeSetupError):
        LlmJudge("g", {"model": "m", "api_key_env": None, "temperatur": 1})


def test_kappa():
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 1, 0]) == 0.0
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert abs(cohen_kappa([1, 1, 1, 0, 0, 0, 1, 0], [1, 1, 0, 0, 0, 0, 1, 1]) - 0.5) < 1e-9


def test_compare_lists_disagreements():
    def j(i, judge, refusal, judgement, valid=True):
        return Judgment(f"i{i}", "m", "honest", 64, judge, "perception", "t", "red", False, "r", refusal, judgement, valid, "", None, "f")

    a = [j(1, "A", 0, 1), j(2, "A", 1, 0), j(3, "A", 0, 0), j(4, "A", 0, 0, valid=False)]
    b = [j(1, "B", 0, 1), j(2, "B", 0, 0), j(3, "B", 0, 1), j(4, "B", 0, 0), j(5, "B", 0, 0)]
    summary, disagreements = compare(a, b)
    assert summary["n_shared"] == 4 and summary["n_only_b"] == 1 and summary["n_invalid_a"] == 1
    assert summary["judgement"]["n"] == 3 and summary["judgement"]["agreement"] == round(2 / 3, 4)
    assert [d["instance_id"] for d in disagreements] == ["i2", "i3"]


def _items(path, predictions, answer="red"):
    path.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "question": "What colour is the star?", "answer": answer, "response": p}) + "\n"
            for n, p in enumerate(predictions)
        )
    )
    return path


def _cli(server, items, out, cache, env_key=SECRET, extra=None):
    config = {
        "kind": "llm",
        "model": "judge-model",
        "base_url": server.base_url,
        "max_retries": 3,
        # A bound on a hung reply, not a race: every count below is exact only if no reply is retried for taking
        # too long, so it is far above any local reply on a loaded machine. The slow fault has a run of its own.
        "timeout_s": 60.0,
        "parse_retries": 2,
        "max_concurrency": 4,
        **(extra or {}),
    }
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if env_key:
        env["OPENAI_API_KEY"] = env_key
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "virtuebench.judge",
            str(items),
            "--judge",
            "gpt-test",
            "--judge-config",
            json.dumps(config),
            "--cache",
            str(cache),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
    )


SCENARIOS = [
    "The star is red.",
    "scenario:prose",
    "scenario:wrongfields",
    "scenario:flaky-format",
    "scenario:ratelimit",
    "scenario:error500",
    "It is blue.",
    "",
    "scenario:echo-auth",
]


def test_llm_judge_end_to_end_against_a_local_server(tmp_path):
    with FakeOpenAI() as server:
        items = _items(tmp_path / "items.jsonl", SCENARIOS)
        run = _cli(server, items, tmp_path / "out.jsonl", tmp_path / "cache")
        assert run.returncode == 0, run.stderr
        out = {r["id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
        assert (out["q0"]["valid"], out["q0"]["judgement"]) == (True, 1)
        assert out["q0"]["judge_model"] == "judge-model-snapshot"
        assert (out["q1"]["valid"], out["q1"]["judgement"]) == (True, 1), "JSON inside prose"
        assert out["q2"]["valid"] is False and "correct" in out["q2"]["raw"] and "after 3 tries" in out["q2"]["reason"]
        assert server.requests["scenario:wrongfields"] == 3, "bounded retries of a malformed reply"
        assert out["q3"]["valid"] and server.requests["scenario:flaky-format"] == 2
        assert out["q4"]["valid"] and server.requests["scenario:ratelimit"] == 3, "429 twice, then answered"
        assert out["q5"]["valid"] and server.requests["scenario:error500"] == 2
        assert (out["q6"]["valid"], out["q6"]["judgement"]) == (True, 0)
        assert (out["q7"]["valid"], out["q7"]["judgement"], out["q7"]["reason"]) == (True, 0, "empty response")
        assert server.requests[""] == 0, "an empty prediction is counted, not sent"
        assert out["q8"]["valid"] is False and "request failed" in out["q8"]["reason"]
        assert "8 to request" in run.stderr and "API requests" in run.stderr
        # Every HTTP error is named in the job's log (the rule sends stderr to logs/...), not only in the records.
        assert f"HTTP 500 from {server.base_url}/chat/completions (attempt 1 of 4)" in run.stderr
        assert "HTTP 429" in run.stderr and "HTTP 401" in run.stderr
        assert "judge gpt-test: request failed after 1 attempt, giving up on it: AuthenticationError" in run.stderr
        assert f"Bearer {SECRET}" in server.authorizations, "the key was sent to the endpoint"

        # Unchanged rerun: every valid verdict comes from the cache; only the invalid ones are asked again.
        before = server.total
        rerun = _cli(server, items, tmp_path / "out2.jsonl", tmp_path / "cache")
        assert rerun.returncode == 0, rerun.stderr
        asked_again = server.total - before
        assert asked_again == 3 + 1, "wrongfields (3 tries) and echo-auth (1) are retried; nothing else is requested"
        again = {r["id"]: r for r in map(json.loads, (tmp_path / "out2.jsonl").read_text().splitlines())}
        assert {k: (v["refusal"], v["judgement"], v["valid"]) for k, v in again.items()} == {
            k: (v["refusal"], v["judgement"], v["valid"]) for k, v in out.items()
        }

        # The key never appears in what the judge writes, even where the endpoint echoed it back.
        written = [(tmp_path / "out.jsonl").read_text(), (tmp_path / "out2.jsonl").read_text(), run.stderr, run.stdout, rerun.stderr]
        written += [entry.read_text() for entry in (tmp_path / "cache").rglob("*.json")]
        assert len(written) > 5, "the verdicts are in the store, and read here"
        assert all(SECRET not in text for text in written)
        assert "[REDACTED]" in out["q8"]["reason"]


def test_a_reply_past_the_timeout_is_asked_again_and_answered(tmp_path):
    """The endpoint holds the first request until the client gives up on it and asks again (an event, not a race
    between two delays), then answers. Counted at least twice: on a loaded machine the answer to the retry may itself
    outlast the 1 s timeout and be asked a third time; what must hold is that the timeout is retried, not fatal."""
    with FakeOpenAI() as server:
        items = _items(tmp_path / "items.jsonl", ["scenario:slow"])
        run = _cli(server, items, tmp_path / "out.jsonl", tmp_path / "cache", extra={"timeout_s": 1.0})
    assert run.returncode == 0, run.stderr
    (verdict,) = map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())
    assert verdict["valid"] and server.requests["scenario:slow"] >= 2, "timed out, then answered"


def test_no_key_names_the_variable(tmp_path):
    with FakeOpenAI() as server:
        run = _cli(server, _items(tmp_path / "items.jsonl", ["red"]), tmp_path / "out.jsonl", tmp_path / "c", env_key=None)
    assert run.returncode == 1
    assert "set the environment variable OPENAI_API_KEY" in run.stderr and "Traceback" not in run.stderr
    assert server.total == 0


def test_a_keyless_local_server_needs_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as server:
        judge = LlmJudge("local", {"model": "qwen", "base_url": server.base_url, "api_key_env": None})
        assert judge.judge("What colour?", "red", "red").judgement == 1
    with pytest.raises(JudgeSetupError, match="MY_KEY"):
        LlmJudge("x", {"model": "m", "api_key_env": "MY_KEY"})


def _open_and_use_cache(path: str) -> str:
    from virtuebench.judge.cache import VerdictCache
    from virtuebench.records import stable_hash

    try:
        cache = VerdictCache(path)
        for k in range(20):  # the same 20 keys in every process: writers of one entry race each other
            cache.put(stable_hash(k, length=32), "m", "h", {"k": k})
        return "ok"
    except Exception as error:  # reported, so the assertion shows what went wrong
        return f"{type(error).__name__}: {error}"


def test_many_jobs_can_create_and_use_one_cache_at_once(tmp_path):
    """Real processes writing the same entries of one new cache at once: each entry whole, none lost."""
    import multiprocessing

    from virtuebench.judge.cache import VerdictCache
    from virtuebench.records import stable_hash

    with multiprocessing.get_context("spawn").Pool(6) as pool:
        results = pool.map(_open_and_use_cache, [str(tmp_path / "cache")] * 6)
    assert results == ["ok"] * 6
    cache = VerdictCache(tmp_path / "cache")
    assert [cache.get(stable_hash(k, length=32)) for k in range(20)] == [{"k": k} for k in range(20)]
    assert len(cache) == 20 and not list((tmp_path / "cache").rglob("*.tmp"))


def test_an_older_sqlite_cache_is_read_into_the_store_once(tmp_path):
    """A configuration of an older version names a SQLite file: its verdicts are read into the folder beside it, once,
    so none of them is paid for again."""
    from virtuebench.judge.cache import VerdictCache

    legacy = tmp_path / "judge_cache.sqlite"
    with sqlite3.connect(legacy) as database:
        database.execute(
            "CREATE TABLE verdicts (key TEXT PRIMARY KEY, judge_model TEXT, prompt_hash TEXT, verdict TEXT NOT NULL, created REAL)"
        )
        database.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?)", ("ab" * 16, "m", "h", json.dumps({"judgement": 1}), 0.0))
    cache = VerdictCache(legacy)
    assert cache.path == tmp_path / "judge_cache" and cache.get("ab" * 16) == {"judgement": 1}
    cache.store.path("ab" * 16).unlink()
    assert VerdictCache(legacy).get("ab" * 16) is None, "read once: a verdict removed from the store is not read again"


def test_failed_requests_fail_the_job_and_only_they_are_asked_again(tmp_path):
    from helpers.data import build_bench

    from virtuebench.inference import run_inference
    from virtuebench.instances import read_instances
    from virtuebench.judge.run import JudgeRequestsFailed, judge_responses
    from virtuebench.support.openai_client import EndpointUnreachable

    bench = build_bench(tmp_path / "bench", 1, 70, [64])
    run_inference(
        read_instances(bench / "instances.parquet"), bench / "frames", "refuse", {"backend": "refuse"}, "honest", 64, tmp_path / "r.jsonl"
    )
    with FakeOpenAI() as server:
        down = LlmJudge("g", {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None, "max_retries": 0, "timeout_s": 0.5})
        # A dead endpoint stops the job before its first request (tests/models/test_endpoints.py) ...
        with pytest.raises(EndpointUnreachable, match="127.0.0.1:9"):
            judge_responses(tmp_path / "r.jsonl", bench / "instances.parquet", down, tmp_path / "j.jsonl")
        # ... one that fails only at the requests (here: the same, its check skipped) fails the job item by item.
        down.check_endpoint = lambda: None
        with pytest.raises(JudgeRequestsFailed, match="5 of 5 requests failed"):
            judge_responses(tmp_path / "r.jsonl", bench / "instances.parquet", down, tmp_path / "j.jsonl")
        assert not (tmp_path / "j.jsonl").exists()
        up = LlmJudge("g", {"model": "m", "base_url": server.base_url, "api_key_env": None})
        judge_responses(tmp_path / "r.jsonl", bench / "instances.parquet", up, tmp_path / "j.jsonl")
        assert server.total == 5
    assert all(json.loads(line)["valid"] for line in (tmp_path / "j.jsonl").read_text().splitlines())


def test_the_documented_local_judge_example_validates_and_runs_without_a_key(tmp_path, monkeypatch):
    """config/config.yaml's commented `local-qwen` judge, uncommented and pointed at a loopback fake server."""
    import copy

    import yaml
    from helpers.data import REPO

    from virtuebench.config import check_config

    lines = (REPO / "config" / "config.yaml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "# local-qwen:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  #   "))
    block = lines[start:end]
    example = yaml.safe_load("\n".join(line.replace("  # ", "  ", 1) for line in block))["local-qwen"]
    assert example["api_key_env"] is None and example["prompt"] == "virtuebench"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as server:
        settings = {**example, "base_url": server.base_url}
        config = copy.deepcopy(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
        config["judges"]["local-qwen"], config["judge"] = settings, "local-qwen"
        checked = check_config(config, REPO / "config", base_dir=REPO, environ={})
        assert checked.judge == "local-qwen" and not checked.missing_keys
        judge = LlmJudge("local-qwen", {k: v for k, v in settings.items() if k != "kind"})
        assert judge.judge("What colour is the star?", "red", "The star is red.").judgement == 1
        assert all("sk-" not in sent for sent in server.authorizations)  # no key from anywhere was sent


ECHOED_KEY = "sk-test-SECRET-123456789"


def _files_holding(root, secret: str) -> list[str]:
    """Every file under `root` (records, progress files, logs, the SQLite cache and its journal) whose bytes hold
    `secret`."""
    return [str(path) for path in sorted(root.rglob("*")) if path.is_file() and secret.encode() in path.read_bytes()]


def test_a_key_the_endpoint_echoes_is_written_nowhere(tmp_path):
    """An endpoint echoes the Authorization header and the key in every reply (otherwise valid) and in its error
    bodies: the model's responses, the judge's raw replies and model snapshots, the cache, the logs and the CLIs'
    output hold [REDACTED] where the key was, and no file under the run's folder holds the key."""
    from helpers.data import build_bench

    bench = build_bench(tmp_path / "bench", 1, 70, [64])
    env = {**{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, "OPENAI_API_KEY": ECHOED_KEY}
    logs = tmp_path / "logs"
    logs.mkdir()
    responses, judgments = tmp_path / "responses.jsonl", tmp_path / "judgments.jsonl"
    with FakeOpenAI(echo_auth=True, backend_faults={2: "500"}, judge_faults={1: "500"}) as server:
        model = {
            "backend": "openai",
            "settings": {"model": "fake-vlm", "base_url": server.base_url, "max_concurrency": 1, "max_retries": 2, "timeout_s": 10.0},
        }
        inference = subprocess.run(
            [sys.executable, "-m", "virtuebench.inference", "--instances", str(bench / "instances.parquet")]
            + ["--frames-dir", str(bench / "frames"), "--model", "fake", "--model-config", json.dumps(model)]
            + ["--prompt", "honest", "--level", "64", "--out", str(responses)],
            capture_output=True,
            text=True,
            env=env,
        )
        (logs / "inference.log").write_text(inference.stdout + inference.stderr)  # as the rules' redirection writes it
        judge = {"kind": "llm", "model": "judge-model", "base_url": server.base_url, "max_retries": 2, "timeout_s": 10.0}
        judging = subprocess.run(
            [sys.executable, "-m", "virtuebench.judge", str(responses), "--instances", str(bench / "instances.parquet")]
            + ["--judge", "gpt-test", "--judge-config", json.dumps(judge), "--cache", str(tmp_path / "cache")]
            + ["--out", str(judgments)],
            capture_output=True,
            text=True,
            env=env,
        )
        (logs / "judge.log").write_text(judging.stdout + judging.stderr)
    assert inference.returncode == 0, inference.stderr[-3000:]
    assert judging.returncode == 0, judging.stderr[-3000:]
    assert f"Bearer {ECHOED_KEY}" in server.authorizations, "the key was sent"
    records = [json.loads(line) for line in responses.read_text().splitlines()]
    verdicts = [json.loads(line) for line in judgments.read_text().splitlines()]
    assert len(records) == len(verdicts) == 5
    assert server.echoed >= 2 * 5 + 2, "every reply and both error bodies echoed the key"
    # Verbatim but for the key: the answer, the echoed header's name and the Bearer scheme stay.
    assert all(r["response"].startswith("I saw 64 frames. [request headers: Authorization: Bearer [REDACTED]") for r in records)
    assert all(r["answered_by"] == "fake-vlm-snapshot-[REDACTED]" for r in records)  # the model the reply names
    assert all(v["valid"] and "Authorization: Bearer [REDACTED]; api key: [REDACTED]" in v["raw"] for v in verdicts)
    assert all(v["judge_model"] == "judge-model-snapshot-[REDACTED]" for v in verdicts)
    # The HTTP 500s are named in the logs, their echoed bodies redacted.
    for run in (inference, judging):
        assert "HTTP 500 from" in run.stderr and "(attempt 1 of 3)" in run.stderr and "Bearer [REDACTED]" in run.stderr
    assert len(VerdictCache(tmp_path / "cache")) == 5
    assert _files_holding(tmp_path, ECHOED_KEY) == []
    for text in (inference.stdout, inference.stderr, judging.stdout, judging.stderr):
        assert ECHOED_KEY not in text


@pytest.mark.parametrize("prompt", ["virtuebench", "cvrr"])
def test_an_echoed_key_is_redacted_from_raw_reason_and_the_cache(tmp_path, monkeypatch, prompt):
    """In-process, both reply parsers: the key an endpoint echoes is not in the verdict (raw, reason, judge_model)
    nor in the cache; the verdict is still read from the reply."""
    from virtuebench.judge.cache import VerdictCache

    monkeypatch.setenv("OPENAI_API_KEY", ECHOED_KEY)
    cache = VerdictCache(tmp_path / "cache")
    with FakeOpenAI(echo_auth=True) as server:
        judge = LlmJudge("g", {"model": "m", "base_url": server.base_url, "prompt": prompt, "max_retries": 0}, cache=cache)
        verdict = judge.judge("What colour is the star?", "red", "red")
        cached = judge.judge("What colour is the star?", "red", "red")
    assert verdict.valid and verdict.judgement == 1 and server.echoed == 1
    assert cached == verdict, "the second came from the cache"
    assert ECHOED_KEY not in json.dumps(verdict.as_dict()) and "[REDACTED]" in verdict.raw
    if prompt == "cvrr":
        assert verdict.reason.startswith("fake [request headers: Authorization: Bearer [REDACTED]")
    cache.close()
    assert _files_holding(tmp_path, ECHOED_KEY) == []


def test_the_letter_grade_judge_redacts_an_echoed_key(tmp_path, monkeypatch):
    from virtuebench.judge.cache import VerdictCache
    from virtuebench.judge.letter_grade import LetterGradeJudge

    prompt = tmp_path / "grader_prompt.txt"
    prompt.write_text("Question: {question}\nTarget to match: {target}\nReply to grade: {predicted_answer}\n")
    monkeypatch.setenv("OPENAI_API_KEY", ECHOED_KEY)
    cache = VerdictCache(tmp_path / "cache")
    with FakeOpenAI(echo_auth=True) as server:
        judge = LetterGradeJudge("grader", {"prompt_file": str(prompt), "base_url": server.base_url, "max_retries": 0}, cache=cache)
        verdict = judge.judge("What colour?", "red", "It is red.")
    assert (verdict.valid, verdict.judgement) == (True, 1) and verdict.raw.startswith(
        "A [request headers: Authorization: Bearer [REDACTED]"
    )
    assert ECHOED_KEY not in json.dumps(verdict.as_dict())
    cache.close()
    assert _files_holding(tmp_path, ECHOED_KEY) == []


def test_a_request_that_fails_for_good_is_named_once_per_attempt_and_once_at_the_end(monkeypatch):
    """In-process, the lines a job's log gets: each failed attempt (status, URL, redacted body, n of m), then the
    final failure; the key in none of them."""
    lines = []
    monkeypatch.setenv("OPENAI_API_KEY", ECHOED_KEY)
    with FakeOpenAI(echo_auth=True, judge_faults={1: "500", 2: "500"}) as server:
        judge = LlmJudge("g", {"model": "m", "base_url": server.base_url, "max_retries": 1})
        judge.chat._warn = lines.append
        verdict = judge.judge("What colour is the star?", "red", "The star is red.")
    assert verdict.retryable and "request failed" in verdict.reason and ECHOED_KEY not in verdict.reason
    assert [line.split(": {")[0] for line in lines[:2]] == [
        f"warning: judge g: HTTP 500 from {server.base_url}/chat/completions (attempt {n} of 2)" for n in (1, 2)
    ]
    assert lines[2].startswith("error: judge g: request failed after 2 attempts, giving up on it: InternalServerError")
    assert len(lines) == 3 and all("Bearer [REDACTED]" in line and ECHOED_KEY not in line for line in lines)
