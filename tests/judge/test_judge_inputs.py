"""The judge's open decisions (docs/choices.md, "The judge"): what the judging stage gives a judge of a thinking model's
reply (`reasoning`), whether a cut-off reply is judged (`truncated`), and what an LLM judge does with a verdict pair the
VirtueBench prompt forbids (`forbidden_pairs`), on responses shaped as the real ones are (a Qwen3-VL-Thinking reply
split at </think>, a reply whose thinking never closed, one cut at the token limit), with a scripted judge endpoint
that records what it was sent."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace

import pytest

from virtuebench import REFUSAL_ANSWER
from virtuebench.instances import Instance, write_instances
from virtuebench.judge import get_judge
from virtuebench.judge.cache import VerdictCache
from virtuebench.judge.inputs import LEGACY, JudgeInputs, judge_inputs, judged_text, options_note
from virtuebench.judge.kinds import split_settings
from virtuebench.judge.llm import LlmJudge, forbidden_pair, resolve_forbidden
from virtuebench.judge.run import TRUNCATED_REASON, judge_responses
from virtuebench.records import Response
from virtuebench.support.openai_client import Completion

QUESTION = "What colour is the star on the scoreboard?"
#: A Qwen3-VL-Thinking reply as read_thinking splits it: the reasoning, and the answer after </think>.
THINKING = (
    "The user asks about the star. In the frames around 00:41 the scoreboard shows a star in the corner. "
    "It looks red, though the frame is a little blurry. I'll answer red."
)
ANSWER = "The star is red."
#: A reply whose thinking never closed (the token limit cut it): no answer, the reasoning kept.
UNCLOSED = "Let me check each frame. Frame 3 shows the scoreboard but the star is partly hidden; frame 9"
#: A reply without thinking cut at the token limit mid-word.
CUT = "Looking at the scoreboard in the later frames, the star appears to be re"


@dataclass
class ScriptedChat:
    """Stands in for the judge's ChatClient: replies in turn (the last repeats), the user messages kept."""

    replies: list[str]
    sent: list[str] = field(default_factory=list)

    def complete(self, model, messages, **options):
        self.sent.append(messages[-1]["content"])
        return Completion(self.replies[min(len(self.sent), len(self.replies)) - 1], "judge-snapshot", {"prompt_tokens": 10})

    def redact(self, text):
        return text

    def check_endpoint(self, who, key_env):
        return None


def _llm(settings=None, replies=('{"refusal": 0, "judgement": 1}',), cache=None):
    judge = get_judge("g", {"kind": "llm", "model": "m", "api_key_env": None, **(settings or {})})
    judge.chat, judge.cache, judge._injected_client = ScriptedChat(list(replies)), cache, True
    return judge


def _bench(tmp_path, answers=("red", "red", "red", REFUSAL_ANSWER)):
    instances = [
        Instance(f"i{n}", f"v{n}", "synthetic", "perception", "colour", QUESTION, "red", 120.0, f"v{n}.mp4", {64: answer})
        for n, answer in enumerate(answers)
    ]
    write_instances(instances, tmp_path / "instances.parquet")
    return tmp_path / "instances.parquet"


def _responses(tmp_path, replies):
    """replies: (answer, thinking, truncated) per instance i0, i1, ..."""
    lines = []
    for n, (answer, thinking, truncated) in enumerate(replies):
        response = Response(f"i{n}", f"v{n}", "Qwen3VL-8B-Thinking", "vllm", "honest", "h", 64, 64, answer, None, 1.0, "fp")
        response = replace(response, thinking=thinking, truncated=truncated, finish_reason="length" if truncated else "stop")
        lines.append(json.dumps(asdict(response)))
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path / "r.jsonl"


def _judged(tmp_path, judge, replies, answers=("red", "red", "red", REFUSAL_ANSWER)):
    out = tmp_path / f"j-{judge.name}-{len(list(tmp_path.glob('j-*')))}.jsonl"
    judge_responses(_responses(tmp_path, replies), _bench(tmp_path, answers), judge, out)
    return [json.loads(line) for line in out.read_text().splitlines()]


# --- reasoning ---------------------------------------------------------------------------------------------------


