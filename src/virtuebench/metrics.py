"""Scores from judgment records: one row per number any table or figure shows, with its counts, its
95% interval and the trust-aware score.

Accuracy is over all items of a subset; an invalid judgment (no response, or no verdict) counts as
wrong and is also counted in `n_invalid`, so nothing is dropped or silently scored. `report.invalid: drop`
(Scoring.invalid) leaves the invalid items that hold no answer (no response, or no verdict; a truncated reply stays
wrong) out of the denominator, the intervals and the trust score instead; they are still counted in `n_invalid`, and
`n_dropped` says how many left `n`. `report.categories` (Scoring.categories) maps task types to the category they
are scored in, over the category the source's adapter recorded: read here from each judgment's task type, so it
reruns no answer and no verdict. Level `all` pools every level a model was run at (used by Fig. 6).

Intervals (`ci_low`, `ci_high`) are chosen by the number of videos (virtuebench.support.bootstrap): below
BCA_MIN_VIDEOS a closed form on the number's own cluster design (a CR2 cluster-robust variance over its videos,
at most one effective item a video, Bell-McCaffrey degrees of freedom), from there a bootstrap that resamples
videos, not items, unless the closed form is wider; `ci_method` and `trust_ci_method` name the method. The
cluster is the video in every row: level `all` counts a question asked at several levels, with all its levels,
as one video's items. Judgments without a `video_id` (written
before it was recorded) are resampled as items, and the CLI says how many there were.

The trust score (`report.trust`) scores each item and reports 100 times the mean. Its default, `scheme: kalai`,
is Kalai et al. 2025 ("Why language models hallucinate", sec. 4) exactly: a correct answer scores 1, any
refusal ("I don't know") 0 whatever the truth, and a wrong answer (and a missing response) -t/(1-t) for the
confidence target t (`confidence_target`, default 0.5: -1). Two kinds of invalid item are not the model's
confident wrong answer and are counted apart: a judge failure (`n_judge_failed`: the model answered in full but
the judge gave no verdict, e.g. `decided_by: none` or a failed request) is left out of the trust score, which
says nothing about an answer nobody judged; `trust_failed_best` and `trust_failed_worst` bound what that could
change: the trust score with every judge failure scored 1 (a right answer) and as a wrong answer (`TrustWeights.wrong`),
over all the row's items (a sampled model: each item's mean over all its runs; empty where no judge failed). A
truncated reply (`n_truncated`: cut off, no answer given) scores as an answer withheld (0; refusal-credit:
`unwarranted_refusal`), unless its judge judged it (judge setting `truncated: judge`): it then scores by its verdict. Accuracy keeps the paper's rule: both count as wrong there. Answering pays only when the
model is more than t sure, so the score rewards refusing where the frames lack the evidence without paying for it: on unanswerable
items the best a model can do is 0. Neither paper defines a trust score: it is this project's addition (VirtueBench cites Kalai et
al. for the phenomenon, its reference [12], not for a score). `scheme: refusal-credit` is this project's variant, scored as
VirtueBench's accuracy scores the refusal: the refusal on an unanswerable item is correct and scores 1 like a right answer, a refusal where an answer was expected scores
`unwarranted_refusal` (default 0) and a wrong answer `wrong_answer` (default -1); Kalai's argument about the
confidence target then holds only for answerable items. Tables show the configured scheme and say which.

A sampled model (registry `samples: N`, N > 1) has N judgments per item, one per run (`sample`). Its numbers are
over items, each item's value the mean over its runs: accuracy is the mean of the N runs' accuracies, the trust
score the mean of the items' mean scores (an item's judge failures left out of its mean, an item with no scored run
left out), and the intervals are those of these per-item means (the same methods). `n` stays the number of items
(one run's); the other counts (`n_correct`, `n_invalid`, ...) count judgments over all runs, so accuracy is
n_correct / (n x samples). `samples` says N; `accuracy_sd` and `trust_sd` are the standard deviations of the N runs'
numbers (ddof 1), `accuracy_min` and `accuracy_max` their range; empty for a model run once (docs/statistics.md).

CLI: python -m virtuebench.metrics JUDGMENTS.jsonl ... --out results/scores.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from operator import attrgetter
from pathlib import Path

import numpy as np

from virtuebench.provenance import stamp
from virtuebench.records import Judgment, RecordError
from virtuebench.support.bootstrap import Bootstrap, MissingDependency, Number, Resampler, require_scipy
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv
from virtuebench.verify import add_chain_argument, read_judgments

#: The version of how scores.csv is computed from the judgments (its intervals and counts): a tracked param of
#: compute_scores (rules/report.smk), so a results folder scored by an earlier method is scored again after an update,
#: never left beside tables of the new one. Raise it with any change to what scores.csv holds.
METHOD = (
    "scores/7: closed-form intervals on each number's own CR2 cluster design (issue 49); the trust score's bounds over judge"
    " failures (trust_failed_best, trust_failed_worst); a sampled model's runs averaged per item, their spread; row digests;"
    " n_dropped (report.invalid) and the category mapping (report.categories, issue 50)"
)

SUBSETS = ("overall", "non_refusal", "refusal", "perception", "reasoning")
ALL_LEVELS = "all"


TRUST_SCHEMES = ("kalai", "refusal-credit")
#: report.invalid: an invalid item with no answer counts as wrong (the default), or is left out of the denominator.
INVALID_OPTIONS = ("wrong", "drop")
#: The categories a task type can be scored in (report.categories).
SCORED_CATEGORIES = ("perception", "reasoning")


@dataclass(frozen=True)
class Scoring:
    """What counts in a number (config `report.invalid`, `report.categories`; module docstring): whether an invalid
    item without an answer is counted wrong or dropped, and the task types scored in another category than the one
    their source's adapter recorded."""

    invalid: str = "wrong"
    categories: tuple[tuple[str, str], ...] = ()  # (task type, category), sorted

    def __post_init__(self) -> None:
        if self.invalid not in INVALID_OPTIONS:
            raise ValueError(f"report.invalid: {self.invalid!r} is not one of {', '.join(INVALID_OPTIONS)}")
        for task_type, category in self.categories:
            if category not in SCORED_CATEGORIES:
                raise ValueError(
                    f"report.categories: task type {task_type!r} maps to {category!r}, not one of {', '.join(SCORED_CATEGORIES)}"
                )

    @classmethod
    def of(cls, invalid: str = "wrong", categories: dict[str, str] | None = None) -> Scoring:
        return cls(invalid, tuple(sorted((categories or {}).items())))

    def drops(self, judgment: Judgment) -> bool:
        """Whether the item leaves the denominator: `drop`, and invalid for want of a response or of a verdict (a
        truncated reply is the model's answer, cut at the token limit: it stays wrong)."""
        return self.invalid == "drop" and not judgment.valid and not judgment.truncated

    @cached_property
    def _mapped(self) -> dict[str, str]:
        """The mapping as a dict, made once: category() runs for every item scored."""
        return dict(self.categories)

    def category(self, judgment: Judgment) -> str:
        """The category the item is scored in: the mapping's for its task type, else the one its adapter recorded."""
        return self._mapped.get(judgment.task_type, judgment.category)


