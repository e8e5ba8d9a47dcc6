"""The labelled judge set (docs/judge_set.md) is well formed, the rules judge's agreement with it is what
docs/judge_set.md and docs/judges.md report, and its confidence is what calibrating on the tuning parts chooses.
The floors sit just under the measured values to catch a regression; they were not chosen to pass. The real
parts read their texts from the CVRR-ES fixture (../shared/fixtures): those tests skip where it is absent."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import virtuebench.judge
from virtuebench import REFUSAL_ANSWER, is_refusal_answer
from virtuebench.judge.agreement import compare
from virtuebench.judge.judge_set import (
    FIELDS,
    PARTS,
    PATHS,
    REAL_FIELDS,
    TUNING,
    FixtureMissing,
    as_judgments,
    calibrate,
    has_real_parts,
    length_bucket,
    load,
    sample_cvrr,
)
from virtuebench.judge.rules import CONFIDENT_MATCH, CONFIDENT_REFUSAL

needs_fixture = pytest.mark.skipif(not has_real_parts(), reason="the CVRR-ES fixture (../shared/fixtures/cvrr-es) is absent")


def _labelled_as_the_prompt_says(case):
    if is_refusal_answer(case["answer"]):  # case B: correct exactly when refused
        assert case["judgement"] == case["refusal"], case["id"]
    elif case["refusal"] == 1:  # case A: a refusal is wrong
        assert case["judgement"] == 0, case["id"]


def test_every_case_is_well_formed_and_labelled_as_the_prompt_says():
    cases = [c for part in PARTS if not part.startswith("real-") for c in load(part)]
    assert len(cases) >= 900 and len({case["id"] for case in cases}) == len(cases)
    for case in cases:
        assert set(case) == set(FIELDS) and case["refusal"] in (0, 1) and case["judgement"] in (0, 1), case["id"]
        _labelled_as_the_prompt_says(case)
    for split in ("heldout", "heldout2", "heldout3"):
        assert len({case["family"] for case in load(split)}) >= 20, split
    style = load("style-tune") + load("style-heldout") + load("style-heldout2")
    assert len(style) >= 200 and sum(is_refusal_answer(c["answer"]) for c in style) > len(style) / 2, "mostly refusal truths"
    assert any("<think>" in c["response"] for c in style) and any("**" in c["response"] for c in style)


def test_real_parts_hold_places_and_labels_only():
    """No model output is committed: a real part's lines name where the text is in the fixture."""
    lines = [json.loads(line) for path in PATHS if path.name == "judge_set_real.jsonl" for line in path.read_text().splitlines()]
    assert lines and all(set(line) == set(REAL_FIELDS) and line["source"].startswith("cvrr-es:") for line in lines)
    assert {line["split"] for line in lines} == {"real-tune", "real-heldout", "real-heldout2"}


def test_the_parts_held_out_for_the_current_rules_are_not_tuned_on():
    held_out = {"heldout3", "real-heldout", "real-heldout2", "style-heldout", "style-heldout2"}
    assert not held_out & set(TUNING) and not {case["split"] for case in load("tuning")} & held_out


@needs_fixture
def test_real_parts_resolve_from_the_fixture():
    cases = load("real-tune") + load("real-heldout") + load("real-heldout2")
    assert len(cases) >= 300 and all(case["response"].strip() and case["question"] for case in cases)
    for case in cases:
        _labelled_as_the_prompt_says(case)
    assert len({case["source"].split("/")[1] for case in cases}) == 11, "every CVRR-ES model"


@needs_fixture
def test_the_real_labels_are_the_seeded_sample_each_item_once():
    sources = [case["source"] for part in ("real-tune", "real-heldout", "real-heldout2") for case in load(part)]
    assert len(set(sources)) == len(sources), "an item labelled twice"
    assert sorted(sources) == sorted(sample_cvrr()), "every label is an item of judge_set.sample_cvrr (seed 0), and every item is labelled"
    assert {length_bucket(case["response"]) for case in load("real-heldout2")} == {1, 3}, "the other half: the 21-48 and >100-word strata"


def test_a_real_part_without_the_fixture_is_a_clear_error(tmp_path):
    with pytest.raises(FixtureMissing, match="CVRR-ES fixture"):
        load("real-heldout", root=tmp_path / "absent")
    assert all(not case["split"].startswith("real-") for case in load("all", root=tmp_path / "absent"))