def test_the_judged_text_holds_the_reasoning_only_where_the_setting_says():
    with_reasoning, answer_only = JudgeInputs(), JudgeInputs(reasoning="answer-only")
    assert with_reasoning.reasoning == "with-reasoning", "the default: VirtueBench section 3.4's judge reads the reasoning"
    assert judged_text(ANSWER, THINKING, False, with_reasoning) == f"<think>\n{THINKING}\n</think>\n\n{ANSWER}"
    assert judged_text(ANSWER, THINKING, False, answer_only) == ANSWER
    assert judged_text(ANSWER, None, False, with_reasoning) == ANSWER, "a model that does not think: its answer as it was"
    assert judged_text(ANSWER, "", False, with_reasoning) == ANSWER
    assert judged_text("", UNCLOSED, True, with_reasoning) == f"<think>\n{UNCLOSED}", "a block that never closed stays open"
    assert judged_text("", UNCLOSED, True, answer_only) == ""


def test_an_llm_judge_is_sent_the_reasoning_with_with_reasoning_and_not_with_answer_only(tmp_path):
    replies = [(ANSWER, THINKING, False), ("It is blue.", None, False)]
    for reasoning, thought_sent in (("with-reasoning", True), ("answer-only", False)):
        judge = _llm({"reasoning": reasoning})
        records = _judged(tmp_path, judge, replies)
        assert [r["valid"] for r in records] == [True, True]
        assert (THINKING in judge.chat.sent[0]) is thought_sent and ANSWER in judge.chat.sent[0]
        assert ("<think>" in judge.chat.sent[0]) is thought_sent
        assert THINKING not in judge.chat.sent[1] and "It is blue." in judge.chat.sent[1]
        assert records[0]["response"] == ANSWER, "the record keeps the final answer as the response (docs/records.md)"


def test_the_rules_judge_reads_the_final_answer_whatever_reasoning_says(tmp_path):
    """The rules set a closed <think> block aside (rules.final_text): both options give the same verdicts, and a
    reasoning full of doubt does not make the answer a refusal."""
    doubtful = "The frames do not show the star clearly; I cannot determine its colour for sure. Still, it looks red."
    replies = [(ANSWER, doubtful, False), ("It is blue.", THINKING, False)]
    verdicts = [
        [(r["refusal"], r["judgement"]) for r in _judged(tmp_path, get_judge("rules", {"reasoning": reasoning}), replies)]
        for reasoning in ("with-reasoning", "answer-only")
    ]
    assert verdicts[0] == verdicts[1] == [(0, 1), (0, 0)]


# --- truncated ---------------------------------------------------------------------------------------------------


def test_a_truncated_reply_is_unasked_under_no_answer_and_judged_under_judge(tmp_path):
    replies = [(ANSWER, THINKING, False), ("", UNCLOSED, True), (CUT, None, True)]
    unasked = _llm({"truncated": "no-answer"})
    records = _judged(tmp_path, unasked, replies, answers=("red", "red", "red"))
    assert len(unasked.chat.sent) == 1, "only the whole reply was sent"
    assert [(r["valid"], r["reason"]) for r in records[1:]] == [(False, TRUNCATED_REASON)] * 2
    assert all(r["truncated"] for r in records[1:])

    judged = _llm({"truncated": "judge"}, replies=['{"refusal": 0, "judgement": 1}', '{"refusal": 0, "judgement": 0}'])
    records = _judged(tmp_path, judged, replies, answers=("red", "red", "red"))
    # The unclosed one goes with its open reasoning (with-reasoning, the default); the cut one as it stands.
    assert any(f"<think>\n{UNCLOSED}" in sent and "</think>" not in sent for sent in judged.chat.sent)
    assert any(CUT in sent for sent in judged.chat.sent)
    assert len(judged.chat.sent) == 3 and all(r["valid"] for r in records)
    assert all(r["truncated"] for r in records[1:]), "still marked truncated: the report counts them (n_truncated)"


def test_under_judge_an_unclosed_reply_read_answer_only_is_an_empty_answer(tmp_path):
    """No reasoning and no answer: the LLM judge scores the empty reply wrong without a request, as any empty one."""
    judge = _llm({"truncated": "judge", "reasoning": "answer-only"})
    (record,) = _judged(tmp_path, judge, [("", UNCLOSED, True)], answers=("red",))
    assert judge.chat.sent == [] and (record["valid"], record["judgement"], record["reason"]) == (True, 0, "empty response")


