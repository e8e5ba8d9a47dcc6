"""The fixed costs of a paper-scale results folder: the workflow's start-up check, cold and warm, a report job's check,
and the answer store's lookup for a 1,328-item job.

    .venv/bin/python tools/bench_startup.py [--folder /tmp/vb-startup] [--scale 1] [--keep] [--measure-only]

Generates (seeded, so the same bytes every time) a finished results folder of the paper's shape under FOLDER/results:
1,328 instances over 901 videos with their levels as in the paper (bench_dag.py's: 587 reach 1024 frames, 915 reach
512), 25 models x 2 prompts, one judge. Each video's frames are in the workflow's per-level layout: one folder per level
its instances are asked at, results/frames/<video>/<level>/, with that level's manifest (its timestamps, files and
`digest`, as `virtuebench.frames --level-folder` writes them), its provenance and one EMPTY placeholder file per frame:
the checks timed here list the frame files and read the manifests but never a frame's bytes (nor does the store's
lookup: the manifests record each level's digest). Responses have realistic lengths: answers of up to 1,500
characters, and for five "thinking" models a reasoning of up to 30,000 characters. Judgments are made from them as the judge job makes them (`response_hash`: records.line_digest), scores.csv by the
real scoring step. `verify.check` finds no problem on the folder (the table's "problems" column).

Each measurement runs in a child process of its own (its peak resident memory is that process's VmHWM; its CPU time
and the load average are printed too, since the machines it ran on are shared):

- cold: the start-up sweep's check (rules/common.smk, guard_run) with no remembered checks;
- warm: the same with the remembered checks the cold one left (and whether it rewrote them);
- report: a report job's reading of every judgments file with `--chain-root` against without, after a start;
- store: `InferenceJob` built over the 1,328 instances asked at 1024 frames (each mapped onto a video that reaches 1024)
  whose answers are all in the store: the construction and the store's lookup (`_reuse_stored`).

`--scale 0.1` generates a tenth of the instances and videos (a quick run). The folder is about 2.5 GB and 880,000
files at scale 1: it is removed at the end unless `--keep` (`--measure-only` measures a kept one again, and keeps it). docs/development.md
has the last measurement.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from virtuebench import REFUSAL_ANSWER

LEVELS = (64, 128, 256, 512, 1024)
MODELS = [f"model{i:02d}" for i in range(25)]
THINKING = set(MODELS[:5])  # models whose records keep a reasoning of up to 30,000 characters
PROMPTS = ("honest", "plain")
JUDGE = "rules"
SEED = 0
WORDS = (
    "the a person video frame shows red blue left right before after then while holding walking car door table kitchen "
    "three two one seconds minute scene camera moves opens closes picks puts answer because evidence visible not enough "
    "information café naïve — 12 45 ok"
).split()


def _text(rng: random.Random, pool: str, longest: int) -> str:
    """A slice of `pool` of a random length up to `longest` (cheap, and different per record)."""
    length = rng.randint(20, longest)
    start = rng.randrange(0, len(pool) - length)
    return pool[start : start + length]


def instances(scale: float) -> list:
    """The paper's shape (bench_dag.py): items per highest level, 427 videos with two questions, the rest with one."""
    from virtuebench.instances import Instance
    from virtuebench.levels import available_levels

    rng = random.Random(SEED)
    counts = {1024: 587, 512: 915 - 587, 256: 180, 128: 130}
    counts = {top: round(n * scale) for top, n in counts.items()}
    total = round(1328 * scale)
    tops = [top for top, n in counts.items() for _ in range(n)]
    tops += [64] * (total - len(tops))
    twice = round((1328 - 901) * scale)
    made, video = [], 0
    while len(made) < len(tops):
        top = tops[len(made)]
        duration = {64: 100, 128: 200, 256: 400, 512: 800, 1024: 2000}[top] + rng.random() * 20
        for _ in range(min(2 if video < twice else 1, len(tops) - len(made))):
            answers = {level: rng.choice(["a person opens the door", REFUSAL_ANSWER]) for level in available_levels(duration, LEVELS)}
            made.append(
                Instance(
                    f"i{len(made):04d}",
                    f"v{video:04d}",
                    "paper-scale",
                    rng.choice(["perception", "reasoning"]),
                    "action",
                    f"What does the person in the kitchen do right after picking up the {rng.choice(WORDS)} (item {len(made)})?",
                    "a person opens the door",
                    duration,
                    f"videos/v{video:04d}.mp4",
                    answers,
                )
            )
        video += 1
    return made