#: Regression floors, just under what the current rules version measures on each part (docs/judge_set.md), and not
#: below the issue's confident targets (refusal 0.98, judgement 0.97) where the measured value is above them:
#: (part, refusal agreement, judgement agreement, confident share, confident refusal, confident judgement).
FLOORS = [
    ("tune", 0.98, 0.94, 0.36, 0.98, 0.98),
    ("tune2", 0.98, 0.92, 0.38, 0.98, 0.98),
    ("heldout", 0.99, 0.89, 0.29, 0.98, 0.98),
    ("heldout2", 0.98, 0.92, 0.34, 0.98, 0.98),
    ("heldout3", 0.93, 0.90, 0.30, 0.98, 0.98),
    ("style-tune", 0.95, 0.90, 0.13, 0.98, 0.98),
    ("style-heldout", 0.83, 0.83, 0.06, 0.98, 0.98),
    ("style-heldout2", 0.76, 0.66, 0.13, 0.98, 0.94),
    pytest.param("real-tune", 0.98, 0.89, 0.24, 0.98, 0.98, marks=needs_fixture),
    pytest.param("real-heldout", 0.96, 0.81, 0.22, 0.98, 0.94, marks=needs_fixture),
    # rules/10 is confident of none of these (long CVRR-ES sentence answers): any it becomes sure of must meet the targets
    pytest.param("real-heldout2", 0.92, 0.73, 0.0, 0.98, 0.97, marks=needs_fixture),
]


@pytest.mark.parametrize(("split", "refusal", "judgement", "share", "sure_refusal", "sure_judgement"), FLOORS)
def test_the_rules_judge_agrees_with_the_labels(split, refusal, judgement, share, sure_refusal, sure_judgement):
    summary, _ = compare(*as_judgments(split))
    assert summary["refusal"]["agreement"] >= refusal and summary["judgement"]["agreement"] >= judgement, summary
    sure = summary["confident"]
    assert sure["share"] >= share, sure
    if sure["n"]:
        assert sure["refusal"]["agreement"] >= sure_refusal and sure["judgement"]["agreement"] >= sure_judgement, sure


@pytest.mark.parametrize("split", ["tune", "tune2", "heldout", "heldout2", "heldout3"])
def test_what_the_rules_judge_calls_a_refusal_is_one(split):
    summary, _ = compare(*as_judgments(split))
    assert summary["refusal"]["precision"] >= 0.97, summary["refusal"]


@needs_fixture
def test_the_frozen_confidence_is_what_calibration_on_the_tuning_parts_chooses():
    assert calibrate(load("tuning")) == (CONFIDENT_REFUSAL, CONFIDENT_MATCH)


def test_agree_prints_refusal_precision_and_recall_for_the_set():
    run = subprocess.run([sys.executable, "-m", "virtuebench.judge", "agree", "--set", "heldout"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "labels vs rules: 189 shared items" in run.stderr and "precision" in run.stderr and "recall" in run.stderr
    assert "confident (" in run.stderr and "unconfident (" in run.stderr


def test_agree_pools_several_parts():
    run = subprocess.run(
        [sys.executable, "-m", "virtuebench.judge", "agree", "--set", "heldout", "heldout2"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert f"labels vs rules: {len(load('heldout')) + len(load('heldout2'))} shared items" in run.stderr


def test_precision_prints_each_rule_and_marks_the_confident_ones(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "virtuebench.judge", "precision", "--set", "tune", "--out", str(tmp_path / "p.csv")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    rows = (tmp_path / "p.csv").read_text().splitlines()
    assert rows[0] == "stage,label,n,agree,precision,confident" and any(row.startswith("refusal,refusal-only@short,") for row in rows)
    assert "refusal-only@short" in run.stderr and "yes" in run.stderr


def _words(text):
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("\u2019", "'"))


def test_no_judge_module_quotes_a_labelled_case():
    """A comment or string of the judge's code that repeats a labelled case (six words in a row of its question,
    response or definite ground truth) shows a rule written for that case; describe the pattern instead."""
    span = 6
    refusal = _words(REFUSAL_ANSWER)  # the benchmark's refusal truth, which the judge prompt states and replies echo
    quoted = {}
    for case in load("all"):  # the real parts too, where the fixture is present
        for field in ("question", "response") if is_refusal_answer(case["answer"]) else ("question", "answer", "response"):
            words = _words(case[field])
            for start in range(len(words) - span + 1):
                quoted.setdefault(tuple(words[start : start + span]), case["id"])
    for start in range(len(refusal) - span + 1):
        quoted.pop(tuple(refusal[start : start + span]), None)
    found = []
    for module in sorted(Path(virtuebench.judge.__file__).parent.glob("*.py")):
        for token in tokenize.generate_tokens(io.StringIO(module.read_text(encoding="utf-8")).readline):
            if token.type in (tokenize.COMMENT, tokenize.STRING):
                words = _words(token.string)
                spans = (tuple(words[start : start + span]) for start in range(len(words) - span + 1))
                found += [f"{module.name}:{token.start[0]} quotes {quoted[s]}: {' '.join(s)}" for s in spans if s in quoted]
    assert not found, found