def test_the_rules_judge_reads_an_unclosed_reasoning_as_such_under_judge(tmp_path):
    (record,) = _judged(tmp_path, get_judge("rules", {"truncated": "judge"}), [("", UNCLOSED, True)], answers=("red",))
    assert record["valid"] and "unclosed-thinking@" in record["reason"] and record["confident"] is False


# --- forbidden pairs ---------------------------------------------------------------------------------------------

CASE_A_FORBIDDEN = '{"refusal": 1, "judgement": 1}'  # a refusal judged correct against a definite answer
CASE_B_FORBIDDEN = '{"refusal": 0, "judgement": 1}'  # an answer judged correct against "not enough information"


def test_forbidden_pairs_are_told_from_allowed_and_malformed_replies():
    assert forbidden_pair(CASE_A_FORBIDDEN, "red") == (1, 1)
    assert forbidden_pair(CASE_B_FORBIDDEN, REFUSAL_ANSWER) == (0, 1)
    assert forbidden_pair('{"refusal": 1, "judgement": 0}', REFUSAL_ANSWER) == (1, 0)
    assert forbidden_pair(CASE_A_FORBIDDEN, REFUSAL_ANSWER) is None  # allowed in case B
    assert forbidden_pair('{"refusal": 0, "judgement": 1}', "red") is None
    assert forbidden_pair('{"refusal": 1}', "red") is None and forbidden_pair("yes", "red") is None


@pytest.mark.parametrize(
    "pair, answer, by_refusal, by_judgement",
    [
        ((1, 1), "red", (1, 0), (0, 1)),
        ((0, 1), REFUSAL_ANSWER, (0, 0), (1, 1)),
        ((1, 0), REFUSAL_ANSWER, (1, 1), (0, 0)),
    ],
)
def test_each_policy_reads_a_forbidden_pair_by_its_field(pair, answer, by_refusal, by_judgement):
    for policy, expected in (("trust-refusal", by_refusal), ("trust-judgement", by_judgement)):
        verdict = resolve_forbidden(*pair, answer, policy)
        assert (verdict.refusal, verdict.judgement, verdict.valid) == (*expected, True)
        assert f"forbidden pair refusal {pair[0]}, judgement {pair[1]}" in verdict.reason and policy in verdict.reason
    with pytest.raises(ValueError, match="resolves no pair"):
        resolve_forbidden(*pair, answer, "retry-then-invalid")


@pytest.mark.parametrize(
    "policy, requests, verdict",
    [("retry-then-invalid", 3, (0, 0, False)), ("trust-refusal", 1, (1, 0, True)), ("trust-judgement", 1, (0, 1, True))],
)
def test_a_forbidden_reply_is_retried_then_invalid_or_read_at_once(tmp_path, policy, requests, verdict):
    judge = _llm({"forbidden_pairs": policy}, replies=[CASE_A_FORBIDDEN])
    (record,) = _judged(tmp_path, judge, [("I cannot tell from the frames.", None, False)], answers=("red",))
    assert len(judge.chat.sent) == requests, "retried at temperature 0 parse_retries (2) times only by retry-then-invalid"
    assert (record["refusal"], record["judgement"], record["valid"]) == verdict
    assert "case A with refusal = 1 needs judgement = 0" in record["reason"]
    outcome = "0 read by one field, 1 invalid" if policy == "retry-then-invalid" else "1 read by one field, 0 invalid"
    assert f"1 items given a verdict pair the prompt forbids (forbidden_pairs: {policy}): {outcome}" in judge.spent_note()


def test_a_retry_that_gives_an_allowed_pair_is_the_verdict():
    judge = _llm(replies=[CASE_B_FORBIDDEN, '{"refusal": 1, "judgement": 1}'])
    verdict = judge.judge(QUESTION, REFUSAL_ANSWER, "I cannot tell.")
    assert (verdict.refusal, verdict.judgement, verdict.valid, len(judge.chat.sent)) == (1, 1, True, 2)
    assert judge.spent_note() == ""


