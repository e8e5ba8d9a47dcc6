"""`make plan` (virtuebench.estimate) on the paper's configuration, where no instances table exists: the paper's published
counts, each API model's input tokens counted by hand from its family's published rule, GPU-hours from the registry's
runtime_min or from measured records, and the CLI's table. The demo's finished run: tests/workflow/test_workflow.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO

from virtuebench.check import load_plan
from virtuebench.estimate import estimate, main, render
from virtuebench.frames import extract
from virtuebench.instances import Instance, write_instances
from virtuebench.levels import level_timestamps
from virtuebench.prompts import get_prompt

PROMPTS = ("honest", "plain")  # config/paper.yaml's


@pytest.fixture
def paper(tmp_path, monkeypatch):
    """config/paper.yaml's plan with its results folder in tmp_path (empty: no instances table)."""
    monkeypatch.chdir(REPO)  # the registry path in the config is relative to the checkout
    return load_plan([REPO / "config" / "paper.yaml"], results=str(tmp_path / "paper"))


def row(est, model, level):
    (found,) = [r for r in est.rows if (r.model, r.level) == (model, level)]
    return found


def hand_text_tokens(level: int) -> int:
    """Text tokens of one request at `level` with no question known: each prompt's template with an empty question
    and, per frame, the registry's label "<{seconds:.1f} seconds>" for a video of exactly `level` seconds (the frames at
    k + 0.5 s), at 4 characters a token (OpenAI's and Google's rule of thumb), summed over the two prompts."""
    labels = "".join(f"<{k + 0.5:.1f} seconds>" for k in range(level))
    return sum(math.ceil(len(get_prompt(p).template.format(question="")) / 4) + math.ceil(len(labels) / 4) for p in PROMPTS)


def test_gpt4o_tokens_at_64_frames_match_a_count_by_hand(paper):
    est = estimate(paper)
    gpt4o = row(est, "GPT-4o", 64)
    # Items: the paper gives no count at 64 frames, only its 1,328 instances (section 3.3): at most 1,328, per prompt.
    assert est.bound and gpt4o.items == gpt4o.requests == 2 * 1328
    # The frame: none is extracted, so a 16:9 frame of 1920 x 1080 shrunk to config.frames.max_pixels 200,704 (the
    # area, aspect kept): scale sqrt(200704 / 2073600) = 0.31111 -> 597.3 x 336.0 -> 597 x 336 (GPT-4o's max_pixels is
    # the same 200,704: no second shrink).
    width, height = 597, 336
    assert width * height <= 200_704 < (width + 1) * (height + 1)
    # OpenAI's rule for GPT-4o, detail high (the API's `auto` counted as high): within 2048 x 2048 already; the
    # shortest side 336 is under 768, so no scaling; 512 px tiles: ceil(597 / 512) = 2 by ceil(336 / 512) = 1.
    per_frame = 85 + 170 * 2 * 1
    assert per_frame == 425
    assert gpt4o.image_tokens == 2 * 1328 * 64 * per_frame == 72_243_200
    assert gpt4o.text_tokens == 1328 * hand_text_tokens(64)
    # Its price: the registry's 2.50 USD per 1M input tokens; output at most 1,024 tokens (max_tokens) at 10 USD per 1M.
    assert gpt4o.input_cost == pytest.approx((72_243_200 + gpt4o.text_tokens) * 2.50 / 1e6)
    assert gpt4o.output_cost_max == pytest.approx(2 * 1328 * 1024 * 10.00 / 1e6)


def test_other_families_rules_and_the_published_level_counts(paper):
    est = estimate(paper)
    # GPT-5: the same frame, OpenAI's GPT-5 constants 70 + 140 per tile, two tiles; 915 items at 512 frames is the
    # paper's count (section 3.3) but GPT-5's max_level is 256: no row at 512.
    assert row(est, "GPT-5", 256).image_tokens == 2 * 1328 * 256 * (70 + 140 * 2)
    assert not [r for r in est.rows if r.model == "GPT-5" and r.level > 256]
    # Gemini 2.5 Flash: 597 x 336 is over 384 on one side: one 768 x 768 tile, 258 tokens; 915 items at 512 frames.
    gemini = row(est, "Gemini-2.5-Flash", 512)
    assert gemini.items == 2 * 915 and gemini.image_tokens == 2 * 915 * 512 * 258
    assert gemini.input_cost is None  # the registry gives it no price
    assert row(est, "Gemini-2.5-Flash", 1024).items == 2 * 587


