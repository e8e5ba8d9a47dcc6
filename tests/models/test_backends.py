import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.data import REPO, build_bench, kill_after_progress
from helpers.fake_openai import FakeOpenAI
from PIL import Image

from virtuebench.frames import Manifest
from virtuebench.instances import read_instances
from virtuebench.models import BACKENDS, backend_class
from virtuebench.models.base import Request
from virtuebench.models.frames_io import fit_pixels
from virtuebench.models.openai_api import OpenAISettings, build_messages
from virtuebench.models.vllm_engine import VllmSettings, build_inputs, sampling_arguments

TESTS = Path(__file__).resolve().parents[1]
REGISTRY = yaml.safe_load((REPO / "config" / "models.yaml").read_text())


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 2, 140, [64])


def _request(bench, n=3):
    frames = sorted((bench / "frames" / "syn00" / "64").glob("*.jpg"))[:n]
    return Request(
        "syn00_q0", "What colour is the star?", "Prompt text\\nQuestion: What colour is the star?", frames, [0.5, 1.5, 2.5][:n], 64
    )


def test_registry_lists_the_papers_25_models():
    # Besides the 25: the three reference backends, and the curation model that drafts the per-level answers.
    paper = [name for name in REGISTRY if name not in ("refuse", "guess", "oracle", "Gemini-2.5-Pro")]
    assert len(paper) == 25
    assert {REGISTRY[m]["max_level"] for m in ("LLaVA-Video-7B", "LLaVA-Video-72B")} == {128}
    assert {REGISTRY[m]["max_level"] for m in paper if m.startswith("InternVL3.5") or m.startswith("GPT")} == {256}
    for name, entry in REGISTRY.items():
        assert entry["backend"] in BACKENDS, name
        assert entry["verified"] and not entry["verified"].startswith("unverified"), f"{name}: no verified route"
        if entry.get("env"):
            assert (REPO / entry["env"]).is_file(), f"{name}: env {entry['env']} missing"


def test_every_registry_entry_gives_its_backend_settings_it_accepts():
    """What inference builds each backend with (its spec's settings, both halves; the hub id, revision and family
    are the spec's own), read by the backend's own settings type: an unknown or missing key fails here, not on the cluster."""
    from virtuebench.config import model_spec
    from virtuebench.models import backend_class

    checked = 0
    for name, entry in REGISTRY.items():
        spec = model_spec(name, entry, REPO / "config")
        settings_type = backend_class(spec.backend).settings_type
        if settings_type is not None:
            settings_type.from_dict(spec.settings)
            assert spec.settings == entry.get("settings", {}) and spec.hub_id == entry.get("hub_id")
            checked += 1
    assert checked == 26  # the 25 paper models and the curation model


def test_every_backend_setting_has_a_rerun_class_and_a_schema():
    """Each registered backend's settings dataclass classifies every setting (support.settings.setting)."""
    from dataclasses import fields

    from virtuebench.models import BACKENDS, backend_class
    from virtuebench.support.settings import RERUN_CLASSES

    for name in BACKENDS:
        settings_type = backend_class(name).settings_type
        for f in fields(settings_type) if settings_type else ():
            assert f.metadata.get("rerun") in RERUN_CLASSES and f.metadata.get("schema"), f"{name}: {f.name}"


def test_pixel_budget():
    assert fit_pixels(640, 360, None) == (640, 360)
    assert fit_pixels(640, 360, 640 * 360) == (640, 360)
    width, height = fit_pixels(1920, 1080, 448 * 448)
    assert width * height <= 448 * 448 and abs(width / height - 16 / 9) < 0.01


def test_openai_messages_hold_the_frames_in_order_then_the_prompt(bench):
    settings = OpenAISettings.from_dict({"model": "m", "max_pixels": 64 * 36, "timestamps": True, "detail": "low"})
    (message,) = build_messages(_request(bench), settings)
    parts = message["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"] * 3 + ["text"]
    assert parts[0]["text"] == "Frame at 0:00" and parts[-1]["text"].endswith("What colour is the star?")
    image = Image.open(io.BytesIO(base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])))
    assert image.width * image.height <= 64 * 36 and parts[1]["image_url"]["detail"] == "low"