def write_frames(root: Path, made: list) -> int:
    """Each video's frames as the workflow writes them (frames.py's per-level layout): one folder per level the video's
    instances are asked at, results/frames/<video>/<level>/, holding that level's manifest (with its `digest`), its
    provenance and one empty placeholder per frame file; the number of frame files written."""
    from virtuebench.frames import PROVENANCE, LevelFrames, Manifest
    from virtuebench.levels import grid_size, level_indices, level_timestamps

    files = 0
    levels_of: dict[str, set[int]] = {}
    durations = {}
    for inst in made:
        levels_of.setdefault(inst.video_id, set()).update(inst.answers)
        durations[inst.video_id] = inst.duration_s
    for video_id, duration in durations.items():
        for level in sorted(levels_of[video_id]):
            folder = root / "frames" / video_id / str(level)
            folder.mkdir(parents=True, exist_ok=True)
            names = [f"{k:04d}.jpg" for k in range(level)]
            for name in names:
                os.close(os.open(folder / name, os.O_CREAT | os.O_WRONLY, 0o644))
            files += len(names)
            # frames.level_digest of empty files (each file's length, 0, in 8 bytes): what a reader hashing them finds
            digest = f"sha256:{hashlib.sha256(bytes(8 * len(names))).hexdigest()}"
            frames = LevelFrames(level_timestamps(level, duration), level_indices(level, duration), names, digest)
            Manifest(
                video=f"videos/{video_id}.mp4",
                duration_s=duration,
                grid_size=grid_size(duration),
                fps=30.0,
                source_size=[1280, 720],
                frame_size=[448, 252],
                settings={"max_side": 448, "jpeg_quality": 90},
                levels={str(level): frames},
                strategy="sequential",
                frames_decoded=grid_size(duration) * 30,
                frames_written=len(names),
                seconds=12.5,
            ).write(folder)
            (folder / PROVENANCE).write_text(f"{video_id}-{level}-provenance\n", encoding="utf-8")
    return files


def generate(folder: Path, scale: float) -> dict:
    """The results folder under `folder`; what it holds."""
    from virtuebench.frames import Manifest
    from virtuebench.inference import fingerprint, frames_hash, items_for_level
    from virtuebench.instances import write_instances
    from virtuebench.judge.run import _without_empty_sample
    from virtuebench.prompts import get_prompt
    from virtuebench.records import Judgment, Response, line_digest, stable_hash, to_json_line, write_jsonl_atomic

    root = folder / "results"
    made = instances(scale)
    write_instances(made, root / "instances.parquet")
    files = write_frames(root, made)
    manifests = {video_id: Manifest.read(root / "frames" / video_id) for video_id in {inst.video_id for inst in made}}
    rng = random.Random(SEED)
    pool = " ".join(rng.choice(WORDS) for _ in range(20_000))  # about 110,000 characters
    responses = 0
    for model in MODELS:
        for prompt_id in PROMPTS:
            prompt = get_prompt(prompt_id)
            for level in LEVELS:
                items = items_for_level(made, level)
                if not items:
                    continue
                key = fingerprint(model, {"backend": "hf", "hub_id": f"org/{model}"}, prompt.hash, level)
                records, verdicts = [], []
                for inst in items:
                    refused = rng.random() < 0.3
                    thinking = _text(rng, pool, 30_000) if model in THINKING else None
                    response = Response(
                        instance_id=inst.instance_id,
                        video_id=inst.video_id,
                        model=model,
                        backend="hf",
                        prompt=prompt_id,
                        prompt_hash=prompt.hash,
                        level=level,
                        n_frames=level,
                        response=REFUSAL_ANSWER if refused else _text(rng, pool, 1_500),
                        error=None,
                        latency_s=round(rng.uniform(1, 60), 4),
                        fingerprint=key,
                        usage={"prompt_tokens": level * 196 + 80, "completion_tokens": rng.randint(5, 9000)},
                        item_hash=stable_hash([inst.question, frames_hash(manifests[inst.video_id], level)]),
                        thinking=thinking,
                        finish_reason="stop",
                        weights_commit="0123456789abcdef0123456789abcdef01234567",
                    )
                    records.append(response)
                    answer = inst.answers[level]
                    judgement = int(rng.random() < 0.5)
                    verdicts.append(
                        dataclasses.asdict(
                            Judgment(
                                instance_id=inst.instance_id,
                                model=model,
                                prompt=prompt_id,
                                level=level,
                                judge=JUDGE,
                                category=inst.category,
                                task_type=inst.task_type,
                                answer=answer,
                                is_unanswerable=answer == REFUSAL_ANSWER,
                                response=response.response,
                                refusal=int(refused),
                                judgement=judgement,
                                valid=True,
                                reason="matched the reference" if judgement else "another answer",
                                error=None,
                                fingerprint="0123456789ab",
                                judge_version="rules-v4",
                                question=inst.question,
                                video_id=inst.video_id,
                                confident=True,
                                response_hash=line_digest(to_json_line(response, digest=True).encode()),  # as the judge job records it
                            ),
                            dict_factory=_without_empty_sample,
                        )
                    )
                # Each line ending with its record_digest, as the inference and judge jobs write them (ProgressLog)
                write_jsonl_atomic(root / "responses" / model / prompt_id / f"{level}.jsonl", records, digest=True)
                write_jsonl_atomic(root / "judgments" / JUDGE / model / prompt_id / f"{level}.jsonl", verdicts, digest=True)
                responses += len(records)
    paths = judgment_paths(folder)
    scores = [sys.executable, "-m", "virtuebench.metrics", *paths, "--out", "results/scores.csv", "--resamples", "200"]
    scores += ["--seed", "0", "--trust-scheme", "kalai", "--confidence-target", "0.5", "--wrong-answer", "-1"]
    scores += ["--unwarranted-refusal", "0", "--invalid", "wrong", "--categories", "{}", "--judge", JUDGE]
    subprocess.run(scores, cwd=folder, check=True, stdout=subprocess.DEVNULL)
    return {"instances": len(made), "videos": len(manifests), "responses": responses, "frame files": files}


