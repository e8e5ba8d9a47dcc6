"""What the real source adapters share: the release they download, MCQ -> open-ended conversion, and
a `Conversion` that probes and links each video and keeps the report of what had to be left out.

Every adapter module (`virtuebench.sources.<name>`) defines:

- `SOURCE`: the value of the `source` column (e.g. "video-mme");
- `RELEASE`: a `HubRelease` (hub repository, pinned revision, the files it needs, whether it is gated);
- `TASK_CATEGORIES`: the source's task type -> "perception" or "reasoning" (VirtueBench's two categories;
  the paper does not publish this mapping, so each adapter states its own);
- `prepare(raw_dir)`: turn the downloaded files into a readable layout (unpack split archives, unzip chunks:
  virtuebench.sources.archives); idempotent, and a no-op where the release needs nothing;
- `convert(raw_dir, videos_dir, levels, *, sampling="1fps") -> (instances, excluded)`: the candidate instances, one per
  question, with the source's own question id (`source_id`) and task type, the open-ended question,
  the correct option as the answer (MCQ -> OE, as the paper does) and the options kept beside it;
  `sampling` decides which levels a video has (levels.sampled_levels): `1fps` (VirtueBench's grid: a video
  shorter than a level lacks it) or `clip` (every level over the whole video: the supplement's table).

Candidate instances carry the full-video answer at every available level: that is the ground truth
existing benchmarks use, and what the curation stages (filters, per-level reference answers) start
from; the per-level truth comes from annotation (virtuebench.curation).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.instances import UNCATEGORIZED, Instance
from virtuebench.levels import SAMPLINGS, sampled_levels
from virtuebench.support.video import VideoError, probe_duration

Excluded = list[dict[str, str]]  # rows of EXCLUDED_COLUMNS

#: Why an item was left out, as a machine-readable kind beside the human-readable reason (the `reason_kind`
#: column of the excluded listing, docs/records.md), so that counts never depend on the wording of a reason:
#: kind -> what it covers.
EXCLUSION_KINDS = {
    "missing_video": "the question's video file is not there (a YouTube video gone or never fetched, a file not in the release)",
    "unreadable_video": "the video file is there but cannot be decoded",
    "too_short": "the video is too short for every level",
    "bad_row": "the annotation row, line or file cannot be read as a question",
    "missing_annotation": "an annotation file the release should hold is absent",
    "duplicate_id": "a question id seen before",
    "unknown_task_type": "a task type the adapter cannot place in a category the table needs",
    "out_of_scope": "left out by design (generation tasks without a short answer, moment questions)",
}
MISSING_VIDEO = "missing_video"
#: What one row of the listing stands for (its `unit` column): one question, or every question of a group the source
#: could not read or leaves out whole. A listing written before the column counts every row as an item.
EXCLUSION_UNITS = {
    "item": "one question",
    "dimension": "a CVRR-ES dimension (its annotation file is missing or unreadable)",
    "annotation file": "an annotation file of the release, missing or unreadable (every question in it)",
    "task": "the questions of one task in one annotation file (MLVU's generation tasks)",
    "question list": "one video's list of questions of one kind (MovieChat-1K)",
    "option list": "a kept question's options, of which the empty ones were dropped (MLVU's '' candidates): no question is lost",
}
#: The columns of an excluded listing (results/instances_excluded.csv and each source's excluded.csv).
EXCLUDED_COLUMNS = ("item", "source", "reason_kind", "reason", "unit")


@dataclass(frozen=True)
class HubRelease:
    """A dataset repository on the Hugging Face hub, pinned.

    `revision` is a commit sha where it was confirmed, else a branch name (stated in the adapter).
    `allow_patterns` limits the download to what the adapter reads. `gated` repositories need the
    user to accept their terms on the hub and a token in the environment (HF_TOKEN).
    """

    repo_id: str
    revision: str
    allow_patterns: tuple[str, ...] = ()
    gated: bool = False

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}"


_OPTION_PREFIX = re.compile(r"^\s*(?:\(([A-Za-z])\)|([A-Za-z])[.:)]|\[([A-Za-z])\])\s*")
_EMBEDDED_OPTION = re.compile(r"^\s*\(([A-Z])\)\s*(.*?)\s*$")


def option_letter(index: int) -> str:
    return chr(ord("A") + index)


def strip_option_prefix(text: str) -> str:
    """'A. red' / '(A) red' / 'A) red' / '[A] red' -> 'red'."""
    return _OPTION_PREFIX.sub("", str(text), count=1).strip()


def split_embedded_options(question: str) -> tuple[str, list[str]]:
    """A question whose options follow it on their own lines ('...?\\n(A) x\\n(B) y') -> (stem, [x, y])."""
    stem_lines: list[str] = []
    options: list[str] = []
    for line in str(question).splitlines():
        match = _EMBEDDED_OPTION.match(line)
        if match and match.group(1) == option_letter(len(options)):
            options.append(match.group(2))
        elif options:  # a continuation line of the last option
            options[-1] = f"{options[-1]} {line.strip()}".strip()
        else:
            stem_lines.append(line)
    return "\n".join(stem_lines).strip(), options


def correct_option(options: Sequence[str], correct: str | int) -> str:
    """The text of the correct option, given its letter ('B'), its index (1) or its text."""
    if isinstance(correct, int) and not isinstance(correct, bool):
        if not 0 <= correct < len(options):
            raise ValueError(f"correct option index {correct} is outside the {len(options)} options")
        return options[correct]
    text = str(correct).strip()
    letter = text.strip("().").upper()
    if len(letter) == 1 and letter.isalpha():
        index = ord(letter) - ord("A")
        if not 0 <= index < len(options):
            raise ValueError(f"correct option {text!r} is outside the {len(options)} options")
        return options[index]
    if text in options:
        return text
    raise ValueError(f"correct answer {text!r} is neither an option letter nor one of the options")


def video_id_for(source: str, stem: str) -> str:
    """A wildcard-safe, source-unique video id."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{source}_{stem}")


