"""What each everyday change costs in model requests (docs/reruns.md, "What a change costs"): a finished small demo
plus `api`, an OpenAI-compatible model behind a local fake server that counts every request, then one change and a
real rerun. The answer store (support/store.py) must make a rerun ask exactly the items whose question, frames or
settings changed, and give tables and scores.csv byte-identical to an uninterrupted run wherever nothing changed.

Each test starts from its own copy of the finished run (times kept), so the tests need no order."""

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.data import REPO
from helpers.fake_openai import FakeOpenAI, api_entry
from helpers.workflow import executed, snakemake

from virtuebench.inference import items_for_level
from virtuebench.instances import read_instances

pytestmark = pytest.mark.workflow

#: Three videos of 300 s at most (the third reaches 256 frames), one prompt; the rules judge.
CONFIG = {
    "source": {"name": "synthetic", "settings": {"seed": 7, "n_videos": 3, "max_duration_s": 300, "width": 64, "height": 36}},
    "levels": [64, 128],
    "models": ["refuse", "api"],
    "prompts": ["honest"],
    "judge": "rules",
}
#: What the tests build and compare: the scores and both tables (the figures and the browser read the same records).
TARGETS = ("results/scores.csv", "results/table1.tex", "results/table2.tex")


def costly(jobs: Counter) -> dict[str, int]:
    """The jobs that decode videos or run models: what a rerun must not repeat needlessly."""
    return {rule: jobs[rule] for rule in ("extract_frames", "run_inference") if jobs[rule]}


def level_manifests(workdir: Path) -> dict[str, dict]:
    """Each level folder's manifest's levels (timestamps, files, digest), by path."""
    return {
        str(path.relative_to(workdir)): json.loads(path.read_text())["levels"]
        for path in sorted((workdir / "results" / "frames").glob("*/*/manifest.json"))
    }


class Run:
    """A results folder of CONFIG (or a change of it) in `workdir`, against the module's fake server."""

    def __init__(self, workdir: Path, server: FakeOpenAI, config: dict) -> None:
        self.workdir, self.server, self.config = workdir, server, config

    def rerun(self, targets=TARGETS, **changes) -> tuple[int, Counter]:
        """A real run with `changes` to the config: (model requests it made, jobs it ran per rule)."""
        self.config = {**self.config, **changes}
        before = self.server.backend_requests
        result = snakemake(self.workdir, *targets, config=self.config)
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        jobs = executed(result)
        print(f"\n{changes or 'rerun'}: {self.server.backend_requests - before} requests, {dict(jobs)}")
        return self.server.backend_requests - before, jobs

    def outputs(self, root: str = "results") -> dict[str, bytes]:
        return {name: (self.workdir / name.replace("results", root, 1)).read_bytes() for name in TARGETS}

    def copy(self, target: Path, keep_times: bool = True) -> "Run":
        if keep_times:
            shutil.copytree(self.workdir, target, symlinks=True)
        else:  # as `cp -r` does: every file and folder gets a new time
            subprocess.run(["cp", "-r", str(self.workdir), str(target)], check=True)
        return Run(target, self.server, dict(self.config))

    def items(self, level: int, video_id: str | None = None) -> list[str]:
        table = read_instances(self.workdir / "results" / "instances.parquet")
        return [inst.instance_id for inst in items_for_level(table, level) if video_id in (None, inst.video_id)]


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(scope="module")
def finished(tmp_path_factory, server):
    """The finished run every test copies: refuse and api at levels 64 and 128."""
    workdir = tmp_path_factory.mktemp("cost") / "project"
    workdir.mkdir()
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["api"] = api_entry(server)
    registry["api2"] = {**api_entry(server), "settings": {**api_entry(server)["settings"], "model": "fake-vlm-2"}}
    (workdir / "models.yaml").write_text(yaml.safe_dump(registry))
    # A relative registry path: the project copied elsewhere reads its own copy.
    run = Run(workdir, server, {**CONFIG, "model_registry": "models.yaml"})
    requests, _ = run.rerun()
    assert requests == sum(len(run.items(level)) for level in CONFIG["levels"]) > 0
    return run


def test_a_new_level_asks_its_items_and_dropping_and_restoring_levels_asks_nothing(finished, tmp_path):
    run = finished.copy(tmp_path / "levels")
    before = level_manifests(run.workdir)
    requests, jobs = run.rerun(levels=[64, 128, 256])
    assert requests == len(run.items(256)) > 0, "a new level: exactly its items"
    assert costly(jobs) == {"extract_frames": 1, "run_inference": 2}, "its one video's frames, its two models' jobs"
    after = level_manifests(run.workdir)
    assert {path: levels for path, levels in after.items() if path in before} == before, "the levels there are not rewritten"
    assert [path for path in after if path not in before] == [path for path in after if path.endswith("/256/manifest.json")]
    three_levels = run.outputs()
    requests, jobs = run.rerun(levels=[64])
    assert (requests, costly(jobs)) == (0, {}), "two levels dropped"
    requests, jobs = run.rerun(levels=[64, 128, 256])
    assert (requests, costly(jobs)) == (0, {}), "two levels put back"
    assert run.outputs() == three_levels