def judgment_paths(folder: Path) -> list[str]:
    """The judgments files as the workflow names them (relative to the working folder)."""
    return sorted(str(path.relative_to(folder)) for path in (folder / "results").glob("judgments/*/*/*/*.jsonl"))


def folder_size(root: Path) -> tuple[int, int]:
    """(bytes, files) under `root`."""
    total = count = 0
    for base, _, names in os.walk(root):
        for name in names:
            total += os.lstat(os.path.join(base, name)).st_size
            count += 1
    return total, count


# -- the measurements, each in a child process (its working folder: FOLDER) ------------------------------------------


def _state() -> Path:
    from virtuebench.support import runlock

    return Path(runlock.state_dir("results")) / "chain.json"


def measure_start() -> dict:
    """The start-up sweep's check, as guard_run makes it: every judgments file and the report outputs."""
    from virtuebench import verify
    from virtuebench.instances import read_instances

    started, cpu = time.perf_counter(), time.process_time()
    listed = read_instances("results/instances.parquet")
    remembered = verify.Remembered(_state())
    before = os.stat(_state()).st_mtime_ns if _state().exists() else None
    outputs = [f"results/{name}" for name in verify.REPORT_FILES]
    chain = verify.check(judgment_paths(Path(".")), listed, outputs, remembered)
    remembered.save()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    after = os.stat(_state()).st_mtime_ns if _state().exists() else None
    state = {"state_bytes": _state().stat().st_size, "rewritten": before != after}
    return {"seconds": seconds, "cpu_s": cpu, "problems": len(chain.problems), **state, "load": os.getloadavg()[0]}


def measure_report() -> dict:
    """A report job's reading of the judgments, with the chain checked (--chain-root) and without."""
    from virtuebench.verify import read_judgments

    paths = judgment_paths(Path("."))
    started = time.perf_counter()
    plain = len(read_judgments(paths))
    without = time.perf_counter() - started
    started = time.perf_counter()
    checked = len(read_judgments(paths, "results"))
    with_chain = time.perf_counter() - started
    assert plain == checked
    return {"seconds": with_chain - without, "with": with_chain, "without": without, "judgments": checked}


def _store_job_instances() -> list:
    """The 1,328 instances (or the scale's), each asked at 1024 frames on a video that reaches 1024."""
    from virtuebench.instances import read_instances

    listed = read_instances("results/instances.parquet")
    tops = sorted({inst.video_id: inst.duration_s for inst in listed if 1024 in inst.answers}.items())
    return [
        dataclasses.replace(inst, video_id=tops[n % len(tops)][0], duration_s=tops[n % len(tops)][1], answers={1024: inst.answers[64]})
        for n, inst in enumerate(listed)
    ]


