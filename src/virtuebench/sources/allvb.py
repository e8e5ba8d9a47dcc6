"""ALLVB source adapter: the hub release (ALLVB/ALLVB) into candidate instances. THE ANNOTATION FORMAT
IS UNCONFIRMED: every marker of the layout read is a constant in the "Layout" block below (change it
there if the release differs). What was seen, and what could not be: docs/sources.md#allvb.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from virtuebench.instances import Instance
from virtuebench.sources.archives import extract_archive, extract_parts
from virtuebench.sources.base import Conversion, Excluded, HubRelease, correct_option

SOURCE = "allvb"

#: Revision "main": no commit sha of the release could be confirmed from stored sources. No allow_patterns:
#: with the layout unconfirmed the whole repository is fetched. Whether it is gated is unknown (the
#: downloader reports a gated repository from the hub's answer either way).
RELEASE = HubRelease(repo_id="ALLVB/ALLVB", revision="main", allow_patterns=(), gated=False)

# ---- Layout (unconfirmed: every assumption about the release's files is here) ----------------------
#: Folder of the test movies, one sub-folder per movie.
MOVIES_DIR = "test_set_movie"
#: The question file of a movie: `<Movie>.txt` beside `<Movie>.<video suffix>`.
ANNOTATION_SUFFIX = ".txt"
VIDEO_SUFFIXES = (".mp4", ".mkv", ".avi", ".webm", ".mov")
#: "Question 12: Action Recognition" -> number 12, task type "Action Recognition".
QUESTION_FIELD = "'Question <n>: <task type>' header"
QUESTION_HEADER = re.compile(r"^Question\s*(?P<number>\d*)\s*:\s*(?P<task>.*?)\s*$", re.IGNORECASE)
#: "- B. Yellow" -> option B, "Yellow".
OPTIONS_FIELD = "'- A. <option>' lines"
OPTION_LINE = re.compile(r"^-\s*\(?(?P<letter>[A-Z])[.:)]\s*(?P<text>.*?)\s*$")
#: "Answer: B" -> the correct option's letter (the option's text is accepted too).
ANSWER_FIELD = "'Answer: <letter>' line"
ANSWER_LINE = re.compile(r"^Answer\s*:\s*(?P<answer>.*?)\s*$", re.IGNORECASE)
#: Archives the release might ship: split parts (`x.tar.part.aa`, `x.zip.001`) and whole archives.
ARCHIVE_PART = re.compile(r"^(?P<archive>.+\.(?:zip|tar|tar\.gz|tgz))\.(?:part\.?)?(?:[a-z]{2}|\d{2,3})$")
ARCHIVE = re.compile(r"^.+\.(?:zip|tar|tar\.gz|tgz)$")

#: The paper does not publish its mapping. Principle: recognizing, reading or counting what is visible
#: is perception; causal, temporal, plot or relational inference is reasoning. Task names unconfirmed
#: (see docs/sources.md#allvb); any other task type is reported, never guessed.
TASK_CATEGORIES = {
    "Video Classification": "perception",  # what kind of film this is, from what is shown
    "Scene Recognition": "perception",
    "Object Detection and Tracking": "perception",
    "Action Recognition": "perception",
    "Temporal Action Localization": "reasoning",  # when, relative to the plot: temporal inference
    "Event Detection": "perception",
    "Video Captioning": "perception",  # describing what is shown
    "Video Emotion Recognition": "perception",  # read from faces and behaviour on screen
    "Needle-in-a-Haystack": "perception",  # spotting one shown detail
}


def _loose(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


_TASK_NAMES = {_loose(name): name for name in TASK_CATEGORIES}


def task_type(raw: str) -> str:
    """The canonical task name for a header's task type; an unknown one is returned as written."""
    return _TASK_NAMES.get(_loose(raw), raw.strip())


def prepare(raw_dir: str | Path) -> Path:
    """Unpack every archive in the release, each once, beside itself; a no-op without any. Split parts are read
    in part order as one archive (extract_parts: never joined on disk, so the extra disk is the unpacked files,
    about 1x the parts); whole archives are unpacked as they are."""
    raw_dir = Path(raw_dir)
    groups: dict[Path, list[Path]] = {}
    for part in sorted(raw_dir.rglob("*")):
        if part.is_file() and (match := ARCHIVE_PART.match(part.name)):
            groups.setdefault(part.with_name(match["archive"]), []).append(part)
    for archive, parts in sorted(groups.items()):
        extract_parts(parts, archive.parent, archive.name)
    for archive in sorted(path for path in raw_dir.rglob("*") if path.is_file() and ARCHIVE.match(path.name)):
        extract_archive(archive, archive.parent)  # a no-op for one its parts unpacked already (the same marker)
    return raw_dir


