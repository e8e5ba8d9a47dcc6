"""The demo benchmark: small real H.264 videos whose every frame can be read back, with questions
whose per-level answerability follows from known evidence intervals.

Each frame carries, in a strip of 16 black/white blocks at the top, the number of the second it
belongs to (12 bits) and a 4-bit check, so a test can read which second any extracted JPEG shows.
Below the strip, a coloured border frames a dark stage with three slots where coloured shapes
appear for whole seconds. Questions ask about those shapes (perception: which colour, which shape;
reasoning: counting, order, before/after), and each carries the seconds that hold its evidence.
Events are placed on purpose so that some questions are answerable at every level, some at none,
and some only from a higher level on (the paper's three situations); the per-level ground truth is
then derived from the evidence with the rule in virtuebench.levels, never from the placement intent.
"""

from __future__ import annotations

import math
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from virtuebench.instances import Instance
from virtuebench.levels import LEVELS, answers_by_level, available_levels, grid_size, level_indices
from virtuebench.support.settings import settings_from_dict

# ---------------------------------------------------------------------------------------------
# The second code


CODE_BLOCKS = 16
SECOND_BITS = 12
MAX_SECOND = 2**SECOND_BITS - 1


def _check_nibble(second: int) -> int:
    # Non-zero for second 0, so an all-black strip never reads as a valid code.
    return ((second & 0xF) + ((second >> 4) & 0xF) + ((second >> 8) & 0xF) + 5) & 0xF


def code_bits(second: int) -> list[int]:
    if not 0 <= second <= MAX_SECOND:
        raise ValueError(f"second {second} does not fit the {SECOND_BITS}-bit code")
    word = (second << 4) | _check_nibble(second)
    return [(word >> (CODE_BLOCKS - 1 - i)) & 1 for i in range(CODE_BLOCKS)]


def code_strip_height(height: int) -> int:
    return max(4, height // 9)


def draw_second_code(image: np.ndarray, second: int) -> None:
    height, width = image.shape[:2]
    strip = code_strip_height(height)
    block = width // CODE_BLOCKS
    for i, bit in enumerate(code_bits(second)):
        image[:strip, i * block : (i + 1) * block] = 255 if bit else 0


def read_second_code(image: np.ndarray | Image.Image) -> int | None:
    """The second a frame belongs to, or None when the strip does not hold a valid code.

    Robust to JPEG artefacts and to any resize that keeps the aspect ratio: each block is read
    from the mean of its central half.
    """
    pixels = np.asarray(image.convert("L") if isinstance(image, Image.Image) else image)
    height, width = pixels.shape[:2]
    strip = code_strip_height(height)
    pixels = pixels[:strip].astype(np.float32)  # only the strip: this runs on every frame the oracle reads
    if pixels.ndim == 3:
        pixels = pixels.mean(axis=2)
    block = width / CODE_BLOCKS
    bits = []
    for i in range(CODE_BLOCKS):
        x0, x1 = int(i * block + block / 4), int((i + 1) * block - block / 4)
        y0, y1 = strip // 4, max(strip // 4 + 1, 3 * strip // 4)
        bits.append(1 if pixels[y0:y1, x0:x1].mean() > 127 else 0)
    word = 0
    for bit in bits:
        word = (word << 1) | bit
    second, check = word >> 4, word & 0xF
    return second if check == _check_nibble(second) else None


# ---------------------------------------------------------------------------------------------
# The visual world

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 90, 230),
    "yellow": (235, 215, 40),
    "magenta": (215, 60, 200),
    "cyan": (40, 205, 215),
    "white": (240, 240, 240),
    "orange": (245, 135, 30),
    "purple": (125, 60, 175),
    "brown": (135, 85, 45),
    "pink": (250, 160, 190),
    "grey": (150, 150, 150),
}
SHAPES = ("circle", "square", "triangle", "diamond", "hexagon", "star", "cross")
STAGE = (28, 28, 28)
N_SLOTS = 3
SHORT_SLOT = 2  # one-second events; slots 0 and 1 hold long ones


@dataclass(frozen=True)
class Event:
    shape: str
    colour: str
    start_s: int  # visible during the whole seconds start_s .. end_s - 1
    end_s: int
    slot: int

    @property
    def interval(self) -> list[float]:
        return [float(self.start_s), float(self.end_s)]

    @property
    def name(self) -> str:
        return f"{self.colour} {self.shape}"