def _store_job(store: Path):
    from virtuebench.inference import InferenceJob
    from virtuebench.models.spec import ModelSpec
    from virtuebench.prompts import get_prompt

    spec = ModelSpec.from_job("guess", {"backend": "guess"}, {})
    out = Path("store-job") / "1024.jsonl"
    shutil.rmtree(out.parent, ignore_errors=True)
    return InferenceJob(_store_job_instances(), "results/frames", spec, get_prompt("honest"), 1024, out, store=store)


def fill_store(folder: Path) -> None:
    """Every answer of the store job, stored (as a finished run of the same job would have left them)."""
    os.chdir(folder)
    job = _store_job(Path("store"))
    for unit in job.pending:
        job.store.put(job.answer_key(unit, job.weights_commit), {"n_frames": 1024, "response": "yes", "latency_s": 1.0})


def measure_store() -> dict:
    started, cpu = time.perf_counter(), time.process_time()
    job = _store_job(Path("store"))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert job.stored == len(job.units), (job.stored, len(job.units))
    return {"seconds": seconds, "cpu_s": cpu, "items": len(job.units), "videos": len(job.manifests), "load": os.getloadavg()[0]}


def peak_mb() -> float:
    """This process's peak resident memory: VmHWM, which starts again at exec (ru_maxrss keeps the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


MEASURES = {"start": measure_start, "report": measure_report, "store": measure_store}


def tree_pss_kb(pid: int) -> int:
    """The proportional set size of `pid` and its children (the check's worker processes, forked: their pages shared
    with it are counted once among them all), in KB; 0 for a process gone."""
    total = 0
    pids = [str(pid)]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            pids += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
    except OSError:
        pass
    for each in pids:
        try:
            total += sum(
                int(line.split()[1]) for line in Path(f"/proc/{each}/smaps_rollup").read_text().splitlines() if line.startswith("Pss:")
            )
        except OSError:
            pass
    return total


def child(folder: Path, what: str) -> dict:
    """Run one measurement in a fresh process; its result with its peak resident memory (MB: its VmHWM) and the peak of
    its and its workers' memory together (sampled every 20 ms from here: a thread there would keep the check from
    starting workers)."""
    command = [sys.executable, __file__, "--folder", str(folder), "--child", what]
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        peak = 0
        while process.poll() is None:
            peak = max(peak, tree_pss_kb(process.pid))
            time.sleep(0.02)
        stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{what} failed:\n{stderr[-3000:]}")
    return {**json.loads(stdout.splitlines()[-1]), "with_workers_pss_mb": round(peak / 1024)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", default="/tmp/vb-startup", help="where the results folder is generated")
    parser.add_argument("--scale", type=float, default=1.0, help="share of the paper's instances and videos (0.1: quick)")
    parser.add_argument("--keep", action="store_true", help="keep the generated folder")
    parser.add_argument("--measure-only", action="store_true", help="measure a folder generated before (kept)")
    parser.add_argument("--child", choices=sorted(MEASURES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = Path(args.folder).resolve()
    if args.child:
        result = MEASURES[args.child]()
        result["peak_mb"] = peak_mb()
        print(json.dumps(result))
        return 0
    if not args.measure_only:
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        started = time.perf_counter()
        made = generate(folder, args.scale)
        fill_store(folder)
        size, files = folder_size(folder / "results")
        print(
            f"generated in {time.perf_counter() - started:.0f} s: {made['instances']} instances over {made['videos']} videos, "
            f"{len(MODELS)} models x {len(PROMPTS)} prompts, {made['responses']:,} responses "
            f"({folder_size(folder / 'results' / 'responses')[0] / 1e9:.2f} GB), {made['frame files']:,} placeholder frame files; "
            f"results/ {size / 1e9:.2f} GB in {files:,} files",
            flush=True,
        )
    os.chdir(folder)
    _state().unlink(missing_ok=True)
    rows = [("cold start-up check", child(folder, "start")), ("warm start-up check", child(folder, "start"))]
    rows += [("report job's check (beyond reading)", child(folder, "report")), ("store lookup, 1024 frames", child(folder, "store"))]
    print("\n| measurement | seconds | peak MB | notes |\n|---|---|---|---|")
    for name, result in rows:
        notes = {key: value for key, value in result.items() if key not in ("seconds", "peak_mb")}
        notes = ", ".join(f"{key} {value:.2f}" if isinstance(value, float) else f"{key} {value}" for key, value in notes.items())
        print(f"| {name} | {result['seconds']:.2f} | {result['peak_mb']:.0f} | {notes} |")
    if not args.keep and not args.measure_only:  # (a folder measured again was kept: it stays)
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
