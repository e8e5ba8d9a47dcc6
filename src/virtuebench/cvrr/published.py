"""Importer for the CVRR-ES authors' published judge outputs.

Layout: `<root>/<setting>/<Model>/<dimension>.json`, setting in standard_prompting / dscp_prompting;
each file a list of `[{"pred": "correct"|"incorrect", "score": int, "reason": str}, {"q", "a", "pred"}]`
(a few items nest the verdict one list deeper). Each item becomes a project Judgment record, so
published rows and new runs share one table. A verdict other than correct/incorrect is kept with
`valid: false`, as the paper's formula leaves it out of correct + incorrect.
"""

from __future__ import annotations

import json
from pathlib import Path

from virtuebench.cvrr import DIMENSIONS, SETTINGS
from virtuebench.records import Judgment, RecordError, stable_hash

PUBLISHED_JUDGE = "gpt-3.5-turbo-0125-published"


def find_root(path: str | Path) -> Path:
    """The folder holding the setting folders: `path` itself, or its `Judge-results` child."""
    path = Path(path)
    for candidate in (path, path / "Judge-results"):
        if candidate.is_dir() and any((candidate / setting).is_dir() for setting in SETTINGS):
            return candidate
    raise RecordError(
        f"{path}: no CVRR-ES judge outputs here; expected {' or '.join(SETTINGS)} folders "
        f"(in {path} or {path / 'Judge-results'}) holding <Model>/<dimension>.json"
    )


def _verdict_and_item(entry, path: Path, index: int) -> tuple[dict, dict]:
    if not isinstance(entry, list) or len(entry) != 2:
        raise RecordError(f"{path}: item {index} is not a [verdict, item] pair")
    verdict, item = entry
    if isinstance(verdict, list) and len(verdict) == 1:  # a few items nest the verdict one level deeper
        verdict = verdict[0]
    if not isinstance(verdict, dict) or not isinstance(item, dict):
        raise RecordError(f"{path}: item {index}: expected objects, got {type(verdict).__name__} and {type(item).__name__}")
    missing = [key for key in ("q", "a", "pred") if key not in item]
    if missing:
        raise RecordError(f"{path}: item {index}: the QA part lacks {missing}")
    return verdict, item


def read_file(path: Path, setting: str, model: str, dimension: str) -> list[Judgment]:
    try:
        entries = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise RecordError(f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(entries, list):
        raise RecordError(f"{path}: expected a list of [verdict, item] pairs")
    prompt = SETTINGS[setting]
    judgments = []
    for index, entry in enumerate(entries):
        verdict, item = _verdict_and_item(entry, path, index)
        pred = verdict.get("pred")
        valid = pred in ("correct", "incorrect")
        score = verdict.get("score")
        judgments.append(
            Judgment(
                instance_id=f"{dimension}/{index:04d}",
                model=model,
                prompt=prompt,
                level=0,
                judge=PUBLISHED_JUDGE,
                category=dimension,
                task_type=dimension,
                answer=str(item["a"]),
                is_unanswerable=False,
                response=item["pred"],
                refusal=0,
                judgement=int(pred == "correct"),
                valid=valid,
                reason=str(verdict.get("reason", "")),
                error=None if valid else f"published verdict {pred!r} is neither 'correct' nor 'incorrect'",
                fingerprint=stable_hash([setting, model, dimension, index]),
                score=int(score) if isinstance(score, (int, float)) else None,
                judge_version="cvrr-judge/1 (published)",
                question=str(item["q"]),
            )
        )
    return judgments


def read_published(path: str | Path) -> list[Judgment]:
    """Every published judgment under `path` (see find_root), in a stable order."""
    root = find_root(path)
    judgments: list[Judgment] = []
    for setting in SETTINGS:
        if not (root / setting).is_dir():
            continue
        for model_dir in sorted(p for p in (root / setting).iterdir() if p.is_dir()):
            for file in sorted(model_dir.glob("*.json")):
                if file.stem not in DIMENSIONS:
                    raise RecordError(f"{file}: {file.stem!r} is not a CVRR-ES dimension; known: {', '.join(DIMENSIONS)}")
                judgments.extend(read_file(file, setting, model_dir.name, file.stem))
    if not judgments:
        raise RecordError(f"{root}: no judge outputs found")
    return judgments
