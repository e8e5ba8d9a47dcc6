"""The labelled judge set (docs/judge_set.md): hand-labelled (question, ground truth, response) cases with
the refusal and judgement the paper's judge prompt asks for, in parts each labelled independently of the rules
judge. Written short cases: `tune` and `tune2` (judge_set.jsonl), `heldout`, `heldout2` (each reported once,
then tuned on) and `heldout3` (judge_set_heldout3.jsonl, reported). Real answers: `real-tune`, `real-heldout`
and `real-heldout2` (judge_set_real.jsonl: a seeded sample of the CVRR-ES authors' published model responses; the
file holds each item's place and labels, the texts are read from a copy of those outputs beside the repository: CVRR_FIXTURE). Long, markdown and
thinking-style answers written for VirtueBench-style items: `style-tune`, `style-heldout` and `style-heldout2`
(judge_set_style.jsonl). The `tuning` group is every part the rules were chosen and calibrated on."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.judge import get_judge
from virtuebench.judge.rules import AMBIGUOUS_RULES, MIN_CASES, MIN_PRECISION, read
from virtuebench.records import Judgment

#: The labelled parts' files: package data (pyproject's package-data), so an installed package has them too.
DATA = Path(__file__).parent / "data"
PATHS = tuple(
    DATA / name
    for name in (
        "judge_set.jsonl",
        "judge_set_heldout.jsonl",
        "judge_set_heldout2.jsonl",
        "judge_set_heldout3.jsonl",
        "judge_set_real.jsonl",
        "judge_set_style.jsonl",
    )
)
PARTS = (
    "tune",
    "tune2",
    "heldout",
    "heldout2",
    "heldout3",
    "real-tune",
    "real-heldout",
    "real-heldout2",
    "style-tune",
    "style-heldout",
    "style-heldout2",
)
#: The parts the rules were chosen and their confidence calibrated on; the rest are reported.
TUNING = ("tune", "tune2", "heldout", "heldout2", "real-tune", "style-tune")
SPLITS = (*PARTS, "tuning", "all")
FIELDS = ("id", "split", "family", "source", "question", "answer", "response", "refusal", "judgement", "reason")
#: A real part's lines hold no texts: they are read from the fixture at `source`.
REAL_FIELDS = ("id", "split", "family", "source", "refusal", "judgement", "reason")


#: Where the real answers of the `real-*` parts come from: the CVRR-ES authors' published outputs, which the
#: project reads from a copy beside the repository and never commits; the parts store only each item's place in them.
CVRR_FIXTURE = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "cvrr-es" / "Judge-results"
LENGTH_BUCKETS = (20, 48, 100)  # words: up to 20, 21-48, 49-100, over 100 (the real answers' spread)


class FixtureMissing(ValueError):
    """A real part was asked for where the CVRR-ES fixture its texts come from is not present."""


def cvrr_item(source: str, root: Path = CVRR_FIXTURE) -> dict[str, str]:
    """The question, ground truth and response at `source` (`[cvrr-es:]<setting>/<Model>/<dimension>#<index>`)."""
    path, _, index = source.removeprefix("cvrr-es:").partition("#")
    file = root / f"{path}.json"
    if not file.is_file():
        raise FixtureMissing(f"{file} not found: the real parts of the judge set read their texts from the CVRR-ES fixture")
    item = json.loads(file.read_text())[int(index)][1]
    return {"question": str(item["q"]), "answer": str(item["a"]), "response": str(item["pred"])}


def length_bucket(text: str) -> int:
    words = len(re.findall(r"\S+", text))
    return sum(words > limit for limit in LENGTH_BUCKETS)


def sample_cvrr(root: Path = CVRR_FIXTURE, per_model: int = 30, seed: int = 0) -> list[str]:
    """A seeded sample of the real CVRR-ES responses, `per_model` from each of the 11 models (both prompting
    settings pooled), spread evenly over the four answer-length buckets where a model has answers in each."""
    rng = random.Random(seed)
    by_model: dict[str, list[list[str]]] = {}
    for path in sorted(root.glob("*/*/*.json")):
        setting, model, dimension = path.parent.parent.name, path.parent.name, path.stem
        for index, entry in enumerate(json.loads(path.read_text())):
            response = str(entry[1].get("pred", ""))
            if response.strip():
                buckets = by_model.setdefault(model, [[] for _ in range(len(LENGTH_BUCKETS) + 1)])
                buckets[length_bucket(response)].append(f"cvrr-es:{setting}/{model}/{dimension}#{index}")
    chosen = []
    for model in sorted(by_model):
        buckets = [rng.sample(bucket, len(bucket)) for bucket in by_model[model]]
        picked: list[str] = []
        while len(picked) < per_model and any(buckets):
            for bucket in buckets:
                if bucket and len(picked) < per_model:
                    picked.append(bucket.pop())
        chosen += picked
    return chosen


def has_real_parts(root: Path = CVRR_FIXTURE) -> bool:
    return root.is_dir()


def _wanted(split: str, part: str) -> bool:
    return split in ("all", part) or (split == "tuning" and part in TUNING)


def load(split: str = "all", paths: tuple[Path, ...] = PATHS, root: Path = CVRR_FIXTURE) -> list[dict[str, Any]]:
    """The cases of `split` (a part, `tuning` or `all`). A real part needs the CVRR-ES fixture: asked for by
    name without it, FixtureMissing; within `tuning` or `all` its cases are left out (`has_real_parts`)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    if split.startswith("real-") and not has_real_parts(root):
        raise FixtureMissing(f"{root} not found: the {split} part reads its texts from the CVRR-ES fixture")
    cases = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            case = json.loads(line)
            real = set(case) == set(REAL_FIELDS)
            if not real and set(case) != set(FIELDS):
                raise ValueError(f"{path}:{number}: fields {sorted(case)} are neither {sorted(FIELDS)} nor {sorted(REAL_FIELDS)}")
            if case["split"] not in PARTS:
                raise ValueError(f"{path}:{number}: split {case['split']!r} is not one of {', '.join(PARTS)}")
            if not _wanted(split, case["split"]):
                continue
            if real:
                if not has_real_parts(root):
                    continue
                case = {**case, **cvrr_item(case["source"], root)}
            cases.append({field: case[field] for field in FIELDS})
    return cases