class Conversion:
    """Collects one source's candidate instances; a bad row or a missing/unreadable video is reported.

    Each distinct video file is probed once and symlinked into `videos_dir` as `<video_id><suffix>`.
    A source that is a benchmark of its own (CVRR-ES) keeps its published ids: it subclasses with
    `qualify = False` (instance ids and report items as given, no separate source_id), its own
    `video_prefix` and, where it words it otherwise, `too_short`.
    """

    #: Instance ids are `<source>/<id>`, report items `<source>:<item>`, and source_id holds the id.
    qualify = True
    #: Video ids are `<video_prefix>_<key>`; None: the source's name.
    video_prefix: str | None = None
    #: How levels sample the video (levels.SAMPLINGS): which levels a video has follows from it.
    sampling = "1fps"

    def __init__(
        self,
        source: str,
        videos_dir: str | Path,
        levels: Iterable[int],
        task_categories: dict[str, str],
        *,
        sampling: str | None = None,
        keep_unknown_task_types: bool = False,
    ):
        """`keep_unknown_task_types`: a task type the adapter does not know is kept, category UNCATEGORIZED, with one
        warning naming it (for a source whose table does not use the category); otherwise its questions are left out,
        each named in the report."""
        if sampling is not None:
            if sampling not in SAMPLINGS:
                raise ValueError(f"{source}: sampling {sampling!r} is not one of {', '.join(SAMPLINGS)}")
            self.sampling = sampling  # this run's, in place of the class's
        self.source = source
        self.videos_dir = Path(videos_dir)
        self.levels = list(levels)
        self.task_categories = task_categories
        self.instances: list[Instance] = []
        self.excluded: Excluded = []
        self._videos: dict[tuple[Path, str], tuple[str, float, Path] | tuple[str, str]] = {}  # or (kind, reason)
        self._ids: set[str] = set()
        self._spellings: dict[str, str | None] = {}  # a task type as the release spells it -> the known one
        self.keep_unknown_task_types = keep_unknown_task_types
        self.videos_dir.mkdir(parents=True, exist_ok=True)

    def category_of(self, task_type: str) -> str | None:
        """The category of `task_type`, read past release drift in spelling (case, spaces, '_' or '-': "local_perception"
        is "Local Perception"): a new spelling is named once on stderr and kept. A type the adapter does not know at
        all gives UNCATEGORIZED, named once on stderr, where `keep_unknown_task_types`; else None."""
        if task_type in self.task_categories:
            return self.task_categories[task_type]
        if task_type not in self._spellings:

            def plain(text: str) -> str:
                return " ".join(re.split(r"[^0-9a-z]+", text.lower())).strip()

            known = next((name for name in self.task_categories if plain(name) == plain(task_type)), None)
            self._spellings[task_type] = known
            if known is not None:
                print(
                    f"virtuebench WARNING: {self.source}: task type {task_type!r} is read as {known!r} (the release spells it "
                    "differently from the adapter's table)",
                    file=sys.stderr,
                )
            elif self.keep_unknown_task_types:
                print(
                    f"virtuebench WARNING: {self.source}: task type {task_type!r} is new (known: {sorted(self.task_categories)}); "
                    f"its questions are kept with category {UNCATEGORIZED!r}, in neither category's numbers",
                    file=sys.stderr,
                )
        known = self._spellings[task_type]
        if known is None:
            return UNCATEGORIZED if self.keep_unknown_task_types else None
        return self.task_categories[known]

    def exclude(self, item: str, reason: str, *, kind: str, unit: str = "item") -> None:
        """Report `item` as left out: `reason` for people, `kind` (one of EXCLUSION_KINDS) for counting, `unit` (one of
        EXCLUSION_UNITS) for what the row stands for: one question, or a group of them."""
        if kind not in EXCLUSION_KINDS:
            raise ValueError(f"{self.source}: exclusion kind {kind!r} is not one of {', '.join(EXCLUSION_KINDS)}")
        if unit not in EXCLUSION_UNITS:
            raise ValueError(f"{self.source}: exclusion unit {unit!r} is not one of {', '.join(EXCLUSION_UNITS)}")
        item = f"{self.source}:{item}" if self.qualify else item
        self.excluded.append({"item": item, "source": self.source, "reason_kind": kind, "reason": reason, "unit": unit})

    def too_short(self, video_file: str | Path, duration: float) -> str:
        """The report's reason for a video too short for every level."""
        return f"{video_file}: {duration:.1f} s is too short for any level {self.levels}"

    def read_json(self, item: str, path: Path, kind: str, expected: type, shape: str) -> Any | None:
        """One annotation file of a source with several: its content, or None (and a report row) when it
        cannot be read or is not a `expected` ("expected <shape>")."""
        try:
            value = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            self.exclude(item, f"{path}: unreadable {kind} ({error})", kind="bad_row", unit="annotation file")
            return None
        if not isinstance(value, expected):
            self.exclude(item, f"{path}: expected {shape}", kind="bad_row", unit="annotation file")
            return None
        return value

    def _video(self, path: Path, key: str) -> tuple[str, float, Path] | tuple[str, str]:
        """(video id, duration, linked path), or (exclusion kind, reason) where the video cannot be used."""
        if (path, key) not in self._videos:
            if not path.exists():
                self._videos[path, key] = (MISSING_VIDEO, f"{path}: video file not found")
            else:
                try:
                    duration = probe_duration(path)
                except Exception as error:  # a VideoError says what is wrong; anything else PyAV raised, its type too
                    problem = error.problem if isinstance(error, VideoError) else f"{type(error).__name__}: {error}"
                    self._videos[path, key] = ("unreadable_video", f"{path}: unreadable video ({problem})")
                else:
                    video_id = video_id_for(self.video_prefix or self.source, key)
                    linked = self.videos_dir / f"{video_id}{path.suffix}"
                    if linked.is_symlink() and Path(os.readlink(linked)) != path.resolve():
                        linked.unlink()
                    if not linked.exists() and not linked.is_symlink():
                        os.symlink(path.resolve(), linked)
                    self._videos[path, key] = (video_id, duration, linked)
        return self._videos[path, key]

    def add(
        self,
        source_id: str,
        video_file: str | Path,
        task_type: str,
        question: str,
        answer: str,
        options: Sequence[str] = (),
        evidence: Sequence[Sequence[float]] = (),
        video_key: str | None = None,
        item: str | None = None,
        stated_duration_s: float | None = None,
    ) -> bool:
        """Add one question; False (and a report row) when it had to be left out.

        The video id is `<source>_<video_key>` (`video_prefix` in place of the source where set);
        `video_key` defaults to the file's stem (a source whose file names repeat across folders passes
        a key that tells them apart). `item` names the question in the report (default: its id).
        `stated_duration_s`: the length the release states, used in place of the probed one (no longer than it:
        frames exist only up to the file's end).
        """
        source_id = str(source_id)
        item = source_id if item is None else item
        if source_id in self._ids:
            self.exclude(item, "duplicate question id", kind="duplicate_id")
            return False
        category = self.category_of(task_type)
        if category is None:
            self.exclude(item, f"task type {task_type!r} has no category (known: {sorted(self.task_categories)})", kind="unknown_task_type")
            return False
        if not str(question).strip() or not str(answer).strip():
            self.exclude(item, "bad row: empty question or answer", kind="bad_row")
            return False
        video = self._video(Path(video_file), video_key or Path(video_file).stem)
        if len(video) == 2:
            kind, reason = video
            self.exclude(item, reason, kind=kind)
            return False
        video_id, duration, linked = video
        if stated_duration_s is not None:
            duration = min(float(stated_duration_s), duration)
        levels = sampled_levels(duration, self.levels, self.sampling)
        if not levels:
            self.exclude(item, self.too_short(video_file, duration), kind="too_short")
            return False
        self._ids.add(source_id)
        answer = str(answer).strip()
        self.instances.append(
            Instance(
                instance_id=f"{self.source}/{source_id}" if self.qualify else source_id,
                video_id=video_id,
                source=self.source,
                category=category,
                task_type=task_type,
                question=str(question).strip(),
                answer=answer,
                duration_s=duration,
                video_path=str(linked),
                answers=dict.fromkeys(levels, answer),
                evidence=[[float(start), float(end)] for start, end in evidence],
                options=[str(option).strip() for option in options],
                source_id=source_id if self.qualify else "",
            )
        )
        return True

    def result(self) -> tuple[list[Instance], Excluded]:
        return self.instances, self.excluded


def read_parquet_rows(raw_dir: Path, pattern: str, columns: Sequence[str], source: str, repo_id: str) -> list[dict[str, Any]]:
    """Every row of the release's parquet question tables (`raw_dir`/`pattern`), naming the file on a
    missing table, an unreadable file or a missing column."""
    import polars as pl

    files = sorted(raw_dir.glob(pattern))
    if not files:
        raise ValueError(f"{source}: no question table {raw_dir / pattern} (download {repo_id})")
    rows: list[dict[str, Any]] = []
    for path in files:
        try:
            frame = pl.read_parquet(path)
        except Exception as error:  # polars raises several unrelated types for a bad file
            raise ValueError(f"{path}: not a readable parquet file ({error})") from None
        missing = [name for name in columns if name not in frame.columns]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected at least {list(columns)}")
        rows.extend(frame.iter_rows(named=True))
    return rows