@dataclass
class _Block:
    number: str
    task: str
    question: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _parse(path: Path) -> list[tuple[_Block, str | None]]:
    """The file's question blocks with their answers (None where a block has no answer line)."""
    blocks: list[tuple[_Block, str | None]] = []
    current: _Block | None = None
    last_option: str | None = None
    for raw_line in path.read_text(encoding="utf-8-sig").splitlines():
        line = raw_line.strip()
        if not line:
            continue
        if header := QUESTION_HEADER.match(line):
            if current is not None:
                blocks.append((current, None))
            current = _Block(header["number"], header["task"])
            last_option = None
        elif current is None:
            continue  # a preamble before the first question
        elif option := OPTION_LINE.match(line):
            expected = chr(ord("A") + len(current.options))
            if option["letter"] != expected:
                current.problems.append(f"option {option['letter']} where {expected} was expected")
            current.options[option["letter"]] = option["text"]
            last_option = option["letter"]
        elif answer := ANSWER_LINE.match(line):
            blocks.append((current, answer["answer"]))
            current, last_option = None, None
        elif last_option is not None:  # an option's text wrapped onto the next line
            current.options[last_option] = f"{current.options[last_option]} {line}".strip()
        else:
            current.question.append(line)
    if current is not None:
        blocks.append((current, None))
    return blocks


def _correct_text(options: list[str], answer: str) -> str:
    """The correct option's text from 'B', '(B)', 'B. Yellow' or 'Yellow'."""
    prefixed = re.match(r"^\(?([A-Z])[.:)]\s+(.+)$", answer)
    if prefixed and ord(prefixed[1]) - ord("A") < len(options):
        return options[ord(prefixed[1]) - ord("A")]
    return correct_option(options, answer)


def _annotation_files(raw_dir: Path) -> list[Path]:
    """Every .txt under the movies folder (under raw_dir where there is none) that sits beside its
    movie's video or holds a question header."""
    root = raw_dir / MOVIES_DIR if (raw_dir / MOVIES_DIR).is_dir() else raw_dir
    found = []
    for path in sorted(root.rglob(f"*{ANNOTATION_SUFFIX}")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        beside_video = any(path.with_suffix(suffix).exists() for suffix in VIDEO_SUFFIXES)
        if beside_video or _has_header(path):
            found.append(path)
    return found


def _has_header(path: Path) -> bool:
    try:
        return any(QUESTION_HEADER.match(line.strip()) for line in path.read_text(encoding="utf-8-sig").splitlines())
    except (OSError, UnicodeDecodeError):
        return False


def _video_file(annotation: Path) -> Path:
    for suffix in VIDEO_SUFFIXES:
        if (candidate := annotation.with_suffix(suffix)).exists():
            return candidate
    return annotation.with_suffix(VIDEO_SUFFIXES[0])


def _check_layout(path: Path, blocks: list[tuple[_Block, str | None]]) -> None:
    """A file with no block, or no answer line at all, is not in the layout this adapter reads."""
    if not blocks:
        raise ValueError(
            f"{SOURCE}: {path} has no {QUESTION_FIELD}; the ALLVB annotation layout differs from "
            f"the one this adapter reads (unconfirmed, see virtuebench.sources.allvb)"
        )
    if all(answer is None for _, answer in blocks):
        raise ValueError(
            f"{SOURCE}: {path} has no {ANSWER_FIELD} in any of its {len(blocks)} question(s); the "
            f"ALLVB annotation layout differs from the one this adapter reads"
        )
    if all(not block.options for block, _ in blocks):
        raise ValueError(
            f"{SOURCE}: {path} has no {OPTIONS_FIELD} in any of its {len(blocks)} question(s); the "
            f"ALLVB annotation layout differs from the one this adapter reads"
        )


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int], *, sampling: str = "1fps"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances, one per question block, and the report of what was left out."""
    raw_dir = Path(raw_dir)
    files = _annotation_files(raw_dir)
    if not files:
        raise ValueError(
            f"{SOURCE}: no question files under {raw_dir} (expected "
            f"{MOVIES_DIR}/<Movie>/<Movie>{ANNOTATION_SUFFIX} beside <Movie>.mp4; run prepare first "
            f"if the release is still archived)"
        )
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for path in files:
        try:
            blocks = _parse(path)
        except (OSError, UnicodeDecodeError) as error:
            conversion.exclude(path.stem, f"{path}: unreadable question file ({error})", kind="bad_row", unit="annotation file")
            continue
        _check_layout(path, blocks)
        video = _video_file(path)
        for position, (block, answer) in enumerate(blocks, start=1):
            source_id = f"{path.stem}/{block.number or position}"
            options = list(block.options.values())
            question = " ".join(block.question)
            if answer is None:
                conversion.exclude(source_id, f"bad row in {path}: no {ANSWER_FIELD}", kind="bad_row")
                continue
            if block.problems or len(options) < 2 or not question:
                problems = block.problems or [f"{len(options)} option(s)" if len(options) < 2 else "no question text"]
                conversion.exclude(source_id, f"bad row in {path}: {'; '.join(problems)}", kind="bad_row")
                continue
            try:
                correct = _correct_text(options, answer)
            except ValueError as error:
                conversion.exclude(source_id, f"bad row in {path}: {error}", kind="bad_row")
                continue
            conversion.add(source_id, video, task_type(block.task), question, correct, options=options)
    return conversion.result()