def test_vllm_request_building_needs_no_vllm(bench):
    pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")
    from virtuebench.models.families import get_family

    class Processor:
        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            (turn,) = messages
            assert [part["type"] for part in turn["content"]] == ["video", "text"] and not tokenize and add_generation_prompt
            return "<|vision_start|><|video_pad|><|vision_end|>" + turn["content"][1]["text"] + "<|assistant|>"

    tiny = {"max_pixels": 28 * 28 * 16, "min_pixels": 28 * 28 * 4}
    settings = VllmSettings.from_dict({"max_new_tokens": 77, "system_suffix": "/think", **tiny})
    request = _api_request(bench)
    family = get_family("qwen2.5-vl")
    inputs = build_inputs(request, Processor(), settings, family)
    assert inputs["prompt"].startswith("<|vision_start|><|video_pad|>") and inputs["prompt"].endswith("/think<|assistant|>")
    video, metadata = inputs["multi_modal_data"]["video"]
    # The frames sized as qwen-vl-utils sizes them (tests/models/test_qwen_vl_utils.py), channels last for vLLM.
    stored = Image.open(request.frames[0])
    height, width = family.video_settings(**tiny).frame_size(stored.height, stored.width, 64)
    assert video.dtype == np.uint8 and video.shape == (64, height, width, 3)
    # The frames' true times travel with them: index / fps is each manifest timestamp.
    assert [i / metadata["fps"] for i in metadata["frames_indices"]] == request.timestamps
    assert metadata["do_sample_frames"] is False
    assert inputs["mm_processor_kwargs"] == {"do_sample_frames": False, "do_resize": False, "cap_pixels_per_frame": False}
    assert sampling_arguments(settings) == {"temperature": 0.0, "max_tokens": 77}
    with pytest.raises(ValueError, match="unknown setting"):
        VllmSettings.from_dict({"hub_id": "x"})  # the spec's, not a setting
    with pytest.raises(ValueError, match="unknown setting"):
        VllmSettings.from_dict({"beam_width": 4})