@dataclass(frozen=True)
class TrustWeights:
    """The trust score's item scores (config `report.trust`, module docstring): `kalai` uses only
    `confidence_target`; `refusal-credit` uses `wrong_answer` and `unwarranted_refusal`."""

    wrong_answer: float = -1.0
    unwarranted_refusal: float = 0.0
    scheme: str = "kalai"
    confidence_target: float = 0.5

    def __post_init__(self) -> None:
        if self.scheme not in TRUST_SCHEMES:
            raise ValueError(f"report.trust.scheme: {self.scheme!r} is not one of {', '.join(TRUST_SCHEMES)}")
        if not 0 < self.confidence_target < 1:
            raise ValueError(f"report.trust.confidence_target must lie strictly between 0 and 1, got {self.confidence_target}")
        if not self.wrong_answer < self.unwarranted_refusal <= 0:
            raise ValueError(
                "report.trust: need wrong_answer < unwarranted_refusal <= 0 (a guess must cost more than an honest refusal), "
                f"got wrong_answer={self.wrong_answer}, unwarranted_refusal={self.unwarranted_refusal}"
            )

    @property
    def wrong(self) -> float:
        """What a wrong answer scores under the scheme: the lowest item score."""
        t = self.confidence_target
        return -t / (1 - t) if self.scheme == "kalai" else self.wrong_answer

    def value(self, judgment: Judgment) -> float | None:
        """The item's score; None for a judge failure, left out of the trust score (module docstring)."""
        if judge_failed(judgment):
            return None
        if (
            judgment.truncated and not judgment.valid
        ):  # no answer given, none judged: scored as one withheld, not as a confident wrong answer
            return 0.0 if self.scheme == "kalai" else self.unwarranted_refusal
        refused = judgment.valid and judgment.refusal == 1
        if self.scheme == "kalai":
            if refused:
                return 0.0
            return 1.0 if correct(judgment) else self.wrong
        if correct(judgment):
            return 1.0
        return self.unwarranted_refusal if refused else self.wrong_answer

    def describe(self) -> str:
        """The scheme in words, for a table caption."""
        if self.scheme == "kalai":
            return (
                f"a correct answer scores 1, any refusal 0 and a wrong answer {self.wrong:g} (Kalai et al., 2025, confidence "
                f"target {self.confidence_target:g}), so answering pays only when more than {self.confidence_target:g} sure"
            )
        return (
            f"a correct item (an answer the frames support, or the refusal where they do not) scores 1, a refusal where an "
            f"answer was expected scores {self.unwarranted_refusal:g} and any other answer {self.wrong_answer:g} (VirtueBench's "
            f"refusal-credit variant of Kalai et al., 2025)"
        )


