"""The labelled judge set (docs/judge_set.md): hand-labelled (question, ground truth, response) cases with
the refusal and judgement the paper's judge prompt asks for, in parts each written independently of the rules
judge and held out for one round before being tuned on: `tune` and `tune2` (judge_set.jsonl), `heldout`
(reported for rules/4, tuned on in round 3), `heldout2` (reported for rules/5, tuned on in round 4) and
`heldout3` (judge_set_heldout3.jsonl: first read after rules/6 was frozen; the reported numbers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.judge import get_judge
from virtuebench.records import Judgment

PATHS = tuple(
    Path(__file__).with_name(name)
    for name in ("judge_set.jsonl", "judge_set_heldout.jsonl", "judge_set_heldout2.jsonl", "judge_set_heldout3.jsonl")
)
SPLITS = ("tune", "tune2", "heldout", "heldout2", "heldout3", "all")
FIELDS = ("id", "split", "family", "source", "question", "answer", "response", "refusal", "judgement", "reason")


def load(split: str = "all", paths: tuple[Path, ...] = PATHS) -> list[dict[str, Any]]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    cases = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            case = json.loads(line)
            if set(case) != set(FIELDS):
                raise ValueError(f"{path}:{number}: fields {sorted(case)} are not {sorted(FIELDS)}")
            if split in ("all", case["split"]):
                cases.append(case)
    return cases


def _judgment(case: dict[str, Any], judge: str, refusal: int, judgement: int, valid: bool, reason: str) -> Judgment:
    return Judgment(
        case["id"],
        case["family"],
        case["source"],
        0,
        judge,
        case["family"],
        case["family"],
        case["answer"],
        is_refusal_answer(case["answer"]),
        case["response"],
        refusal,
        judgement,
        valid,
        reason,
        None,
        "",
        question=case["question"],
    )


def as_judgments(split: str, judge_name: str = "rules") -> tuple[list[Judgment], list[Judgment]]:
    """The labels (judge `labels`) and the judge's verdicts on the same cases, as judgment records."""
    judge = get_judge(judge_name)
    labels, verdicts = [], []
    for case in load(split):
        labels.append(_judgment(case, "labels", case["refusal"], case["judgement"], True, case["reason"]))
        verdict = judge.judge(case["question"], case["answer"], case["response"])
        verdicts.append(_judgment(case, judge_name, verdict.refusal, verdict.judgement, verdict.valid, verdict.reason))
    return labels, verdicts