def test_heavy_backends_are_imported_only_when_used():
    # In a fresh interpreter: other tests in this session may have imported torch themselves.
    code = (
        "import sys, virtuebench.models, virtuebench.inference, virtuebench.judge.run; "
        "from virtuebench.models import backend_class; backend_class('openai'); "
        "print(sorted(m for m in ('torch', 'vllm', 'transformers') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
    assert backend_class("openai").__name__ == "OpenAIBackend"


def _inference(bench, out, server, env, extra=None):
    config = {
        "backend": "openai",
        "settings": {
            "model": "fake-vlm",
            "base_url": server.base_url,
            "api_key_env": "VB_MODEL_KEY",
            "max_concurrency": 2,
            "max_retries": 2,
            "timeout_s": 2.0,  # far above a local reply under any load; the slow fault waits for the retry
            **(extra or {}),
        },
    }
    command = [
        sys.executable,
        "-m",
        "virtuebench.inference",
        "--instances",
        str(bench / "instances.parquet"),
        "--frames-dir",
        str(bench / "frames"),
        "--model",
        "fake",
        "--model-config",
        json.dumps(config),
        "--prompt",
        "honest",
        "--level",
        "64",
        "--out",
        str(out),
    ]
    return command


def test_openai_backend_with_faults_and_a_restart(bench, tmp_path):
    secret = "sk-model-SECRET-42"
    # Each run sends its own key (read from the environment; in no record, fingerprint or store key), so the server
    # tells the killed run's requests from the restarts' by who sent them, not by when they arrived: a request the
    # killed run sent just before the kill may be counted after it, and a reply that outlasts the client's timeout
    # on a loaded machine is asked again within its own run. Neither is an item asked again after the restart.
    runs = ("killed", "first", "second")
    keys = {run: f"{secret}-{run}" for run in runs}
    envs = {run: {**os.environ, "VB_MODEL_KEY": keys[run]} for run in runs}
    out = tmp_path / "responses.jsonl"
    # 429 and 500 are retried by the client; a slow reply times out and is retried; a malformed body
    # and a reply without choices fail the item, which is recorded and retried on the next run.
    faults = {2: "429", 3: "500", 5: "slow", 7: "malformed", 8: "nochoices"}
    with FakeOpenAI(backend_faults=faults, backend_delay_s=0.2) as server:
        command = _inference(bench, out, server, envs["killed"])
        partial = Path(f"{out}.partial")
        # Killed once 3 items are written, wherever the run is then; had it ended first (requests 7 and 8 fail two
        # items, so it ends with 1 and keeps its progress file), the restarts are checked the same way.
        kill_after_progress(command, envs["killed"], partial, lines=3)
        kept = {record["instance_id"]: record for record in map(json.loads, partial.read_text().splitlines()) if record["error"] is None}
        first = subprocess.run(command, env=envs["first"], capture_output=True, text=True)
        second = subprocess.run(command, env=envs["second"], capture_output=True, text=True)
    instances = [i for i in read_instances(bench / "instances.parquet") if 64 in i.answers]
    # Items are told apart by their frames as well as their question (two demo instances share one question).
    items = _items(bench, instances, json.loads(command[command.index("--model-config") + 1])["settings"])
    assert kept and len(set(items.values())) == len(instances)

    def asked(instance_id: str, run: str) -> int:
        return server.asked_by[(items[instance_id], f"Bearer {keys[run]}")]

    # Requests 7 (malformed) and 8 (no choices) fail their items: the first restart ends with 1 where it was sent
    # either, and the failed items are asked again by the second, which ends with 0.
    failed_in_first = {server.fault_items[n] for n in (7, 8) if server.fault_callers.get(n) == f"Bearer {keys['first']}"}
    assert first.returncode == (1 if failed_in_first else 0), (server.fault_callers, first.stderr[-2000:])
    assert ("backend errors" in first.stderr) == bool(failed_in_first)
    assert second.returncode == 0, second.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["instance_id"] for r in records) == sorted(i.instance_id for i in instances), "each item exactly once"
    assert all(r["error"] is None and r["response"] == "I saw 64 frames." for r in records)
    assert all(r["usage"]["prompt_tokens"] == 6400 for r in records)
    # The model that answered, as the reply names it (the fake server's snapshot), not the config's `model`.
    assert {r["answered_by"] for r in records} == {"fake-vlm-snapshot"}
    # No item that had finished before the kill was asked again after it, and its record is the one the killed run
    # wrote; every other item was asked by a restart.
    for instance_id in items:
        after = asked(instance_id, "first") + asked(instance_id, "second")
        if instance_id in kept:
            assert after == 0, f"{instance_id} finished before the kill and was asked {after} more times after it"
        else:
            assert after >= 1, f"{instance_id} was not finished before the kill, yet no restart asked it"
    assert {r["instance_id"]: r for r in records if r["instance_id"] in kept} == kept
    everything = out.read_text() + first.stderr + second.stderr
    assert secret not in everything  # nor, then, any run's key


@pytest.mark.parametrize("model", ["Gemini-2.5-Flash", "Gemini-2.5-Pro"])
def test_gemini_thinking_leaves_room_for_the_answer(bench, model, monkeypatch):
    """Gemini 2.5 thinks by default, up to its largest budget, counted against the token limit (the fake spends the
    whole budget): the registry's limit still leaves the answer; the old ones (Flash 4,096, Pro 8,192) came back empty
    and were recorded as truncated."""
    from virtuebench.models.openai_api import OpenAIBackend

    settings = dict(REGISTRY[model]["settings"])
    monkeypatch.setenv(settings["api_key_env"], "sk-test")
    limit_key = "max_tokens" if "max_tokens" in settings else "max_completion_tokens"
    with FakeOpenAI() as server:
        reply = OpenAIBackend({**settings, "base_url": server.base_url, "max_retries": 0}).answer(_api_request(bench))
        old = OpenAIBackend(
            {
                **settings,
                limit_key: {"Gemini-2.5-Flash": 4096, "Gemini-2.5-Pro": 8192}[model],
                "base_url": server.base_url,
                "max_retries": 0,
            }
        )
        cut = old.answer(_api_request(bench))
    assert reply.text == "I saw 64 frames." and not reply.truncated
    assert reply.usage["completion_tokens"] == FakeOpenAI.GEMINI_MAX_BUDGET[settings["model"]] + 5 <= settings[limit_key]
    assert cut.truncated and not cut.text