def label(case: dict[str, Any]) -> tuple[str, str | None]:
    """The rules judge's refusal and match labels for a case (virtuebench.judge.rules.read)."""
    reading = read(case["question"], case["answer"], case["response"])
    return reading.refusal_rule, reading.match_rule


def precision_by_rule(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per rules label, how often its decision agrees with the hand labels: the refusal labels on the refusal
    decision, the match labels (Case A, answered) on the judgement."""
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        reading = read(case["question"], case["answer"], case["response"])
        refusal = tally["refusal", reading.refusal_rule]
        refusal[0] += 1
        refusal[1] += reading.refusal == case["refusal"]
        if reading.match_rule:
            match = tally["match", reading.match_rule]
            match[0] += 1
            match[1] += reading.judgement == case["judgement"]
    return [
        {"stage": stage, "label": name, "n": n, "agree": agree, "precision": round(agree / n, 4)}
        for (stage, name), (n, agree) in sorted(tally.items())
    ]


def calibrate(cases: list[dict[str, Any]]) -> tuple[frozenset[str], frozenset[str]]:
    """The labels the rules may decide on alone: precision >= MIN_PRECISION over >= MIN_CASES cases, and a stage-1
    rule that is not ambiguous by construction (AMBIGUOUS_RULES)."""
    rows = precision_by_rule(cases)
    sure = [
        row
        for row in rows
        if row["n"] >= MIN_CASES and row["agree"] >= MIN_PRECISION * row["n"] and row["label"].split("@")[0] not in AMBIGUOUS_RULES
    ]
    return (
        frozenset(row["label"] for row in sure if row["stage"] == "refusal"),
        frozenset(row["label"] for row in sure if row["stage"] == "match"),
    )


def _judgment(
    case: dict[str, Any], judge: str, refusal: int, judgement: int, valid: bool, reason: str, confident: bool | None = None
) -> Judgment:
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
        confident=confident,
    )


def as_judgments(split: str, judge_name: str = "rules") -> tuple[list[Judgment], list[Judgment]]:
    """The labels (judge `labels`) and the judge's verdicts on the same cases, as judgment records."""
    judge = get_judge(judge_name)
    labels, verdicts = [], []
    for case in load(split):
        labels.append(_judgment(case, "labels", case["refusal"], case["judgement"], True, case["reason"]))
        verdict = judge.judge(case["question"], case["answer"], case["response"])
        verdicts.append(_judgment(case, judge_name, verdict.refusal, verdict.judgement, verdict.valid, verdict.reason, verdict.confident))
    return labels, verdicts
