"""The `letter-grade` judge (VideoEval-Pro's authors' grader, virtuebench.judge.letter_grade) against a local server.

The prompt here is a made-up one with the three placeholders, written by the test: the authors' text is not in the
repository (docs/supplement.md says where to copy it from).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from helpers.fake_openai import FakeOpenAI

from virtuebench.judge import get_judge
from virtuebench.judge.letter_grade import GraderPrompt, GraderPromptError, grader_settings, parse_letter_grade, read_grader_prompt
from virtuebench.judge.llm import JudgeSetupError

SECRET = "sk-test-GRADER-5a4b3c"
AUTHORS_SOURCE = "TIGER-AI-Lab/VideoEval-Pro, file tools/gpt4o_judge.py at commit 8467762b50689d718b7ea4f047cf20565ac0e2e2"
#: A stand-in for the authors' prompt: their three placeholders, none of their words. Braces elsewhere stay as they are.
TEST_PROMPT = (
    "\n  Grade a reply {as in a test}.\nQuestion: {question}\nTarget to match: {target}\nReply to grade: {predicted_answer}\n"
    "Reply A (correct), B (incorrect) or C (not attempted).\n\n"
)


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "grader_prompt.txt"
    path.write_text(TEST_PROMPT)
    return path


def test_the_reply_is_read_by_its_first_letter_as_the_authors_read_it():
    grades = {reply: parse_letter_grade(reply, "gold")[0] for reply in ("A", "b", "C", "  A  \n", "A: CORRECT", "CORRECT")}
    assert {reply: (v.refusal, v.judgement, v.valid) for reply, v in grades.items()} == {
        "A": (0, 1, True),
        "b": (0, 0, True),
        "C": (1, 0, True),  # NOT_ATTEMPTED is recorded as a refusal; it is not correct
        "  A  \n": (0, 1, True),
        "A: CORRECT": (0, 1, True),
        "CORRECT": (1, 0, True),  # their rule reads the first character: C, not correct (as their grader counts it)
    }
    assert grades["b"].reason == "B: INCORRECT" and grades["C"].reason == "C: NOT_ATTEMPTED"
    for bad in ("", "   ", "The grade is A", "1", "D"):
        verdict, problem = parse_letter_grade(bad, "gold")
        assert verdict is None and problem, bad


def test_the_prompt_is_the_files_stripped_with_the_three_values_filled_in_and_stripped(prompt_file):
    text, sha256 = read_grader_prompt(prompt_file)
    assert sha256 == hashlib.sha256(prompt_file.read_bytes()).hexdigest()
    messages = GraderPrompt("g", text, sha256).messages("  What is red? ", " the ball\n", " a ball ")
    assert messages == [
        {
            "role": "user",
            "content": "Grade a reply {as in a test}.\nQuestion: What is red?\nTarget to match: the ball\nReply to grade: a ball\n"
            "Reply A (correct), B (incorrect) or C (not attempted).",
        }
    ]


def test_a_missing_or_incomplete_prompt_file_names_where_to_copy_it_from(tmp_path):
    with pytest.raises(GraderPromptError, match=r"file .*absent\.txt not found; copy the text .* from " + AUTHORS_SOURCE):
        read_grader_prompt(tmp_path / "absent.txt")
    partial = tmp_path / "partial.txt"
    partial.write_text("Question: {question}\nReply to grade: {predicted_answer}\n")
    with pytest.raises(GraderPromptError, match=r"partial\.txt lacks the placeholder\(s\) \{target\}; copy"):
        read_grader_prompt(partial)


def _items(path, predictions, answer="the red ball"):
    rows = [{"id": f"q{n}", "question": "What rolls?", "answer": answer, "response": p} for n, p in enumerate(predictions)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _cli(server, items, out, cache, settings, env_key=SECRET):
    config = {**settings, "base_url": server.base_url, "max_retries": 1, "timeout_s": 5, "parse_retries": 2}
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if env_key:
        env["OPENAI_API_KEY"] = env_key
    command = [sys.executable, "-m", "virtuebench.judge", str(items), "--judge", "videoevalpro-authors"]
    command += ["--judge-config", json.dumps(config), "--cache", str(cache), "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, env=env)


PREDICTIONS = [
    "It is the red ball.",  # A
    "A blue cube.",  # B
    "I cannot tell from the frames.",  # C
    "scenario:grade-lower",  # b
    "scenario:grade-spaced",  # A with spaces
    "scenario:garbage",  # not a letter first, every time
    "scenario:empty",  # an empty reply, every time
    "scenario:flaky-grade",  # "?" once, then A
    "",  # an empty prediction: not sent
]


def test_the_authors_grader_end_to_end_against_a_local_server(tmp_path, prompt_file):
    settings = grader_settings(prompt_file)
    with FakeOpenAI() as server:
        items = _items(tmp_path / "items.jsonl", PREDICTIONS)
        run = _cli(server, items, tmp_path / "out.jsonl", tmp_path / "cache", settings)
        assert run.returncode == 0, run.stderr
        out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
        print(f"\nletter-grade verdicts: {[(row['raw'] if 'raw' in row else None, row['judgement'], row['valid']) for row in out]}")
        assert [(row["refusal"], row["judgement"], row["valid"]) for row in out] == [
            (0, 1, True),
            (0, 0, True),
            (1, 0, True),
            (0, 0, True),
            (0, 1, True),
            (0, 0, False),
            (0, 0, False),
            (0, 1, True),
            (0, 0, True),
        ]
        assert [row.get("raw") for row in out[:5]] == ["A", "B", "C", "b", "  A  \n"], "the reply is kept verbatim"
        assert out[5]["raw"] == "The grade is A" and "after 3 tries" in out[5]["reason"]
        assert out[6]["raw"] == "" and "empty reply" in out[6]["reason"]
        assert server.requests["scenario:garbage"] == server.requests["scenario:empty"] == 3, "asked again twice, then invalid"
        assert server.requests["scenario:flaky-grade"] == 2 and server.requests[""] == 0
        assert out[0]["judge_model"] == "gpt-4o-2024-08-06-snapshot"
        # The authors' request: their model, temperature 0, at most 5 tokens, one user message.
        assert {json.dumps(body, sort_keys=True) for body in server.grader_bodies} == {
            json.dumps({"model": "gpt-4o-2024-08-06", "temperature": 0, "max_tokens": 5, "roles": ["user"]}, sort_keys=True)
        }
        assert f"Bearer {SECRET}" in server.authorizations

        # An unchanged rerun asks only for the invalid ones again; a changed prompt (new sha256) asks for all.
        before = server.total
        rerun = _cli(server, items, tmp_path / "out2.jsonl", tmp_path / "cache", settings)
        assert rerun.returncode == 0, rerun.stderr
        assert server.total - before == 3 + 3
        prompt_file.write_text(TEST_PROMPT.replace("Grade a reply", "Grade this reply"))
        before = server.total
        changed = _cli(server, items, tmp_path / "out3.jsonl", tmp_path / "cache", grader_settings(prompt_file))
        assert changed.returncode == 0, changed.stderr
        assert server.total - before == 8 + 2 + 2, "every non-empty prediction asked again (the two malformed ones thrice)"

    written = [run.stderr, rerun.stderr, changed.stderr, *(path.read_text() for path in tmp_path.glob("out*.jsonl"))]
    written += [entry.read_text() for entry in (tmp_path / "cache").rglob("*.json")]
    assert all(SECRET not in text for text in written)


def test_a_prompt_changed_after_the_workflow_read_it_or_no_key_stops_the_judge(tmp_path, prompt_file, monkeypatch):
    settings = grader_settings(prompt_file)
    prompt_file.write_text(TEST_PROMPT + "One more line.\n")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(JudgeSetupError, match=r"grader_prompt\.txt changed since the workflow read it"):
        get_judge("videoevalpro-authors", settings)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(JudgeSetupError, match=r"set the environment variable OPENAI_API_KEY.*videoevalpro_grader: virtuebench"):
        get_judge("videoevalpro-authors", grader_settings(prompt_file))
    with FakeOpenAI() as server:
        items = _items(tmp_path / "items.jsonl", ["red"])
        run = _cli(server, items, tmp_path / "o.jsonl", tmp_path / "c", grader_settings(prompt_file), env_key=None)
    assert run.returncode == 1 and "OPENAI_API_KEY" in run.stderr and "Traceback" not in run.stderr and server.total == 0


def test_judgment_records_name_the_grader_and_its_prompts_sha256(tmp_path, prompt_file, monkeypatch):
    """Workflow mode: each judgment names the judge, keeps the reply, and carries the prompt file's sha256 in its
    judge_version, so a number can be traced to the prompt that graded it."""
    from helpers.data import build_bench

    from virtuebench.inference import run_inference
    from virtuebench.instances import read_instances
    from virtuebench.judge.run import judge_responses

    bench = build_bench(tmp_path / "bench", 1, 70, [64])
    instances = read_instances(bench / "instances.parquet")
    run_inference(instances, bench / "frames", "refuse", {"backend": "refuse"}, "honest+concise", 64, tmp_path / "r.jsonl")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    settings = grader_settings(prompt_file)
    with FakeOpenAI() as server:
        judge = get_judge("videoevalpro-authors", {**settings, "base_url": server.base_url}, str(tmp_path / "cache"))
        judge_responses(tmp_path / "r.jsonl", bench / "instances.parquet", judge, tmp_path / "j.jsonl")
    records = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert len(records) == len(instances) and server.total == len(instances)
    assert {record["judge"] for record in records} == {"videoevalpro-authors"}
    assert {record["prompt"] for record in records} == {"honest+concise"}
    assert {record["judge_version"] for record in records} == {f"videoevalpro-authors-grader@{settings['prompt_sha256']}/gpt-4o-2024-08-06"}
    assert all(record["valid"] and record["raw"] in ("A", "B", "C") for record in records)