def test_openai_backend_needs_its_key(bench, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VB_MODEL_KEY"}
    with FakeOpenAI() as server:
        run = subprocess.run(_inference(bench, tmp_path / "r.jsonl", server, env), env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "VB_MODEL_KEY" in run.stderr and server.backend_requests == 0


def _items(bench, instances, settings) -> dict[str, str]:
    """Each instance's item as FakeOpenAI counts it: its question and the frames the openai backend sends for it."""
    options = OpenAISettings.from_dict({key: value for key, value in settings.items() if key in OpenAISettings.__dataclass_fields__})
    items = {}
    for inst in instances:
        folder = bench / "frames" / inst.video_id
        manifest = Manifest.read(folder)
        request = Request(
            inst.instance_id,
            inst.question,
            f"Question: {inst.question}",
            manifest.frame_paths(folder, 64),
            manifest.levels["64"].timestamps,
            64,
            manifest.duration_s,
        )
        (message,) = build_messages(request, options)
        items[inst.instance_id] = FakeOpenAI.item(inst.question, message["content"])
    return items


def _api_request(bench, level=64):
    manifest = Manifest.read(bench / "frames" / "syn00")
    frames = manifest.frame_paths(bench / "frames" / "syn00", level)
    return Request(
        "syn00_q0",
        "What colour is the star?",
        "Question: What colour is the star?",
        frames,
        manifest.levels[str(level)].timestamps,
        level,
        manifest.duration_s,
    )


@pytest.mark.parametrize(
    ("model", "time_labels"),
    [
        ("GPT-4o", "seconds"),
        ("GPT-4o", "clock"),
        ("GPT-5-chat", None),
        ("GPT-5", None),
        ("Gemini-2.5-Flash", "clock"),
        ("Gemini-2.5-Pro", None),
    ],
)
def test_api_registry_entries_send_what_the_api_accepts(bench, model, time_labels, monkeypatch):
    from virtuebench.models.openai_api import OpenAIBackend
    from virtuebench.models.spec import resolve_choices

    # model_choices.api_time_labels (None: the entry's default, or no such choice: the curation's Gemini-2.5-Pro)
    entry, _ = resolve_choices(REGISTRY[model], {"api_time_labels": time_labels} if time_labels else {})
    settings = dict(entry["settings"])
    key_env = settings["api_key_env"]
    monkeypatch.setenv(key_env, "sk-test")
    request = _api_request(bench)
    with FakeOpenAI() as server:
        backend = OpenAIBackend({**settings, "base_url": server.base_url, "max_retries": 0})
        reply = backend.answer(request)
        (body,) = server.bodies
        (labels,) = server.labels_seen
    assert reply.text == "I saw 64 frames."
    assert reply.model == settings["model"] + "-snapshot", "the model the reply names (answered_by), not the one asked for"
    # Every frame's time reaches the model, in the form the registry gives (docs/models.md).
    assert len(labels) == 64
    if time_labels == "clock":
        minutes, seconds = divmod(int(request.timestamps[-1]), 60)
        assert labels[0] == "<0:00>" and labels[-1] == f"<{minutes}:{seconds:02d}>" and minutes >= 1
    elif settings.get("timestamp_format") == "<{seconds:.1f} seconds>":
        assert model != "Gemini-2.5-Pro"
        assert labels == [f"<{t:.1f} seconds>" for t in request.timestamps]
    else:
        assert (
            labels[0] == "Frame at 0:00"
            and labels[-1] == f"Frame at {int(request.timestamps[-1]) // 60}:{int(request.timestamps[-1]) % 60:02d}"
        )
    if model == "GPT-5":
        assert "temperature" not in body and "max_tokens" not in body and body["max_completion_tokens"] == 8192


def test_a_reasoning_model_rejects_temperature_zero_as_the_api_does(bench, monkeypatch):
    from virtuebench.models.openai_api import OpenAIBackend

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI() as server:
        for extra, param in (({"temperature": 0.0}, "temperature"), ({"temperature": None, "max_tokens": 100}, "max_tokens")):
            backend = OpenAIBackend({"model": "gpt-5-2025-08-07", "base_url": server.base_url, "max_retries": 0, **extra})
            with pytest.raises(RuntimeError, match=f"400.*'{param}'"):
                backend.answer(_api_request(bench))


@pytest.mark.parametrize(("fault", "text"), [("length", "The car is probably"), ("length-null", ""), (None, "I saw 64 frames.")])
def test_an_api_reply_cut_off_at_the_token_limit_is_marked_truncated(bench, monkeypatch, fault, text):
    from virtuebench.models.openai_api import OpenAIBackend

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(backend_faults={1: fault} if fault else {}) as server:
        backend = OpenAIBackend({"model": "gpt-5-2025-08-07", "base_url": server.base_url, "max_retries": 0, "temperature": None})
        reply = backend.answer(_api_request(bench))
    assert reply.text == text
    assert reply.finish_reason == ("length" if fault else "stop")
    assert reply.truncated is (fault is not None)


def test_http_errors_are_named_in_the_job_log(bench, tmp_path):
    """A 500 the client retries past, and one it gives up on: the job's stderr (logs/... under Snakemake) names the
    status, the URL, the attempt and the (redacted) body, and the final failure of the item; not only the .partial
    file. The endpoint echoes the key in its error bodies: it appears in no line."""
    secret = "sk-model-SECRET-42abcdef"
    env = {**os.environ, "VB_MODEL_KEY": secret}
    # One request at a time: requests 1 (item 1) and 3, 4, 5 (item 2's three attempts) fail.
    with FakeOpenAI(backend_faults={1: "500", 3: "500", 4: "500", 5: "500"}, echo_auth=True) as server:
        out = tmp_path / "responses.jsonl"
        # A 60 s timeout: the attempts counted are the faults', never a local reply retried for being slow under load.
        settings = {"max_concurrency": 1, "timeout_s": 60.0}
        run = subprocess.run(_inference(bench, out, server, env, settings), env=env, capture_output=True, text=True)
        url = f"{server.base_url}/chat/completions"
    assert run.returncode == 1, run.stderr[-2000:]  # one item failed: the job fails, the next run asks for it again
    attempts = [line for line in run.stderr.splitlines() if line.startswith("warning: fake-vlm: HTTP 500")]
    assert [line.split(": {")[0] for line in attempts] == [
        f"warning: fake-vlm: HTTP 500 from {url} (attempt {n} of 3)" for n in (1, 1, 2, 3)
    ], run.stderr[-3000:]
    assert all('"message": "boom [request headers: Authorization: Bearer [REDACTED]' in line for line in attempts)
    finals = [line for line in run.stderr.splitlines() if line.startswith("error: fake-vlm: request failed")]
    assert len(finals) == 1 and finals[0].startswith(
        "error: fake-vlm: request failed after 3 attempts, giving up on it: InternalServerError"
    )
    partial = [json.loads(line) for line in Path(f"{out}.partial").read_text().splitlines()]
    assert sum(r["error"] is not None for r in partial) == 1 and sum(r["error"] is None for r in partial) == len(partial) - 1
    assert secret not in run.stderr + run.stdout + Path(f"{out}.partial").read_text()


def test_vllm_seeds_run_k_of_a_sampled_model_with_its_seed_plus_k():
    """A sampled model's run k (Request.sample) samples with the registry's seed + k; without a seed none is sent."""
    seeded = VllmSettings.from_dict({"temperature": 0.7, "seed": 3407})
    assert sampling_arguments(seeded)["seed"] == 3407 and sampling_arguments(seeded, 2)["seed"] == 3409
    assert "seed" not in sampling_arguments(VllmSettings.from_dict({"temperature": 0.7}), 2)
