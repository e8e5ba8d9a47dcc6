"""What the real source adapters share: the release they download, MCQ -> open-ended conversion, and
a `Conversion` that probes and links each video and keeps the report of what had to be left out.

Every adapter module (`virtuebench.sources.<name>`) defines:

- `SOURCE`: the value of the `source` column (e.g. "video-mme");
- `RELEASE`: a `HubRelease` (hub repository, pinned revision, the files it needs, whether it is gated);
- `TASK_CATEGORIES`: the source's task type -> "perception" or "reasoning" (VirtueBench's two categories;
  the paper does not publish this mapping, so each adapter states its own);
- `prepare(raw_dir)`: turn the downloaded files into a readable layout (unpack split archives, unzip chunks);
  idempotent, and a no-op where the release needs nothing;
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

import bisect
import io
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
#: The columns of an excluded listing (results/instances_excluded.csv and each source's excluded.csv).
EXCLUDED_COLUMNS = ("item", "source", "reason_kind", "reason")


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

    def exclude(self, item: str, reason: str, *, kind: str) -> None:
        """Report `item` as left out: `reason` for people, `kind` (one of EXCLUSION_KINDS) for counting."""
        if kind not in EXCLUSION_KINDS:
            raise ValueError(f"{self.source}: exclusion kind {kind!r} is not one of {', '.join(EXCLUSION_KINDS)}")
        self.excluded.append(
            {"item": f"{self.source}:{item}" if self.qualify else item, "source": self.source, "reason_kind": kind, "reason": reason}
        )

    def too_short(self, video_file: str | Path, duration: float) -> str:
        """The report's reason for a video too short for every level."""
        return f"{video_file}: {duration:.1f} s is too short for any level {self.levels}"

    def read_json(self, item: str, path: Path, kind: str, expected: type, shape: str) -> Any | None:
        """One annotation file of a source with several: its content, or None (and a report row) when it
        cannot be read or is not a `expected` ("expected <shape>")."""
        try:
            value = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            self.exclude(item, f"{path}: unreadable {kind} ({error})", kind="bad_row")
            return None
        if not isinstance(value, expected):
            self.exclude(item, f"{path}: expected {shape}", kind="bad_row")
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
    ) -> bool:
        """Add one question; False (and a report row) when it had to be left out.

        The video id is `<source>_<video_key>` (`video_prefix` in place of the source where set);
        `video_key` defaults to the file's stem (a source whose file names repeat across folders passes
        a key that tells them apart). `item` names the question in the report (default: its id).
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


def part_order(part: Path) -> tuple[Any, ...]:
    """Sort key for split archive parts: the numbers in a name compared as numbers (`part_2` before `part_10`),
    letter suffixes (`.aa`, `.ab`) as text."""
    return tuple(int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", part.name))


class _Chain(io.RawIOBase):
    """The parts read one after another as one file, never joined on disk. Seekable, so that a zip (whose index
    is at its end) reads from it as well as a tar stream does."""

    def __init__(self, parts: Sequence[Path]) -> None:
        self.parts = list(parts)
        self.starts: list[int] = []
        total = 0
        for part in self.parts:
            self.starts.append(total)
            total += part.stat().st_size
        self.total, self.position = total, 0
        self.index: int | None = None
        self.handle: io.BufferedReader | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.total}[whence]
        if base + offset < 0:
            raise OSError(f"seek to {base + offset}, before the start of {self.parts[0].name}")  # as a file would
        self.position = base + offset
        return self.position

    def readinto(self, buffer: Any) -> int:
        if self.position >= self.total:
            return 0
        index = bisect.bisect_right(self.starts, self.position) - 1  # an empty part shares its start with the next
        if index != self.index:
            if self.handle is not None:
                self.handle.close()
            self.index, self.handle = index, open(self.parts[index], "rb")  # noqa: SIM115 - closed on the next part or close()
        assert self.handle is not None
        self.handle.seek(self.position - self.starts[index])
        count = self.handle.readinto(buffer)
        if not count:
            raise ValueError(f"{self.parts[index]} became shorter while it was read")
        self.position += count
        return count

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        super().close()


def readable_bytes(count: float) -> str:
    """'512 B', '97.8 kB', '167.6 GB': decimal units, as the hub lists sizes."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def check_free_space(folder: Path, needed: int, what: str) -> None:
    """Stop, naming the bytes needed and free, where `folder`'s file system (its nearest existing folder's, for
    one not made yet) has less than `needed` bytes free."""
    import shutil

    folder = Path(folder)
    probe = folder if folder.exists() else next(p for p in folder.parents if p.exists())
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise ValueError(
            f"{what} needs {readable_bytes(needed)} ({needed:,} bytes) free in {folder}, but only {readable_bytes(free)} "
            f"({free:,} bytes) are: free space or point the source's raw folder elsewhere (curation.raw_dirs)"
        )