def test_touched_videos_a_deleted_frames_folder_and_a_copy_ask_nothing(finished, tmp_path):
    run = finished.copy(tmp_path / "touch")
    reference = finished.outputs()
    for video in (run.workdir / "results" / "videos").iterdir():
        video.touch()
    requests, jobs = run.rerun()
    assert (requests, jobs, run.outputs()) == (0, {}, reference), "every video touched: nothing to be done"
    copy = run.copy(tmp_path / "copied", keep_times=False)
    requests, jobs = copy.rerun()
    assert (requests, jobs, copy.outputs()) == (0, {}, reference), "the project copied with cp -r, run in the copy"
    # A level folder removed to save space stays removed until a job needs it (snakemake/snakemake#1978) ...
    frames = level_manifests(run.workdir)
    shutil.rmtree(run.workdir / "results" / "frames" / "syn00" / "64")
    requests, jobs = run.rerun()
    assert (requests, jobs, run.outputs()) == (0, {}, reference), "a frames folder deleted"
    # ... such as a new model's: extracted again, to the same frames. The level's other inference jobs run again too
    # (Snakemake reruns a job whose missing input is made again, ancient or not), asking nothing: all stored.
    per_prompt = sum(len(run.items(level)) for level in CONFIG["levels"])
    requests, jobs = run.rerun(models=["refuse", "api", "api2"])
    assert requests == per_prompt, "the new model's items only"
    assert costly(jobs) == {"extract_frames": 1, "run_inference": 2 + 2}
    assert level_manifests(run.workdir) == frames, "extracted again to the same frames, digest for digest"


def test_a_new_video_and_a_corrected_question_ask_exactly_their_items(finished, tmp_path):
    run = finished.copy(tmp_path / "content")
    settings = {**CONFIG["source"]["settings"], "n_videos": 4}
    requests, jobs = run.rerun(source={"name": "synthetic", "settings": settings})
    new = sum(len(run.items(level, "syn03")) for level in CONFIG["levels"])
    assert requests == new > 0, "a video added: its items at every level and prompt"
    assert costly(jobs) == {"extract_frames": 1, "run_inference": 2}, "its one level's frames, that level's two jobs"
    # One question corrected in the instances table (as an annotation fix does): that item, at each of its levels.
    table_path = run.workdir / "results" / "instances.parquet"
    table = pl.read_parquet(table_path)
    corrected = run.items(64)[0]
    table = table.with_columns(
        pl.when(pl.col("instance_id") == corrected)
        .then(pl.col("question") + " (corrected)")
        .otherwise(pl.col("question"))
        .alias("question")
    )
    table.write_parquet(table_path)
    requests, jobs = run.rerun()
    assert requests == sum(corrected in run.items(level) for level in CONFIG["levels"]) > 0
    assert costly(jobs) == {"run_inference": 2 * len([level for level in CONFIG["levels"] if corrected in run.items(level)])}


def test_a_new_model_prompt_or_judge_and_a_second_results_folder_ask_only_what_is_new(finished, tmp_path):
    run = finished.copy(tmp_path / "added")
    per_prompt = sum(len(run.items(level)) for level in CONFIG["levels"])
    requests, jobs = run.rerun(models=["refuse", "api", "api2"])
    assert (requests, costly(jobs)) == (per_prompt, {"run_inference": 2}), "a model added: its items"
    requests, jobs = run.rerun(prompts=["honest", "plain"])
    assert (requests, costly(jobs)) == (2 * per_prompt, {"run_inference": 6}), "a prompt added: both API models' items"
    judges = {"fake-gpt": {"kind": "llm", "model": "gpt-fake", "base_url": run.server.base_url, "api_key_env": None}}
    judge_requests = run.server.judge_requests
    agreement = "results/judge_agreement/rules__vs__fake-gpt.json"
    requests, jobs = run.rerun((*TARGETS, agreement), judges=judges, compare_judges=[["rules", "fake-gpt"]])
    assert requests == 0 and run.server.judge_requests > judge_requests, "a judge added: judge requests only"
    assert costly(jobs) == {} and jobs["judge_responses"] == 12
    # A second results folder whose configuration overlaps the first's (api at level 64): nothing asked again.
    second = {**CONFIG, "model_registry": "models.yaml", "results": "results/second", "models": ["api"], "levels": [64]}
    before = run.server.backend_requests
    result = snakemake(run.workdir, "results/second/scores.csv", config=second)
    assert run.server.backend_requests == before
    print(f"\na second results folder: {dict(executed(result))}")
