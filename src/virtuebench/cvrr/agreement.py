"""An offline judge measured against the published CVRR-ES verdicts (GPT-3.5-turbo-0125, the authors').

Each published item (question, ground truth, prediction) is judged again by the offline judge; the two
verdicts are compared with virtuebench.judge.agreement, per (setting, model) and overall.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from virtuebench.cvrr.scoring import setting_of
from virtuebench.judge import get_judge
from virtuebench.judge.agreement import compare
from virtuebench.records import Judgment, write_jsonl_atomic
from virtuebench.support.tabular import write_csv


def rejudge(published: list[Judgment], judge_name: str) -> list[Judgment]:
    judge = get_judge(judge_name)
    out = []
    for item in published:
        verdict = judge.judge(item.question or "", item.answer, item.response or "")
        out.append(
            replace(
                item,
                judge=judge_name,
                refusal=0,
                judgement=verdict.judgement,
                valid=verdict.valid,
                reason=verdict.reason,
                score=None,
                judge_version=judge.version,
                confident=verdict.confident,
            )
        )
    return out


def measure(published: list[Judgment], judge_name: str, out_dir: str | Path) -> dict[str, Any]:
    """Writes the agreement files; returns the overall summary (virtuebench.judge.agreement.compare)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    offline = rejudge(published, judge_name)
    groups: dict[tuple[str, str], tuple[list[Judgment], list[Judgment]]] = defaultdict(lambda: ([], []))
    for a, b in zip(published, offline):
        groups[(setting_of(a.prompt), a.model)][0].append(a)
        groups[(setting_of(a.prompt), a.model)][1].append(b)
    rows = []
    for (setting, model), (a, b) in sorted(groups.items()):
        summary, _ = compare(a, b)
        rows.append(
            {"setting": setting, "model": model, **{k: summary["judgement"][k] for k in ("n", "agreement", "kappa", "rate_a", "rate_b")}}
        )
    overall, disagreements = compare(published, offline)
    rows.append({"setting": "all", "model": "all", **{k: overall["judgement"][k] for k in ("n", "agreement", "kappa", "rate_a", "rate_b")}})
    for label in ("confident", "unconfident"):  # the rules judge's verdicts it was sure of, and the others
        if label in overall:
            part = overall[label]["judgement"]
            rows.append({"setting": "all", "model": label, **{k: part[k] for k in ("n", "agreement", "kappa", "rate_a", "rate_b")}})
    write_csv(out_dir / "agreement.csv", rows)
    (out_dir / "agreement.json").write_text(json.dumps({"published_vs": judge_name, "rows": rows, "overall": overall}, indent=1) + "\n")
    write_jsonl_atomic(out_dir / "disagreements.jsonl", disagreements)
    return overall
