"""The labelled judge set (docs/judge_set.md) is well formed, the rules judge's agreement with it is what
docs/judge_set.md and the README report, and its confidence is what calibrating on the tuning parts chooses.
The floors sit just under the measured values to catch a regression; they were not chosen to pass. The real
parts read their texts from the CVRR-ES fixture (../shared/fixtures): those tests skip where it is absent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from virtuebench import is_refusal_answer
from virtuebench.judge.agreement import compare
from virtuebench.judge.judge_set import (
    FIELDS,
    PARTS,
    PATHS,
    REAL_FIELDS,
    FixtureMissing,
    as_judgments,
    calibrate,
    has_real_parts,
    load,
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
    style = load("style-tune") + load("style-heldout")
    assert len(style) >= 80 and sum(is_refusal_answer(c["answer"]) for c in style) > len(style) / 2, "mostly refusal truths"
    assert any("<think>" in c["response"] for c in style) and any("**" in c["response"] for c in style)


def test_real_parts_hold_places_and_labels_only():
    """No model output is committed: a real part's lines name where the text is in the fixture."""
    lines = [json.loads(line) for path in PATHS if path.name == "judge_set_real.jsonl" for line in path.read_text().splitlines()]
    assert lines and all(set(line) == set(REAL_FIELDS) and line["source"].startswith("cvrr-es:") for line in lines)
    assert {line["split"] for line in lines} == {"real-tune", "real-heldout"}


@needs_fixture
def test_real_parts_resolve_from_the_fixture():
    cases = load("real-tune") + load("real-heldout")
    assert len(cases) >= 150 and all(case["response"].strip() and case["question"] for case in cases)
    for case in cases:
        _labelled_as_the_prompt_says(case)
    assert len({case["source"].split("/")[1] for case in cases}) == 11, "every CVRR-ES model"


def test_a_real_part_without_the_fixture_is_a_clear_error(tmp_path):
    with pytest.raises(FixtureMissing, match="CVRR-ES fixture"):
        load("real-heldout", root=tmp_path / "absent")
    assert all(not case["split"].startswith("real-") for case in load("all", root=tmp_path / "absent"))


@pytest.mark.parametrize(
    ("split", "refusal", "judgement"),
    [("tune", 0.97, 0.93), ("tune2", 0.97, 0.91), ("heldout", 0.99, 0.88), ("heldout2", 0.97, 0.91), ("heldout3", 0.93, 0.90)],
)
def test_the_rules_judge_agrees_with_the_labels(split, refusal, judgement):
    summary, _ = compare(*as_judgments(split))
    assert summary["refusal"]["agreement"] >= refusal and summary["judgement"]["agreement"] >= judgement, summary
    assert summary["refusal"]["precision"] >= 0.95  # what it calls a refusal is one


@pytest.mark.parametrize("split", ["heldout3", "style-heldout", "style-tune", "tune", "tune2", "heldout", "heldout2"])
def test_the_confident_verdicts_agree(split):
    summary, _ = compare(*as_judgments(split))
    sure = summary["confident"]
    assert sure["n"] >= 3 and sure["refusal"]["agreement"] >= 0.98 and sure["judgement"]["agreement"] >= 0.98, sure


@needs_fixture
@pytest.mark.parametrize("split", ["real-tune", "real-heldout"])
def test_the_confident_verdicts_agree_on_real_answers(split):
    summary, _ = compare(*as_judgments(split))
    sure = summary["confident"]
    assert sure["n"] >= 15 and sure["refusal"]["agreement"] >= 0.98 and sure["judgement"]["agreement"] >= 0.95, sure


@needs_fixture
def test_the_frozen_confidence_is_what_calibration_on_the_tuning_parts_chooses():
    assert calibrate(load("tuning")) == (CONFIDENT_REFUSAL, CONFIDENT_MATCH)


def test_agree_prints_refusal_precision_and_recall_for_the_set():
    run = subprocess.run([sys.executable, "-m", "virtuebench.judge", "agree", "--set", "heldout"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "labels vs rules: 189 shared items" in run.stderr and "precision" in run.stderr and "recall" in run.stderr
    assert "confident (" in run.stderr and "unconfident (" in run.stderr


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