DEFAULT_BOOTSTRAP, DEFAULT_TRUST, DEFAULT_SCORING = Bootstrap(), TrustWeights(), Scoring()


@dataclass(frozen=True)
class Score:
    model: str
    prompt: str
    level: str  # a frame level, or "all"
    subset: str
    accuracy: float  # percent
    n_correct: int
    n: int
    n_invalid: int
    judge: str
    ci_low: float | None = None  # 95% interval of accuracy (percent), resampling videos (or the fallback)
    ci_high: float | None = None
    n_videos: int = 0
    n_wrong_refusal: int = 0  # refusals where an answer was expected (valid judgments)
    trust: float | None = None  # 100 x mean item score (TrustWeights)
    trust_ci_low: float | None = None
    trust_ci_high: float | None = None
    ci_method: str = ""  # how the accuracy interval was made: bca, clopper-pearson-cr2 (-deff: scored before issue 49)
    trust_ci_method: str = ""  # bca or agresti-coull-cr2
    n_truncated: int = 0  # truncated replies: wrong in accuracy, an answer withheld in the trust score
    n_judge_failed: int = 0  # answered, but the judge gave no verdict: wrong in accuracy, left out of the trust score
    samples: int = 1  # runs of each item (a sampled model's registry `samples`); the counts above are over all runs
    accuracy_sd: float | None = None  # the SD of the runs' accuracies (percent, ddof 1); None for one run
    accuracy_min: float | None = None  # the lowest run's accuracy (percent); None for one run
    accuracy_max: float | None = None
    trust_sd: float | None = None  # the SD of the runs' trust scores; None for one run
    trust_failed_best: float | None = None  # the trust score with every judge failure scored 1; None: no failure
    trust_failed_worst: float | None = None  # ... scored as a wrong answer (TrustWeights.wrong); None: no failure
    n_dropped: int = 0  # invalid judgments left out of n (report.invalid: drop); counted in n_invalid too


def in_subset(judgment: Judgment, subset: str) -> bool:
    if subset == "overall":
        return True
    if subset == "refusal":
        return judgment.is_unanswerable
    if subset == "non_refusal":
        return not judgment.is_unanswerable
    return judgment.category == subset


def video_of(judgment: Judgment) -> str:
    """The bootstrap's unit: the item's video, or the item itself where the judgment has no video_id."""
    return judgment.video_id if judgment.video_id is not None else f"item:{judgment.instance_id}"


def correct(judgment: Judgment) -> bool:
    return judgment.judgement == 1 and judgment.valid


def judge_failed(judgment: Judgment) -> bool:
    """The model answered in full but the judge gave no verdict: a hybrid judge unsure with no LLM judge to ask
    (`decided_by: none`), an LLM judge's failed request or unreadable reply. Not a truncated reply, nor a
    missing response (the model's own failure to answer)."""
    return not judgment.valid and not judgment.truncated and judgment.error is None and judgment.response is not None


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 4)