def test_switching_forbidden_pairs_asks_the_judge_nothing_again(tmp_path):
    """The cache keeps allowed verdicts (the same under every policy) and, apart, the forbidden reply: a run under
    another policy reads both without a request."""
    cache = VerdictCache(tmp_path / "cache")
    first = _llm(replies=[CASE_A_FORBIDDEN, CASE_A_FORBIDDEN, CASE_A_FORBIDDEN, '{"refusal": 0, "judgement": 1}'], cache=cache)
    assert not first.judge(QUESTION, "red", "I cannot tell.").valid
    assert first.judge(QUESTION, "red", "It is red.").valid and len(first.chat.sent) == 4
    for policy, pair in (("trust-refusal", (1, 0)), ("trust-judgement", (0, 1))):
        again = _llm({"forbidden_pairs": policy}, replies=["never sent"], cache=cache)
        assert again.cached(QUESTION, "red", "I cannot tell.") is not None, "counted as cached before the run"
        forbidden = again.judge(QUESTION, "red", "I cannot tell.")
        allowed = again.judge(QUESTION, "red", "It is red.")
        assert again.chat.sent == [], "nothing asked again"
        assert ((forbidden.refusal, forbidden.judgement), forbidden.raw) == (pair, CASE_A_FORBIDDEN)
        assert (allowed.refusal, allowed.judgement) == (0, 1)
    retry = _llm(replies=['{"refusal": 1, "judgement": 0}'], cache=cache)
    assert retry.cached(QUESTION, "red", "I cannot tell.") is None, "retry-then-invalid asks again, as before"


def test_the_cvrr_prompt_has_no_forbidden_pairs():
    judge = _llm({"prompt": "cvrr"})
    assert judge.forbidden is None


# --- tracking, settings and captions -----------------------------------------------------------------------------


def test_only_values_other_than_the_old_behaviour_are_tracked():
    """A judge at the behaviour every judgment was made with before these settings (LEGACY) tracks nothing new: its
    finished jobs stay current. The default reasoning (with-reasoning) is tracked: it changes what the judge reads."""
    legacy = {"kind": "rules", **LEGACY}
    assert split_settings(legacy)[0] == {"kind": "rules", "version": split_settings({"kind": "rules"})[0]["version"]}
    assert split_settings({"kind": "rules"})[0]["reasoning"] == "with-reasoning"
    assert "truncated" not in split_settings({"kind": "rules"})[0]
    assert split_settings({"kind": "rules", "truncated": "judge"})[0]["truncated"] == "judge"
    llm = {"kind": "llm", "model": "m", "forbidden_pairs": "trust-refusal", "reasoning": "answer-only"}
    tracked, run = split_settings(llm)
    assert tracked["forbidden_pairs"] == "trust-refusal" and "reasoning" not in tracked and "reasoning" not in run
    hybrid = {"kind": "hybrid", "llm": {**llm, "reasoning": "with-reasoning"}, "truncated": "judge"}
    tracked = split_settings(hybrid)[0]
    assert tracked["truncated"] == "judge" and "reasoning" not in tracked["llm"], "the hybrid's own inputs decide"


def test_a_bad_value_is_named():
    with pytest.raises(ValueError, match="judge setting reasoning: 'all' is not one of with-reasoning, answer-only"):
        judge_inputs({"reasoning": "all"})
    assert judge_inputs({"kind": "llm", "model": "m"}) == JudgeInputs()


def test_a_judge_built_by_name_carries_its_inputs():
    judge = get_judge("strict", {"kind": "rules", "truncated": "judge", "reasoning": "answer-only"})
    assert judge.inputs == JudgeInputs("answer-only", "judge")
    assert isinstance(_llm({"truncated": "judge"}), LlmJudge)


def test_the_options_note_states_each_decision_and_whether_it_is_the_default():
    assert options_note({"kind": "rules"}) == "reasoning = with-reasoning (default); truncated = no-answer (default)"
    assert options_note({"kind": "llm", "truncated": "judge", "forbidden_pairs": "trust-judgement"}) == (
        "reasoning = with-reasoning (default); truncated = judge; forbidden_pairs = trust-judgement"
    )
    assert options_note({"kind": "hybrid", "llm": {"kind": "llm"}}).endswith("forbidden_pairs = retry-then-invalid (default)")
    assert "forbidden_pairs" not in options_note({"kind": "llm", "prompt": "cvrr"})
    assert "forbidden_pairs" not in options_note({"kind": "hybrid", "llm": None})