def _unzip(zipped: Any, dest: Path, label: str) -> None:
    """Every member of the open ZipFile `zipped` into `dest`; a member that would land outside it is refused."""
    import shutil

    root = dest.resolve()
    for member in zipped.infolist():
        target = (root / member.filename).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"{label}: member {member.filename!r} would be written outside {dest}")
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipped.open(member) as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 24)


def extract_parts(parts: Sequence[Path], dest: Path, name: str) -> Path:
    """Unpack an archive split into `parts` (`name` the whole archive's: a .zip, or a .tar / .tar.gz) into `dest`,
    reading the parts in order (by `part_order`) as one file: they are never joined, so the extra disk needed is
    the unpacked files only (about the archive's size), not the archive again. A tar streams through the
    unpacker (`cat parts | tar -xf -`); a zip reads its index at the end through the same chain. Once done a
    `.<name>.extracted` marker records it (the same marker as extract_archive, so an archive joined by hand
    counts too); members that would land outside `dest` are refused."""
    marker = dest / f".{name}.extracted"
    if marker.exists():
        return dest
    parts = sorted(parts, key=part_order)
    if not parts:
        raise ValueError(f"no archive parts to unpack into {dest}")
    dest.mkdir(parents=True, exist_ok=True)
    _unpack(parts, dest, f"{name} (parts {parts[0].name} ... {parts[-1].name})", name.endswith(".zip"))
    marker.write_text("")
    return dest


def _unpack(parts: Sequence[Path], dest: Path, label: str, is_zip: bool) -> None:
    """The archive that `parts` form, read in this order as one file, into `dest`: a zip, or a tar checked whole
    (_untar_whole); free space checked first. Errors name the archive by `label`."""
    import zipfile
    import zlib

    with _Chain(parts) as raw, io.BufferedReader(raw, 1 << 24) as stream:
        if is_zip:
            try:
                zipped = zipfile.ZipFile(stream)
            except (zipfile.BadZipFile, OSError) as error:
                raise ValueError(f"{label}: not a readable zip archive, or a part missing or cut short ({error})") from None
            with zipped:
                check_free_space(dest, sum(member.file_size for member in zipped.infolist()), f"unpacking {label}")
                try:  # each member's checksum is checked as it is read: a gap in the parts does not pass
                    _unzip(zipped, dest, label)
                except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as error:
                    raise ValueError(f"{label}: the archive is broken (a part missing, out of order or cut short?): {error}") from None
        else:
            check_free_space(dest, raw.total, f"unpacking {label}")
            _untar_whole(stream, dest, label)


def _untar_whole(stream: io.BufferedReader, dest: Path, label: str) -> None:
    """Unpack the tar (plain, gzip, bzip2 or xz) read from `stream` into `dest`, and make sure it was whole.

    tarfile alone does not: in stream mode it stops without a word at the first header it cannot read, and it
    never checks a gzip stream's end, so a part missing from the middle of the chain, or the last part of a
    .tar.gz, would unpack the members before the gap (the one across it corrupt) and pass. So the decompressor
    here is the standard library's file reader, which checks the compressed stream's end and checksum, and after
    the last member the rest of the tar must be its zero padding up to the end of the input."""
    import bz2
    import gzip
    import lzma
    import tarfile
    import zlib

    magic = stream.peek(6)[:6]
    body: Any = stream
    if magic[:2] == b"\x1f\x8b":
        body = gzip.GzipFile(fileobj=stream)
    elif magic[:3] == b"BZh":
        body = bz2.BZ2File(stream)
    elif magic == b"\xfd7zXZ\x00":
        body = lzma.LZMAFile(stream)
    broken = f"{label}: the archive is broken (a part missing, out of order or cut short?)"
    try:
        with tarfile.open(fileobj=body, mode="r|") as tarred:
            tarred.extractall(dest, filter="data")
        while chunk := body.read(1 << 20):
            if chunk.count(0) != len(chunk):
                raise ValueError(f"{broken}: data after the point where the tar stopped reading headers")
    except tarfile.FilterError as error:
        raise ValueError(f"{label}: unsafe member ({error})") from None
    except (tarfile.ReadError, EOFError, OSError, zlib.error, lzma.LZMAError) as error:
        raise ValueError(f"{broken}: {error}") from None


def extract_archive(archive: Path, dest: Path) -> Path:
    """Unpack a .zip or .tar(.gz, .bz2, .xz) into `dest` once (a `.<name>.extracted` marker records it): the one-part
    case of extract_parts, with the same checks (free space, a tar read whole, each zip member's checksum).

    Members that would land outside `dest` (absolute paths, `..`, links out) are refused.
    """
    import tarfile
    import zipfile

    marker = dest / f".{archive.name}.extracted"
    if marker.exists():
        return dest
    is_zip = zipfile.is_zipfile(archive)
    if not is_zip and not tarfile.is_tarfile(archive):
        raise ValueError(f"{archive}: neither a zip nor a tar archive")
    dest.mkdir(parents=True, exist_ok=True)
    _unpack([archive], dest, str(archive), is_zip)
    marker.write_text("")
    return dest