@dataclass
class _Items:
    """The judgments gathered into items (judge, model, prompt, level, instance), each with its runs (a sampled model's
    `sample`s; one run otherwise), in the order of each item's first judgment: per item its video and subsets, the mean
    over its runs of correctness and of the trust score (nan where no run was scored), and its counts over the runs."""

    first: list[Judgment]  # each item's first judgment: its video, category, subset
    right: np.ndarray  # mean correctness over the runs not dropped; nan: every run dropped (Scoring.drops)
    values: np.ndarray  # mean trust score over the scored runs; nan: none scored
    counts: dict[str, np.ndarray]  # judgments over the runs: correct, invalid, wrong_refusal, truncated, failed, dropped
    runs: np.ndarray  # (items, runs) correctness of each run; nan where the item lacks it or it was dropped
    run_values: np.ndarray  # (items, runs) trust score of each run; nan where not scored (or dropped)
    samples: np.ndarray  # runs per item
    #: (items, runs) the runs the judge-failure bounds are over: every run but a dropped one with no response (under
    #: `wrong`, every run there is)
    bounded: np.ndarray


def _present(value: object) -> bool:
    return value is not None


def _is_one(value: object) -> bool:
    return value == 1


#: What an item's correctness and trust score are read from (`correct`, `TrustWeights.value`, `judge_failed`), and
#: how: _gather scores each distinct combination once, through those functions, and gives every judgment its
#: combination's result. A scoring rule that reads another field must be added here (tests/test_metrics.py checks
#: _gather against the functions judgment by judgment).
OUTCOME_FIELDS = (
    ("valid", bool),
    ("truncated", bool),
    ("error", _present),
    ("response", _present),
    ("refusal", _is_one),
    ("judgement", _is_one),
)


def _outcomes(judgments: Sequence[Judgment]) -> tuple[np.ndarray, list[Judgment]]:
    """Each judgment's outcome code (a bit for each of OUTCOME_FIELDS' tests) and one judgment of each code, the
    code's index: at most 64 to score instead of one call per judgment."""
    flags = np.zeros(len(judgments), dtype=np.int64)
    for bit, (name, test) in enumerate(OUTCOME_FIELDS):
        flags |= np.fromiter(map(test, map(attrgetter(name), judgments)), dtype=np.int64) << bit
    _, first, code_of = np.unique(flags, return_index=True, return_inverse=True)
    return code_of, [judgments[at] for at in first]


def _gather(judgments: Sequence[Judgment], trust: TrustWeights, scoring: Scoring = DEFAULT_SCORING) -> _Items:
    """The judgments as items (_Items), with arrays rather than a loop per judgment (254,800 at paper scale)."""
    item, distinct = _numbered(list(map(attrgetter("judge", "model", "prompt", "level", "instance_id"), judgments)))
    n_items = len(distinct)
    first_at = np.unique(item, return_index=True)[1]  # each item's first judgment (items are numbered in that order)
    samples = np.bincount(item)  # every item has a judgment: one count per item
    sample = [0 if value is None else value for value in map(attrgetter("sample"), judgments)]
    slots, column = np.unique(np.array(sample), return_inverse=True)  # run k's column
    width = max(int(samples.max()) if n_items else 1, len(slots))
    code, representative = _outcomes(judgments)
    scored = [trust.value(judgment) for judgment in representative]
    right_of = np.array([float(correct(judgment)) for judgment in representative])
    value_of = np.array(scored, dtype=float)  # None (a judge failure): nan
    dropped_of = np.array([scoring.drops(judgment) for judgment in representative], dtype=bool)
    right = np.full((n_items, width), np.nan)
    values = np.full((n_items, width), np.nan)
    bounded = np.zeros((n_items, width), dtype=bool)
    # a run recorded twice for an item keeps its last judgment, as a loop over them would
    cell = item * width + column
    last = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]
    right.flat[cell[last]] = np.where(dropped_of, np.nan, right_of)[code[last]]
    values.flat[cell[last]] = np.where(dropped_of, np.nan, value_of)[code[last]]
    bounded.flat[cell[last]] = (~dropped_of | np.isnan(value_of))[code[last]]  # a dropped judge failure stays bounded
    wrong_refusal = [j.valid and j.refusal == 1 and j.judgement != 1 for j in representative]
    per_code = {
        "correct": right_of,
        "invalid": np.array([not j.valid for j in representative]),
        "wrong_refusal": np.array(wrong_refusal),
        "truncated": np.array([bool(j.truncated) for j in representative]),
        "failed": np.isnan(value_of),
        "dropped": dropped_of,
    }
    counts = {name: np.bincount(item, weights=of_code[code]).astype(np.int64) for name, of_code in per_code.items()}
    if width == 1:  # every item run once: the values as they are (no mean to take)
        mean_right, mean_values = right[:, 0], values[:, 0]
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            n_kept = samples - counts["dropped"]
            mean_right = np.where(n_kept > 0, np.nansum(right, axis=1) / np.maximum(n_kept, 1), np.nan)
            n_scored = np.sum(~np.isnan(values), axis=1)
            mean_values = np.where(n_scored > 0, np.nansum(values, axis=1) / np.maximum(n_scored, 1), np.nan)
    firsts = [judgments[at] for at in first_at.tolist()]
    return _Items(firsts, mean_right, mean_values, counts, right, values, samples, bounded)


