"""How far two judges agree on the same responses: raw agreement and Cohen's kappa for refusal and for
judgement, precision and recall of the second judge's refusals (and correct verdicts) taking the first as
the reference, and the items they disagree on. Only items both judged validly are compared."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from virtuebench.records import Judgment


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two binary raters; None when it is undefined (no items, or chance agreement of 1)."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    p_a, p_b = sum(a) / n, sum(b) / n
    expected = p_a * p_b + (1 - p_a) * (1 - p_b)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def _stats(a: Sequence[int], b: Sequence[int]) -> dict[str, Any]:
    """Agreement, kappa and the rates; precision and recall of b's 1s taking a as the reference."""
    n = len(a)
    both = sum(x == y == 1 for x, y in zip(a, b))
    return {
        "n": n,
        "agreement": round(sum(x == y for x, y in zip(a, b)) / n, 4) if n else None,
        "kappa": None if (k := cohen_kappa(a, b)) is None else round(k, 4),
        "rate_a": round(sum(a) / n, 4) if n else None,
        "rate_b": round(sum(b) / n, 4) if n else None,
        "precision": round(both / sum(b), 4) if sum(b) else None,
        "recall": round(both / sum(a), 4) if sum(a) else None,
    }


def _key(j: Judgment) -> tuple[str, str, str, int, int]:
    """An item, and which run of a sampled model (-1: a model run once): each run's verdicts are compared."""
    return (j.instance_id, j.model, j.prompt, j.level, -1 if j.sample is None else j.sample)


def compare(first: Iterable[Judgment], second: Iterable[Judgment]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary and disagreements of two judges over the items both have."""
    a_items = {_key(j): j for j in first}
    b_items = {_key(j): j for j in second}
    shared = sorted(a_items.keys() & b_items.keys())
    both_valid = [k for k in shared if a_items[k].valid and b_items[k].valid]
    names = (next(iter(a_items.values())).judge if a_items else "a", next(iter(b_items.values())).judge if b_items else "b")
    summary = {
        "judge_a": names[0],
        "judge_b": names[1],
        "n_shared": len(shared),
        "n_only_a": len(a_items.keys() - b_items.keys()),
        "n_only_b": len(b_items.keys() - a_items.keys()),
        "n_invalid_a": sum(not a_items[k].valid for k in shared),
        "n_invalid_b": sum(not b_items[k].valid for k in shared),
        "refusal": _stats([a_items[k].refusal for k in both_valid], [b_items[k].refusal for k in both_valid]),
        "judgement": _stats([a_items[k].judgement for k in both_valid], [b_items[k].judgement for k in both_valid]),
    }
    # Where the second judge says how sure it was (the rules judge's `confident`), the same on each side of that line.
    for label, sure in (("confident", True), ("unconfident", False)):
        keys = [k for k in both_valid if b_items[k].confident is sure]
        if any(b_items[k].confident is not None for k in both_valid):
            summary[label] = {
                "n": len(keys),
                "share": round(len(keys) / len(both_valid), 4) if both_valid else None,
                "refusal": _stats([a_items[k].refusal for k in keys], [b_items[k].refusal for k in keys]),
                "judgement": _stats([a_items[k].judgement for k in keys], [b_items[k].judgement for k in keys]),
            }
    decided = Counter(b_items[k].decided_by for k in shared if b_items[k].decided_by)
    if decided:  # a hybrid judge: how many verdicts each of its judges gave
        summary["decided_by"] = dict(sorted(decided.items()))
    disagreements = [
        {
            "instance_id": k[0],
            "model": k[1],
            "prompt": k[2],
            "level": k[3],
            **({"sample": k[4]} if k[4] >= 0 else {}),
            "answer": a_items[k].answer,
            "response": a_items[k].response,
            f"{names[0]}": {"refusal": a_items[k].refusal, "judgement": a_items[k].judgement, "reason": a_items[k].reason},
            f"{names[1]}": {
                "refusal": b_items[k].refusal,
                "judgement": b_items[k].judgement,
                "reason": b_items[k].reason,
                "confident": b_items[k].confident,
            },
        }
        for k in both_valid
        if (a_items[k].refusal, a_items[k].judgement) != (b_items[k].refusal, b_items[k].judgement)
    ]
    return summary, disagreements