def _polygon(shape: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    def ring(n: int, radius: float, phase: float) -> list[tuple[float, float]]:
        return [
            (cx + radius * math.cos(phase + 2 * math.pi * k / n), cy + radius * math.sin(phase + 2 * math.pi * k / n)) for k in range(n)
        ]

    if shape == "triangle":
        return ring(3, r, -math.pi / 2)
    if shape == "diamond":
        return ring(4, r, -math.pi / 2)
    if shape == "hexagon":
        return ring(6, r, 0)
    if shape == "star":
        outer, inner = ring(5, r, -math.pi / 2), ring(5, r * 0.45, -math.pi / 2 + math.pi / 5)
        return [point for pair in zip(outer, inner) for point in pair]
    if shape == "cross":
        a, b = r, r * 0.35
        return [
            (cx + x, cy + y)
            for x, y in [(-b, -a), (b, -a), (b, -b), (a, -b), (a, b), (b, b), (b, a), (-b, a), (-b, b), (-a, b), (-a, -b), (-b, -b)]
        ]
    raise ValueError(f"unknown shape {shape!r}")


def render_frame(second: int, width: int, height: int, border: str, events: list[Event]) -> np.ndarray:
    """The picture shown during `second`: code strip, border, stage and the events active then."""
    strip = code_strip_height(height)
    image = Image.new("RGB", (width, height), PALETTE[border])
    draw = ImageDraw.Draw(image)
    thickness = max(2, height // 24)
    draw.rectangle([thickness, strip + thickness, width - 1 - thickness, height - 1 - thickness], fill=STAGE)
    stage_top, stage_height = strip + thickness, height - strip - 2 * thickness
    slot_width = (width - 2 * thickness) / N_SLOTS
    radius = 0.36 * min(slot_width, stage_height)
    for event in events:
        if not event.start_s <= second < event.end_s:
            continue
        cx = thickness + slot_width * (event.slot + 0.5)
        cy = stage_top + stage_height / 2
        colour = PALETTE[event.colour]
        if event.shape == "circle":
            draw.ellipse([cx - radius, cy - radius, cx + radius, cy + radius], fill=colour)
        elif event.shape == "square":
            side = radius * 0.85
            draw.rectangle([cx - side, cy - side, cx + side, cy + side], fill=colour)
        else:
            draw.polygon(_polygon(event.shape, cx, cy, radius), fill=colour)
    pixels = np.array(image)
    draw_second_code(pixels, second)
    return pixels


# ---------------------------------------------------------------------------------------------
# Planning videos and questions


@dataclass(frozen=True)
class SyntheticSettings:
    seed: int = 0
    n_videos: int = 12
    min_duration_s: float = 66.0
    max_duration_s: float = 1090.0
    width: int = 256
    height: int = 144
    fps: list[float] = field(default_factory=lambda: [8.0, 12.5, 6.0, 10.0])
    questions_per_video: int = 5
    levels: list[int] = field(default_factory=lambda: list(LEVELS))

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SyntheticSettings:
        return settings_from_dict(cls, values, "synthetic source")


@dataclass
class QuestionPlan:
    task_type: str
    category: str
    question: str
    answer: str
    evidence: list[list[float]]


@dataclass
class VideoPlan:
    video_id: str
    n_frames: int
    fps: Fraction
    duration_s: float
    border: str
    events: list[Event]
    questions: list[QuestionPlan]


TEMPLATES = ("colour", "shape", "counting", "order", "border", "before_after")
CATEGORY = {
    "colour": "perception",
    "shape": "perception",
    "border": "perception",
    "counting": "reasoning",
    "order": "reasoning",
    "before_after": "reasoning",
}
# Placement intents, cycled over questions; "from:L" means seen from level L upwards only.
PATTERNS = ("always", "never", "from:128", "from:256", "from:512", "from:1024", "from:64")


class _Placer:
    """Chooses event seconds so that a question's evidence follows a placement intent."""

    def __init__(self, duration_s: float, levels: list[int], rng: random.Random):
        self.size = grid_size(duration_s)
        self.levels = available_levels(duration_s, levels)
        self.grids = {level: set(level_indices(level, duration_s)) for level in self.levels}
        self.rng = rng
        self.short_used: set[int] = set()
        self.long_used: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
        # Long enough to hold a sampled timestamp at every level: the widest level gap, plus one.
        self.long_width = math.ceil((self.size - 1) / (min(self.levels) - 1)) + 1 if self.levels else 1

    def feasible(self, pattern: str) -> bool:
        if pattern.startswith("from:"):
            return int(pattern[5:]) in self.levels
        return bool(self.levels)

    def _short_candidates(self, pattern: str) -> list[int]:
        union = set().union(*self.grids.values())
        if pattern == "never":
            wanted = [k for k in range(self.size) if k not in union]
        else:
            start = int(pattern[5:])
            wanted = [
                k
                for k in range(self.size)
                if all(k in self.grids[level] for level in self.levels if level >= start)
                and not any(k in self.grids[level] for level in self.levels if level < start)
            ]
        # Keep a free second between short events so two never look like one.
        return [k for k in wanted if not {k - 1, k, k + 1} & self.short_used]

    def short(self, pattern: str) -> int | None:
        candidates = self._short_candidates(pattern)
        if not candidates:
            return None
        second = self.rng.choice(candidates)
        self.short_used.add(second)
        return second

    def long(self) -> tuple[int, int, int] | None:
        width = self.long_width
        for _ in range(200):
            slot = self.rng.choice((0, 1))
            start = self.rng.randrange(0, max(1, self.size - width + 1))
            end = min(start + width, self.size)
            if all(end + 1 <= s or e + 1 <= start for s, e in self.long_used[slot]):
                self.long_used[slot].append((start, end))
                return slot, start, end
        return None

    def place(self, pattern: str, shape: str, colour: str) -> Event | None:
        if pattern == "always":
            found = self.long()
            if found is None:
                return None
            slot, start, end = found
            return Event(shape, colour, start, end, slot)
        second = self.short(pattern)
        if second is None:
            return None
        return Event(shape, colour, second, second + 1, SHORT_SLOT)


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith(("s", "x", "ss")) else "s")


def _article(name: str) -> str:
    return f"the {name}"


# Highest level of each video, cycled: a third reach 1024 and some stop at every lower level,
# roughly as in the paper (587 of 1,328 instances reach 1024, 915 reach 512).
TOP_LEVEL_CYCLE = (1024, 64, 512, 128, 1024, 256)


def _duration(index: int, settings: SyntheticSettings, rng: random.Random) -> float:
    """A duration whose highest available level follows TOP_LEVEL_CYCLE, within the settings' range.

    The fractional part is kept away from whole seconds so that container rounding can never
    change floor(duration).
    """
    low, high = math.ceil(settings.min_duration_s), math.floor(settings.max_duration_s)
    tops = [level for level in TOP_LEVEL_CYCLE if level <= high] or [min(TOP_LEVEL_CYCLE)]
    top = tops[index % len(tops)]
    higher = [level for level in settings.levels if level > top]
    start = max(low, top + 2)
    end = min(high, (min(higher) - 1) if higher else high)
    return rng.randint(start, max(start, end)) + 0.4


def plan_video(index: int, settings: SyntheticSettings, pattern_offset: int) -> VideoPlan:
    rng = random.Random(f"{settings.seed}:{index}")
    target = _duration(index, settings, rng)
    fps = Fraction(settings.fps[index % len(settings.fps)]).limit_denominator(1001)
    n_frames = round(target * fps)
    duration_s = float(n_frames / fps)

    shapes = list(SHAPES)
    colours = list(PALETTE)
    rng.shuffle(shapes)
    rng.shuffle(colours)
    border = colours.pop()
    placer = _Placer(duration_s, settings.levels, rng)
    events: list[Event] = []
    questions: list[QuestionPlan] = []
    pattern_index = pattern_offset

    def next_pattern(allow_always: bool = True) -> str:
        nonlocal pattern_index
        for _ in range(len(PATTERNS)):
            pattern = PATTERNS[pattern_index % len(PATTERNS)]
            pattern_index += 1
            if placer.feasible(pattern) and (allow_always or pattern != "always"):
                return pattern
        return "from:64"

    def place(pattern: str, shape: str, colour: str) -> Event:
        # Fall back through the patterns when the intended seconds are all taken.
        for candidate in (pattern, *PATTERNS):
            if placer.feasible(candidate):
                event = placer.place(candidate, shape, colour)
                if event is not None:
                    events.append(event)
                    return event
        raise RuntimeError(f"video {index}: no room left to place a {colour} {shape}")

    templates = [TEMPLATES[(index + k) % len(TEMPLATES)] for k in range(settings.questions_per_video)]
    for template in templates:
        if template == "border":
            question = QuestionPlan(
                template, CATEGORY[template], "What colour is the border around the picture?", border, [[0.0, duration_s]]
            )
        elif template in ("colour", "shape"):
            event = place(next_pattern(), shapes.pop(), colours.pop())
            text = f"What colour is the {event.shape}?" if template == "colour" else f"What shape is the {event.colour} object?"
            answer = event.colour if template == "colour" else event.shape
            question = QuestionPlan(template, CATEGORY[template], text, answer, [event.interval])
        elif template == "counting":
            shape, count = shapes.pop(), rng.choice((2, 3))
            pattern = next_pattern(allow_always=False)
            group = [place(pattern, shape, colours.pop()) for _ in range(count)]
            question = QuestionPlan(
                template,
                CATEGORY[template],
                f"How many {_plural(shape)} of different colours appear in the video?",
                str(count),
                [event.interval for event in group],
            )
        else:  # order, before_after: two events at different times
            pattern = next_pattern()
            first = place(pattern, shapes.pop(), colours.pop())
            second = place(pattern, shapes.pop(), colours.pop())
            a, b = (first, second) if rng.random() < 0.5 else (second, first)
            a_first = a.start_s < b.start_s
            if template == "order":
                text = f"Which appears first, {_article(a.name)} or {_article(b.name)}?"
                answer = _article(a.name if a_first else b.name)
            else:
                text = f"Does {_article(a.name)} appear before or after {_article(b.name)}?"
                answer = "before" if a_first else "after"
            question = QuestionPlan(template, CATEGORY[template], text, answer, [a.interval, b.interval])
        questions.append(question)
    return VideoPlan(f"syn{index:02d}", n_frames, fps, duration_s, border, events, questions)


def plan(settings: SyntheticSettings) -> list[VideoPlan]:
    plans, offset = [], 0
    for index in range(settings.n_videos):
        video = plan_video(index, settings, offset)
        offset += len(video.questions)
        plans.append(video)
    return plans


# ---------------------------------------------------------------------------------------------
# Writing


def write_video(video: VideoPlan, path: Path, width: int, height: int) -> None:
    import av  # imported here so planning and reading codes need no codec library

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.mp4")
    with av.open(str(tmp), mode="w") as container:
        stream = container.add_stream("libx264", rate=video.fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "18", "g": str(max(1, round(float(video.fps) * 4)))}
        current_second, frame = -1, None
        for index in range(video.n_frames):
            second = int(math.floor(index / video.fps))
            if second != current_second:
                pixels = render_frame(second, width, height, video.border, video.events)
                frame, current_second = av.VideoFrame.from_ndarray(pixels, format="rgb24"), second
            frame.pts = index
            frame.time_base = 1 / video.fps
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.replace(path)


def _write_one(args: tuple[VideoPlan, str, int, int]) -> None:
    video, path, width, height = args
    write_video(video, Path(path), width, height)


def instances_of(video: VideoPlan, video_path: str, levels: list[int]) -> list[Instance]:
    return [
        Instance(
            instance_id=f"{video.video_id}_q{number}",
            video_id=video.video_id,
            source="synthetic",
            category=question.category,
            task_type=question.task_type,
            question=question.question,
            answer=question.answer,
            duration_s=video.duration_s,
            video_path=video_path,
            answers=answers_by_level(question.answer, question.evidence, video.duration_s, levels),
            evidence=question.evidence,
        )
        for number, question in enumerate(video.questions)
    ]


def generate(videos_dir: str | Path, settings: SyntheticSettings, threads: int = 1) -> list[Instance]:
    """Write the demo videos to `videos_dir` and return their instances (deterministic in the settings)."""
    videos_dir = Path(videos_dir)
    plans = plan(settings)
    jobs = [(video, str(videos_dir / f"{video.video_id}.mp4"), settings.width, settings.height) for video in plans]
    if threads > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=threads) as pool:
            list(pool.map(_write_one, jobs))
    else:
        for job in jobs:
            _write_one(job)
    return [inst for video, job in zip(plans, jobs) for inst in instances_of(video, job[1], settings.levels)]


def preview(settings: dict[str, Any]) -> list[Instance]:
    """The instances `adapter` writes, planned without writing a video (their video_path is the file's name alone):
    what the Snakefile checks before any job (virtuebench.sources.Adapter.preview)."""
    given = SyntheticSettings.from_dict(settings)
    try:
        plans = plan(given)
    except RuntimeError as error:  # settings whose videos have no room for their questions
        raise ValueError(f"synthetic source: {error}") from None
    return [inst for video in plans for inst in instances_of(video, f"{video.video_id}.mp4", given.levels)]


def adapter(settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], list[dict[str, str]]]:
    """The source adapter (virtuebench.sources.SOURCES): the demo's videos and instances; nothing is left out."""
    return generate(videos_dir, SyntheticSettings.from_dict(settings), threads=threads), []