def test_gpu_hours_from_runtime_min_then_from_measured_records(paper):
    # No record: the registry's runtime_min per job (Qwen2.5VL-72B: 720 min, 4 GPUs), one job per prompt.
    est = estimate(paper)
    assert row(est, "Qwen2.5VL-72B", 64).gpu_hours == pytest.approx(2 * 720 / 60 * 4)
    assert "runtime_min" in row(est, "Qwen2.5VL-72B", 64).gpu_basis
    # Records of an earlier run at that level: their mean latency_s per item (3 s and 5 s: 4 s), failed ones left out.
    folder = Path(paper.res("responses/Qwen2.5VL-72B/honest"))
    folder.mkdir(parents=True)
    records = [{"latency_s": 3.0, "error": None}, {"latency_s": 5.0, "error": None}, {"latency_s": 99.0, "error": "HTTP 500"}]
    (folder / "64.jsonl.partial").write_text("".join(json.dumps(r) + "\n" for r in records))
    measured = row(estimate(paper), "Qwen2.5VL-72B", 64)
    assert measured.gpu_hours == pytest.approx(2 * 1328 * 4.0 * 4 / 3600)
    assert measured.gpu_basis.startswith("measured: 2 records, 4.0 s an item")


def test_the_cli_prints_requests_tokens_and_gpu_hours_per_model(paper, capsys):
    assert main(["--configfile", str(REPO / "config" / "paper.yaml"), "--results", paper.results]) == 0
    out = capsys.readouterr().out
    per_model = out[out.index("\nPer model:") :]
    assert "model " in per_model and "requests" in per_model and "input tokens" in per_model and "GPU-hours" in per_model
    gpt4o = next(line for line in per_model.splitlines() if line.startswith("GPT-4o "))
    assert "≤7,968" in gpt4o  # 1,328 items x 2 prompts x 3 levels (max_level 256), at most
    qwen = next(line for line in per_model.splitlines() if line.startswith("Qwen2.5VL-7B "))
    assert "≤80.0 (runtime_min" in qwen  # 5 levels x 2 prompts x 480 min x 1 GPU
    assert "VirtueBench's published counts" in out and "Frames to extract: 64: ≤901 videos" in out
    assert "estimated: no frame extracted yet" in out


def test_the_short_form_is_one_line_per_model(paper):
    lines = render(estimate(paper), paper, short=True)
    models = [line.split()[0] for line in lines[2:] if line.split() and line.split()[0] in paper.config["models"]]
    assert models == list(paper.config["models"])


def test_a_broken_instances_table_is_one_line(paper, capsys):
    Path(paper.res("instances.parquet")).parent.mkdir(parents=True, exist_ok=True)
    Path(paper.res("instances.parquet")).write_text("not parquet")
    assert main(["--configfile", str(REPO / "config" / "paper.yaml"), "--results", paper.results]) == 2
    err = capsys.readouterr().err
    assert err.startswith("virtuebench.estimate: ") and "instances.parquet" in err and len(err.strip().splitlines()) == 1


def instance(instance_id: str, video_id: str, duration_s: float, levels: list[int], question: str) -> Instance:
    return Instance(
        instance_id, video_id, "synthetic", "perception", "t", question, "a", duration_s, f"{video_id}.mp4", {lv: "a" for lv in levels}
    )