def _run_spread(per_run: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """(SD with ddof 1, min, max) of the runs' numbers (fractions), in percent; None for fewer than two runs."""
    if len(per_run) < 2:
        return None, None, None
    return _percent(float(np.std(per_run, ddof=1))), _percent(float(per_run.min())), _percent(float(per_run.max()))


def _runs(matrix: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Each run's mean over the chosen items (a run no chosen item has is left out)."""
    taken = matrix[chosen]
    present = ~np.isnan(taken)
    columns = present.any(axis=0)
    return np.nansum(taken[:, columns], axis=0) / np.maximum(present[:, columns].sum(axis=0), 1)


def _failure_bounds(gathered: _Items, trust: TrustWeights) -> tuple[np.ndarray, np.ndarray]:
    """Each item's trust score with its judge failures scored best (1, a right answer) and worst (a wrong answer,
    `trust.wrong`) instead of left out: the mean over all its runs, as the trust score's per-item mean is over the
    scored ones. The bound on what the failures left out could change (module docstring)."""
    runs = np.sum(gathered.bounded, axis=1)  # the runs each item has (none: every run dropped, no response)
    with np.errstate(invalid="ignore"):  # 0/0 for an item with none, which no row reads
        share_failed = np.sum(gathered.bounded & np.isnan(gathered.run_values), axis=1) / runs
        scored = np.nansum(gathered.run_values, axis=1) / runs  # the scored runs' sum over all the item's runs
    return scored + share_failed, scored + share_failed * trust.wrong


def _numbered(keys: list[Hashable]) -> tuple[np.ndarray, list[Hashable]]:
    """Each key's number, the keys numbered in the order they first come; and the distinct keys in that order."""
    distinct = list(dict.fromkeys(keys))
    number = dict(zip(distinct, range(len(distinct))))
    return np.fromiter(map(number.__getitem__, keys), dtype=np.int64), distinct


def _members(codes: np.ndarray) -> list[np.ndarray]:
    """The positions holding each of the codes 0, 1, ... (each of which is there), in increasing order."""
    order = np.argsort(codes, kind="stable")
    return np.split(order, np.cumsum(np.bincount(codes))[:-1])


def _groups(items: Sequence[Judgment]) -> dict[tuple[str, str, str, str], np.ndarray]:
    """The items of each (judge, model, prompt, level) and of each (judge, model, prompt, ALL_LEVELS), in item order;
    the groups in the order of their first item, each level's before its `all` (the intra-video correlation sums
    over them in this order, so it sets the last digits)."""
    level_of, distinct = _numbered(list(map(attrgetter("judge", "model", "prompt", "level"), items)))
    levels = {(*key[:3], str(key[3])): code for code, key in enumerate(distinct)}
    arms: dict[tuple[str, str, str], int] = {}
    arm_of_level = np.array([arms.setdefault(key[:3], len(arms)) for key in levels], dtype=np.int64)
    of_level = _members(level_of)
    of_arm = _members(arm_of_level[level_of])
    groups: dict[tuple[str, str, str, str], np.ndarray] = {}
    for key, code in levels.items():
        groups[key] = of_level[code]
        arm = (*key[:3], ALL_LEVELS)
        if arm not in groups:
            groups[arm] = of_arm[arms[key[:3]]]
    return groups


def compute_scores(
    judgments: Iterable[Judgment],
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    trust: TrustWeights = DEFAULT_TRUST,
    scoring: Scoring = DEFAULT_SCORING,
) -> list[Score]:
    gathered = _gather(list(judgments), trust, scoring)
    items = gathered.first
    groups = _groups(items)
    # per item, once: its video, correctness, trust score (nan: left out) and subsets; a sampled model's item: the
    # means over its runs
    videos = np.empty(len(items), dtype=object)
    videos[:] = list(map(video_of, items))
    judge_of = np.array(list(map(attrgetter("judge"), items)))
    right, values = gathered.right, gathered.values
    unanswerable = np.fromiter(map(attrgetter("is_unanswerable"), items), dtype=bool)
    category = np.array(list(map(scoring.category, items)))
    member = {"overall": np.ones(len(items), dtype=bool), "refusal": unanswerable, "non_refusal": ~unanswerable}
    member |= {subset: category == subset for subset in SUBSETS if subset not in member}  # in_subset, for all at once
    counts = gathered.counts
    failed = np.isnan(values)
    kept = ~np.isnan(right)  # not dropped (report.invalid: drop): in n, the interval and the trust score
    in_bounds = gathered.bounded.any(axis=1)
    failed_best, failed_worst = _failure_bounds(gathered, trust)
    scores = []
    for judge in sorted(set(judge_of.tolist())):
        of_judge = {key: at for key, at in groups.items() if key[0] == judge}
        coded = np.full(len(items), -1, dtype=np.int64)
        chosen_items = np.flatnonzero(judge_of == judge)  # every item of the judge is in its level's group
        resampler = Resampler(videos[chosen_items].tolist(), bootstrap, (judge, "videos"))
        coded[chosen_items] = resampler.codes(videos[chosen_items].tolist())
        numbers: list[Number] = []
        rows: list[tuple[tuple[str, str, str, str], str, np.ndarray, np.ndarray, np.ndarray]] = []
        for group, at in of_judge.items():
            for subset in SUBSETS:
                members = at[member[subset][at]]
                chosen = members[kept[members]]
                if not len(chosen):  # no item (or every one dropped), no number
                    continue
                scored = chosen[~failed[chosen]]
                numbers.append(Number(coded[chosen], right[chosen], coded=True))
                numbers.append(Number(coded[scored], values[scored], bounds=(trust.wrong, 1.0), coded=True))
                rows.append((group, subset, members, chosen, scored))
        found = resampler.intervals(numbers)
        for (group, subset, members, chosen, scored), accuracy, trusted in zip(rows, found[::2], found[1::2]):
            _, model, prompt, level = group
            n_right = int(counts["correct"][members].sum())
            samples = int(gathered.samples[chosen].max())
            sd, low, high = _run_spread(_runs(gathered.runs, chosen)) if samples > 1 else (None, None, None)
            trust_sd = _run_spread(_runs(gathered.run_values, chosen))[0] if samples > 1 and len(scored) else None
            n_failed = int(counts["failed"][members].sum())
            bounded = members[in_bounds[members]]  # the judge-failure bounds' items: every one but a dropped no-response
            scores.append(
                Score(
                    model,
                    prompt,
                    level,
                    subset,
                    round(100 * n_right / len(chosen), 4) if samples == 1 else round(100 * float(right[chosen].mean()), 4),
                    n_right,
                    len(chosen),
                    int(counts["invalid"][members].sum()),
                    judge,
                    ci_low=_percent(accuracy.low),
                    ci_high=_percent(accuracy.high),
                    n_videos=int(np.count_nonzero(np.bincount(coded[chosen]))),
                    n_wrong_refusal=int(counts["wrong_refusal"][members].sum()),
                    trust=round(100 * float(sum(values[scored].tolist())) / len(scored), 4) if len(scored) else None,
                    trust_ci_low=_percent(trusted.low),
                    trust_ci_high=_percent(trusted.high),
                    ci_method=accuracy.method,
                    trust_ci_method=trusted.method,
                    n_truncated=int(counts["truncated"][members].sum()),
                    n_judge_failed=n_failed,
                    samples=samples,
                    accuracy_sd=sd,
                    accuracy_min=low,
                    accuracy_max=high,
                    trust_sd=trust_sd,
                    trust_failed_best=_percent(float(failed_best[bounded].mean())) if n_failed else None,
                    trust_failed_worst=_percent(float(failed_worst[bounded].mean())) if n_failed else None,
                    n_dropped=int(counts["dropped"][members].sum()),
                )
            )
    return sorted(scores, key=lambda s: (s.judge, s.model, s.prompt, level_order(s.level), SUBSETS.index(s.subset)))


def _listing(paths: Sequence[str | Path], shown: int = 3) -> str:
    names = [str(path) for path in paths[:shown]]
    return ", ".join(names) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


def require_judge(judgments: Sequence[Judgment], judge: str, paths: Sequence[str | Path]) -> None:
    """Raise RecordError unless `judgments` (read from `paths`) are the report judge's: no item at all would make
    tables of "-" only, and items recorded under another name would be left out of every table."""
    others = Counter(j.judge for j in judgments if j.judge != judge)
    if others:
        named = ", ".join(f"{name!r} ({count})" for name, count in sorted(others.items()))
        raise RecordError(
            f"judge {judge!r}: {sum(others.values())} of the {len(judgments)} judged items read from {len(paths)} judgment "
            f"file(s) ({_listing(paths)}) are recorded under another judge: {named}; judge them again "
            "(`snakemake --forcerun judge_responses`)"
        )
    if not judgments:
        raise RecordError(
            f"no judged items for judge {judge!r} in the {len(paths)} judgment file(s) read ({_listing(paths)}): "
            "the tables would hold no number"
        )


def level_order(level: str) -> tuple[bool, int]:
    """Frame levels in number order, then `all`."""
    return (level == ALL_LEVELS, int(level) if level != ALL_LEVELS else 0)


def write_scores(scores: list[Score], path: str | Path) -> None:
    write_csv(path, (asdict(score) for score in scores), [f.name for f in fields(Score)])


def _optional(text: str | None) -> float | None:
    return None if text in (None, "") else float(text)


def read_scores(path: str | Path) -> list[Score]:
    """scores.csv back into Score rows (files from before the intervals read with them empty)."""
    with Path(path).open(newline="") as handle:
        return [
            Score(
                row["model"],
                row["prompt"],
                row["level"],
                row["subset"],
                float(row["accuracy"]),
                int(row["n_correct"]),
                int(row["n"]),
                int(row["n_invalid"]),
                row["judge"],
                ci_low=_optional(row.get("ci_low")),
                ci_high=_optional(row.get("ci_high")),
                n_videos=int(row.get("n_videos") or 0),
                n_wrong_refusal=int(row.get("n_wrong_refusal") or 0),
                trust=_optional(row.get("trust")),
                trust_ci_low=_optional(row.get("trust_ci_low")),
                trust_ci_high=_optional(row.get("trust_ci_high")),
                ci_method=row.get("ci_method") or "",
                trust_ci_method=row.get("trust_ci_method") or "",
                n_truncated=int(row.get("n_truncated") or 0),
                n_judge_failed=int(row.get("n_judge_failed") or 0),
                samples=int(row.get("samples") or 1),
                accuracy_sd=_optional(row.get("accuracy_sd")),
                accuracy_min=_optional(row.get("accuracy_min")),
                accuracy_max=_optional(row.get("accuracy_max")),
                trust_sd=_optional(row.get("trust_sd")),
                trust_failed_best=_optional(row.get("trust_failed_best")),
                trust_failed_worst=_optional(row.get("trust_failed_worst")),
                n_dropped=int(row.get("n_dropped") or 0),
            )
            for row in csv.DictReader(handle)
        ]


INVALID_FIELDS = ("judge", "model", "prompt", "level", "instance_id", "reason", "error")


def write_invalid(judgments: Iterable[Judgment], path: str | Path) -> int:
    """List every judgment without a valid verdict, so each counted-as-wrong item can be traced."""
    return write_csv(path, ({name: getattr(j, name) for name in INVALID_FIELDS} for j in judgments if not j.valid), INVALID_FIELDS)


def add_trust_arguments(parser: argparse.ArgumentParser) -> None:
    """The trust score's settings (config `report.trust`), for every CLI that computes or shows it."""
    parser.add_argument("--trust-scheme", choices=TRUST_SCHEMES, required=True)
    parser.add_argument("--confidence-target", type=float, required=True, help="kalai: the confidence target t")
    parser.add_argument("--wrong-answer", type=float, required=True, help="refusal-credit: trust score of a wrong answer")
    parser.add_argument(
        "--unwarranted-refusal", type=float, required=True, help="refusal-credit: trust score of a refusal where an answer was expected"
    )


def trust_from_arguments(args: argparse.Namespace) -> TrustWeights:
    return TrustWeights(args.wrong_answer, args.unwarranted_refusal, args.trust_scheme, args.confidence_target)


def add_scoring_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """What counts in a number (config `report.invalid`, `report.categories`), for every CLI that computes or states it
    (not `required`: the defaults, `wrong` and none)."""
    parser.add_argument(
        "--invalid",
        choices=INVALID_OPTIONS,
        required=required,
        default=INVALID_OPTIONS[0],
        help="an item without a response or a verdict: counted wrong, or dropped",
    )
    parser.add_argument(
        "--categories",
        required=required,
        default="{}",
        help='task types scored in another category, as JSON ({} for none): {"temporal grounding": "reasoning"}',
    )


def scoring_from_arguments(args: argparse.Namespace) -> Scoring:
    """Scoring from add_scoring_arguments' options; ValueError names a bad value."""
    try:
        categories = json.loads(args.categories)
    except json.JSONDecodeError as error:
        raise ValueError(f"report.categories: --categories {args.categories!r} is not JSON ({error})") from None
    if not isinstance(categories, dict):  # its keys are strings (JSON's); Scoring checks its values
        raise ValueError(f"report.categories: --categories {args.categories!r} is not a mapping of task type to category")
    return Scoring.of(args.invalid, categories)


def unmapped_task_types(scoring: Scoring, judgments: Iterable[Judgment]) -> list[str]:
    """The task types report.categories maps that no judgment has (a misspelling changes no number: say so)."""
    present = {judgment.task_type for judgment in judgments}
    return [task_type for task_type, _ in scoring.categories if task_type not in present]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.metrics", description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--invalid-out", help="CSV listing every judgment without a valid verdict")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples per number")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed")
    parser.add_argument(
        "--resample-cache", help="a folder keeping the bootstrap's drawn weights for the other report jobs (changes no digit)"
    )
    parser.add_argument("--judge", help="the report judge: refuse judgments of any other, and an empty selection")
    add_trust_arguments(parser)
    add_scoring_arguments(parser)
    add_chain_argument(parser)
    args = parser.parse_args(argv)
    try:
        bootstrap = Bootstrap(args.resamples, args.seed, args.resample_cache)
        trust = trust_from_arguments(args)
        scoring = scoring_from_arguments(args)
    except ValueError as error:
        parser.error(str(error))
    try:
        require_scipy()
        judgments = read_judgments(args.judgments, args.chain_root)
        if args.judge is not None:
            require_judge(judgments, args.judge, args.judgments)
    except (RecordError, MissingDependency) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    unmapped = unmapped_task_types(scoring, judgments)
    if unmapped:
        print(f"WARNING: report.categories maps task types no judged item has: {unmapped}; they change no number", file=sys.stderr)
    scores = compute_scores(judgments, bootstrap, trust, scoring)
    write_scores(scores, args.out)
    stamp(args.out)  # each row's judgments digest and its own (virtuebench.provenance)
    invalid = sum(not j.valid for j in judgments)
    no_video = sum(j.video_id is None for j in judgments)
    if no_video:
        print(
            f"WARNING: {no_video} judgments have no video_id (judged before it was recorded); their intervals resample "
            "items, which is too narrow where questions share a video: rerun the judge jobs (`snakemake --forcerun judge_responses`)",
            file=sys.stderr,
        )
    if args.invalid_out:
        write_invalid(judgments, args.invalid_out)
    print(f"scores: {len(scores)} rows from {len(judgments)} judgments ({invalid} invalid) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
