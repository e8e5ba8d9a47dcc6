"""Verdict reasons in plain words (judge/explain.py): every label the rules judge writes on the whole judge set has
words, the vocabulary covers the rules' own label lists, and a label it does not know is shown as it is."""

from collections import Counter

import pytest

from virtuebench import REFUSAL_ANSWER
from virtuebench.judge import judge_set
from virtuebench.judge.explain import MATCHERS, REFUSAL_RULES, explain, label_words
from virtuebench.judge.hybrid import HybridJudge
from virtuebench.judge.matching import MATCHERS as MATCHER_FUNCTIONS
from virtuebench.judge.rules import AMBIGUOUS_RULES, CONFIDENT_MATCH, CONFIDENT_REFUSAL, RulesJudge


@pytest.fixture(scope="module")
def reasons() -> list[str]:
    """The rules judge's reason on every case of the judge set (the real parts where the CVRR-ES fixture is here)."""
    judge = RulesJudge()
    return [judge.judge(case["question"], case["answer"], case["response"]).reason for case in judge_set.load("all")]


def test_every_label_the_rules_judge_writes_on_the_judge_set_has_words(reasons):
    labels: Counter[str] = Counter()
    for reason in reasons:
        explained = explain(reason)
        assert len(explained.labels) == 1 and "[" not in explained.reason, reason
        assert explained.rules.endswith(("; high confidence", "; low confidence")), reason
        inside = explained.labels[0].strip("[]").rsplit("; ", 1)[0]
        labels.update(label.strip() for label in inside.split(","))
    unknown = [label for label in labels if label_words(label) == label]
    assert unknown == []
    # the set exercises both stages: refusal rules, shapes and matchers (with and without a `how`)
    assert any("+" in label for label in labels) and any("=" in label for label in labels) and any("/" in label for label in labels)
    assert len({label.split("@")[0] for label in labels if "=" not in label}) >= 8


def test_the_vocabulary_covers_the_rules_label_lists():
    assert {function.__name__ for function in MATCHER_FUNCTIONS} | {"not_stated"} == set(MATCHERS)
    assert AMBIGUOUS_RULES <= set(REFUSAL_RULES)
    for label in CONFIDENT_REFUSAL | CONFIDENT_MATCH:
        assert label_words(label) != label, label


def test_a_case_b_answer_in_words_with_its_labels_kept():
    reason = RulesJudge().judge("Which appears first, the red cross or the magenta diamond?", REFUSAL_ANSWER, "the red cross").reason
    assert reason == "case B: no refusal phrase [no-phrase@short+option; not confident]"
    explained = explain(reason)
    assert explained.reason == "the truth is the refusal: no refusal phrase"
    assert explained.rules == "no refusal phrase; short answer (up to 20 words) naming one of the question's options; low confidence"
    assert explained.labels == ["[no-phrase@short+option; not confident]"]


def test_a_case_a_match_names_the_matcher_and_its_decision():
    reason = RulesJudge().judge("How many circles appear?", "3", "There are 3 circles.").reason
    explained = explain(reason)
    assert explained.reason.startswith("the truth is an answer: ")
    assert explained.rules == (
        "no refusal phrase; short answer (up to 20 words); the number it states, compared as a number: right; high confidence"
    )


def test_an_unknown_label_is_shown_as_it_is():
    explained = explain("case A: states 'x' [no-phrase@short, new_matcher=1@short; not confident]")
    assert explained.rules == "no refusal phrase; short answer (up to 20 words); new_matcher=1@short; low confidence"
    assert label_words("no-phrase@tiny") == "no-phrase@tiny" and label_words("new-rule@short") == "new-rule@short"
    assert label_words("no-phrase@short+new-shape") == "no-phrase@short+new-shape"


def test_reasons_without_labels_keep_their_text():
    assert explain("chose B, correct C") == ("chose B, correct C", "", [])
    assert explain("no response: timeout") == ("no response: timeout", "", [])


def test_the_hybrid_judges_wrapped_reason_is_explained_inside():
    verdict = HybridJudge("both", {}).judge("What colour is the car?", "red", "Maybe red, I am not sure.")
    explained = explain(verdict.reason)
    assert verdict.reason.startswith("the rules are not sure (case A:") and len(explained.labels) == 1
    assert explained.reason.startswith("the rules are not sure (the truth is an answer:") and "[" not in explained.reason
    assert explained.rules.endswith("; low confidence")