def test_with_an_instances_table_before_any_frame(tmp_path, monkeypatch):
    """Two videos (100 s, 200 s), three questions; GPT-4o, the honest prompt and DSCP (two steps: a context request per
    video), levels 64 and 128; no frame extracted yet, so every item is due and the frame size is the assumed one."""
    monkeypatch.chdir(REPO)
    table = [
        instance("q1", "v1", 100.0, [64], "What colour is the square?"),
        instance("q2", "v2", 200.0, [64, 128], "How many circles appear?"),
        instance("q3", "v2", 200.0, [64, 128], "What is written on the sign at the end?"),
    ]
    write_instances(table, tmp_path / "results" / "instances.parquet")
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "source": {"name": "synthetic", "settings": {"seed": 0, "n_videos": 2}},
                "levels": [64, 128],
                "models": ["GPT-4o"],
                "prompts": ["honest", "dscp"],
                "dscp_context": "per-video",
                "judge": "rules",
                "results": str(tmp_path / "results"),
            }
        )
    )
    plan = load_plan([config])
    est = estimate(plan)
    at_64, at_128 = row(est, "GPT-4o", 64), row(est, "GPT-4o", 128)
    assert (at_64.items, at_128.items) == (2 * 3, 2 * 2)  # each item under both prompts
    assert (at_64.requests, at_128.requests) == (2 * 3 + 2, 2 * 2 + 1)  # DSCP's context step: once per video
    # tokens by hand: every frame 597 x 336 (16:9 within 200,704 pixels), 85 + 170 x 2 tiles; the text at 4 characters
    # a token: the rendered prompt (DSCP's question step with an empty context) and the frames' labels "<t seconds>" at
    # the level's 1 FPS times of each video's length
    per_frame = 85 + 170 * 2
    by_id = {inst.instance_id: inst for inst in table}

    def labels(level: int, video_id: str) -> int:
        duration = next(inst.duration_s for inst in table if inst.video_id == video_id)
        return math.ceil(len("".join(f"<{t:.1f} seconds>" for t in level_timestamps(level, duration))) / 4)

    def text(level: int, ids: list[str]) -> int:
        total = 0
        for prompt in ("honest", "dscp"):
            for instance_id in ids:
                inst = by_id[instance_id]
                rendered = get_prompt(prompt).render(inst.question, context="" if prompt == "dscp" else None)
                total += math.ceil(len(rendered) / 4) + labels(level, inst.video_id)
        # DSCP's context step, once per video: its own text and the video's frame labels
        step = math.ceil(len(get_prompt("dscp").context_template) / 4)
        return total + sum(step + labels(level, video) for video in {by_id[i].video_id for i in ids})

    # the question requests of both prompts, and DSCP's context requests, each with all the level's frames
    assert at_64.image_tokens == (2 * 3 + 2) * 64 * per_frame and at_64.text_tokens == text(64, ["q1", "q2", "q3"])
    assert at_128.image_tokens == (2 * 2 + 1) * 128 * per_frame and at_128.text_tokens == text(128, ["q2", "q3"])
    # frames: v1 and v2 at 64, v2 at 128; none extracted, so the bytes per frame are the sample photograph's
    assert [(f.level, f.videos_due, f.frames_due) for f in est.frames] == [(64, 2, 128), (128, 1, 128)]
    assert est.frame_bytes_basis.startswith("estimated") and est.frames[0].bytes_due == 128 * est.frame_bytes
    assert render(est, plan)[0] == f"Items: the instances table {plan.res('instances.parquet')}"
    # DSCP's step 1 asked per question (the default, the CVRR-ES authors' way): a context request per item
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**settings, "dscp_context": "per-question"}))
    again = estimate(load_plan([config]))
    assert (row(again, "GPT-4o", 64).requests, row(again, "GPT-4o", 128).requests) == (2 * 3 + 3, 2 * 2 + 2)
    step_64 = 3 * math.ceil(len(get_prompt("dscp").context_template) / 4) + sum(labels(64, by_id[i].video_id) for i in ("q1", "q2", "q3"))
    assert (
        row(again, "GPT-4o", 64).text_tokens
        == text(64, ["q1", "q2", "q3"])
        - sum(
            math.ceil(len(get_prompt("dscp").context_template) / 4) + labels(64, video)
            for video in {by_id[i].video_id for i in ("q1", "q2", "q3")}
        )
        + step_64
    )


def test_extracted_frames_give_their_own_size_and_bytes(tmp_path, monkeypatch, video_factory):
    """A video's level extracted: its frames' size (128 x 72) is counted, not the assumed 16:9 frame, and the bytes per
    frame are the extracted frames' own."""
    monkeypatch.chdir(REPO)
    video = video_factory(70.0)  # 128 x 72
    results = tmp_path / "results"
    extract(video, results / "frames" / "v1" / "64", levels=[64], level_folder=True)
    write_instances([instance("q1", "v1", 70.0, [64], "What colour is the square?")], results / "instances.parquet")
    config = tmp_path / "config.yaml"
    settings = {"source": {"name": "synthetic", "settings": {"seed": 0}}, "levels": [64], "models": ["GPT-4o"]}
    config.write_text(yaml.safe_dump({**settings, "prompts": ["honest"], "judge": "rules", "results": str(results)}))
    est = estimate(load_plan([config]))
    # 128 x 72 is within every cap and under 768 on its short side: one 512 px tile, 85 + 170 a frame
    assert row(est, "GPT-4o", 64).image_tokens == 64 * (85 + 170)
    (level,) = est.frames
    assert (level.videos_due, level.videos_done) == (0, 1)
    jpegs = sorted((results / "frames" / "v1" / "64").glob("*.jpg"))
    assert level.bytes_done == sum(path.stat().st_size for path in jpegs)
    assert est.frame_bytes == level.bytes_done / len(jpegs) and est.frame_bytes_basis.startswith("measured")


def test_the_demo_before_its_table_counts_the_items_its_source_plans(tmp_path, monkeypatch):
    """No instances table yet, but the synthetic demo's settings tell its items (Plan.preview): each (model, level)
    is counted from them, every item due (no frame is extracted), one request per item and prompt."""
    from virtuebench.inference import items_for_level

    monkeypatch.chdir(REPO)
    plan = load_plan([REPO / "config" / "config.yaml"], results=str(tmp_path / "demo"))
    planned = plan.preview()
    assert planned, "the demo's source plans its items"
    est = estimate(plan)
    assert f"the {len(planned):,} items the source's settings plan" in est.counts_basis
    prompts = len(plan.config["prompts"])
    for model in plan.config["models"]:
        for level in plan.config["levels"]:
            found = row(est, model, level)
            assert found.items == found.requests == prompts * len(items_for_level(planned, level)), (model, level)
    assert not (tmp_path / "demo").exists(), "the estimate wrote into the results folder"
