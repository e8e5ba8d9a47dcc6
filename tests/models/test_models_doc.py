"""docs/models.md, "Adding your own model": its recipes, run as written. Each block marked `<!-- recipe: NAME FILE -->`
on the page is read from it and written to FILE in a project folder, unchanged but for the endpoint recipe's port
where that port is taken on this machine.

- endpoint: a copy of the workflow (a clone as the user has it) after a finished run of the demo; then the user's
  my_models.yaml and my_config.yaml from the page, and the page's commands: the dry run plans my-model's inference and
  judging and the report, nothing the demo finished, and the run asks a fake OpenAI-compatible server
  (tests/helpers/fake_openai.py) standing in for the page's vLLM server. Every command gets one more configuration
  file after the user's, test_size.yaml: the demo's benchmark made small (two short videos, one level, one prompt).
- checkpoint: the user's config passes check_config with the user's registry; the entry is its family's entry but for
  the weights; and (with the hf extra) a tiny random Qwen2.5-VL saved in the folder the recipe names loads from there and
  answers through the family's code. Nothing reaches a hub or the internet.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO
from helpers.fake_openai import FakeOpenAI
from helpers.workflow import REPORT_JOBS, environment, scheduled, workflow_copy

from virtuebench.config import check_config, model_spec

CONFIG_DIR = REPO / "config"
MARKER = re.compile(r"<!-- recipe: (\S+) (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)
#: An entry's keys that say which weights it runs and what is known of them: all a new checkpoint changes.
WEIGHTS = {"hub_id", "revision", "provenance", "verified", "description"}
#: What test_size.yaml lays over the user's configuration: the demo benchmark small enough for a test.
TEST_SIZE = {
    "source": {"settings": {"seed": 5, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}},
    "levels": [64],  # both videos reach 64 frames
    "prompts": ["honest"],
}


def recipe(name: str, file: str) -> str:
    blocks = {(found, target): text for found, target, text in MARKER.findall((REPO / "docs" / "models.md").read_text())}
    return blocks[(name, file)]


def commands(block: str) -> list[list[str]]:
    """A shell block, command by command, comments dropped."""
    lines = [line.split("#")[0].strip() for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line]


def test_the_page_marks_every_recipe_block():
    found = {(name, file) for name, file, _ in MARKER.findall((REPO / "docs" / "models.md").read_text())}
    assert found == {
        ("endpoint", "server"),
        ("endpoint", "my_models.yaml"),
        ("endpoint", "my_config.yaml"),
        ("endpoint", "command"),
        ("checkpoint", "my_models.yaml"),
        ("checkpoint", "my_config.yaml"),
    }
    for name in ("endpoint", "checkpoint"):
        config = yaml.safe_load(recipe(name, "my_config.yaml"))
        assert config["model_registry"] == ["config/models.yaml", "my_models.yaml"]
        assert set(yaml.safe_load(recipe(name, "my_models.yaml"))) <= set(config["models"])


def test_the_endpoint_recipe_asks_the_server_it_starts():
    (server,) = commands(recipe("endpoint", "server"))
    entry = next(iter(yaml.safe_load(recipe("endpoint", "my_models.yaml")).values()))
    assert server[:2] == ["vllm", "serve"] and server[2] == entry["settings"]["model"]
    assert entry["settings"]["base_url"] == f"http://localhost:{server[server.index('--port') + 1]}/v1"
    limit = json.loads(server[server.index("--limit-mm-per-prompt") + 1])
    assert limit["image"] >= entry["max_level"]  # one image per frame: the server must take the highest level's


# --- The endpoint recipe, through Snakemake ----------------------------------------------------------------------


def run(project: Path, argv: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    """A command of the page in the project folder, `snakemake` as the test's interpreter's module, with test_size.yaml
    after the user's configuration file (Snakemake merges the files given in order)."""
    assert argv[0] == "snakemake" and "--configfile" in argv, argv
    argv = list(argv)
    argv.insert(argv.index("--configfile") + 2, "test_size.yaml")
    env = {**environment(), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *argv[1:]], cwd=project, capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A clone as a user has it, after one finished run of the demo (config/config.yaml, made small by test_size.yaml)."""
    project = tmp_path_factory.mktemp("clone") / "virtuebench"
    workflow_copy(project)
    (project / "test_size.yaml").write_text(yaml.safe_dump(TEST_SIZE))
    result = run(project, ["snakemake", "--configfile", "config/config.yaml"])
    assert result.returncode == 0, result.stderr[-3000:]
    return project


@pytest.fixture(scope="module")
def dry_run(project):
    """The user's files written as the page gives them, and the page's first command (the dry run)."""
    (project / "my_models.yaml").write_text(recipe("endpoint", "my_models.yaml"))
    (project / "my_config.yaml").write_text(recipe("endpoint", "my_config.yaml"))
    dry, _ = commands(recipe("endpoint", "command"))
    assert "-n" in dry
    return scheduled(run(project, dry))


@pytest.fixture(scope="module")
def user_run(project, dry_run):
    """The page's second command, the run, with a fake server on the recipe's port (another where it is taken)."""
    _, command = commands(recipe("endpoint", "command"))
    entry = yaml.safe_load(recipe("endpoint", "my_models.yaml"))["my-model"]
    port = int(re.search(r":(\d+)/", entry["settings"]["base_url"]).group(1))
    try:
        server = FakeOpenAI(port=port)
    except OSError:  # the port is taken here: the recipe's base_url with the fake server's port, nothing else changed
        server = FakeOpenAI()
        taken_port, free_port = f":{port}/", f":{server.httpd.server_address[1]}/"
        (project / "my_models.yaml").write_text(recipe("endpoint", "my_models.yaml").replace(taken_port, free_port))
    with server:
        result = run(project, command)
    assert result.returncode == 0, result.stderr[-3000:]
    return project, server


@pytest.mark.workflow
def test_the_dry_run_plans_only_the_users_models_jobs_and_the_report(dry_run):
    """my-model states a pixel cap (max_pixels) the demo's reference rows do not: the stored frames' size does not
    depend on the configured models (frames.max_pixels), so no frame is extracted again and no other model reruns."""
    print(f"\nuser registry added: {dict(dry_run)}")
    assert "extract_frames" not in dry_run
    assert dry_run == Counter({"run_inference": 1, "model:my-model": 1, "judge_responses": 1, **REPORT_JOBS})


@pytest.mark.workflow
def test_the_run_asks_the_users_server_and_reports_the_model(user_run):
    project, server = user_run
    responses = [json.loads(line) for line in (project / "results/responses/my-model/honest/64.jsonl").read_text().splitlines()]
    judgments = [json.loads(line) for line in (project / "results/judgments/rules/my-model/honest/64.jsonl").read_text().splitlines()]
    assert responses and server.backend_requests == len(responses) == len(judgments)
    assert {record["response"] for record in responses} == {"I saw 64 frames."}
    assert {body["model"] for body in server.bodies} == {"Qwen/Qwen2.5-VL-7B-Instruct"}
    assert server.authorizations == {"Bearer EMPTY"}  # api_key_env: null, no key asked for
    assert "my-model" in (project / "results" / "scores.csv").read_text()
    assert "my-model" in (project / "results" / "table2.tex").read_text()


# --- The checkpoint recipe ------------------------------------------------------------------------------------------


@pytest.fixture
def checkpoint(tmp_path):
    """The recipe's my_models.yaml in a working directory, its configuration, and its entry."""
    (tmp_path / "my_models.yaml").write_text(recipe("checkpoint", "my_models.yaml"))
    config = yaml.safe_load(recipe("checkpoint", "my_config.yaml"))
    ((name, entry),) = yaml.safe_load(recipe("checkpoint", "my_models.yaml")).items()
    return tmp_path, config, name, entry


def test_the_checkpoint_recipe_passes_the_checks(checkpoint):
    from virtuebench.models.vllm_engine import VllmSettings

    workdir, config, name, entry = checkpoint
    checked = check_config(copy.deepcopy(config), CONFIG_DIR, base_dir=workdir, environ={})
    assert checked.models[name] == entry and list(checked.models) == config["models"]
    assert [w for w in checked.warnings if w.startswith(f"{name}:")] == [
        f"{name}: weights unpinned (revision: null): each record names the commit it was answered with (weights_commit)"
    ]
    VllmSettings.from_dict(model_spec(name, entry, CONFIG_DIR).settings)  # every setting is one the vllm backend takes


def test_the_checkpoint_is_its_familys_entry_but_for_the_weights(checkpoint):
    _, _, _, entry = checkpoint
    family_model = re.search(r"^# (\S+)'s entry \(config/models.yaml\)", recipe("checkpoint", "my_models.yaml"), re.MULTILINE).group(1)
    family_entry = yaml.safe_load((CONFIG_DIR / "models.yaml").read_text())[family_model]
    # `choices` aside: the paper's open decisions about the paper's model, which the recipe says to leave out.
    copied = {k: v for k, v in family_entry.items() if k not in WEIGHTS and k != "choices"}
    assert {k: v for k, v in entry.items() if k not in WEIGHTS} == copied
    assert entry["hub_id"] != family_entry["hub_id"]
    # What reaches the jobs: the same tracked settings but the weights' hub id and revision, the same scheduling.
    spec, family_spec = (model_spec("m", e, CONFIG_DIR) for e in (entry, family_entry))
    tracked, family_tracked = spec.answers, family_spec.answers
    assert {k: v for k, v in tracked.items() if k not in ("hub_id", "revision")} == {
        k: v for k, v in family_tracked.items() if k not in ("hub_id", "revision")
    }
    assert spec.run == family_spec.run


def test_the_checkpoint_loads_from_the_folder_the_recipe_names(checkpoint, monkeypatch):
    """A tiny random Qwen2.5-VL (tests/helpers/tiny_hf.py) saved where the recipe's hub_id points, loaded from there with
    the recipe's revision, and asked one question through the family's code (the transformers backend: the vLLM route
    needs its own environment, and tests/models/test_vllm_route.py proves the two give the same inputs). The backend is
    handed the loaded model because its own loading asks for device_map, which needs accelerate (envs/transformers.yaml
    has it, the hf extra does not)."""
    pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
    pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")
    pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")
    from dataclasses import fields

    from helpers.tiny_hf import tiny_qwen2_5_vl
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from virtuebench.levels import level_timestamps
    from virtuebench.models.base import Request
    from virtuebench.models.hf import TransformersBackend, TransformersSettings

    workdir, _, _, entry = checkpoint
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(workdir)  # a relative hub_id is read from where snakemake runs
    model, processor = tiny_qwen2_5_vl()
    model.save_pretrained(entry["hub_id"])
    processor.save_pretrained(entry["hub_id"])
    loaded = AutoModelForImageTextToText.from_pretrained(entry["hub_id"], revision=entry["revision"])
    loaded_processor = AutoProcessor.from_pretrained(entry["hub_id"], revision=entry["revision"])
    known = {f.name for f in fields(TransformersSettings)}
    spec = model_spec("checkpoint", entry, CONFIG_DIR)
    settings = {k: v for k, v in spec.settings.items() if k in known}  # vLLM's temperature, max_model_len left out
    assert spec.family == "qwen2.5-vl" and settings["max_pixels"] == 200704 == spec.frame_pixels
    backend = TransformersBackend({**settings, "max_new_tokens": 4}, spec, model=loaded, processor=loaded_processor)
    frames = []
    for i, colour in enumerate(("red", "green", "blue", "white")):
        frames.append(workdir / f"{i}.jpg")
        Image.new("RGB", (96, 54), colour).save(frames[-1])
    prompt = "Answer from the frames only.\nQuestion: What colour is the last frame?"
    reply = backend.answer(Request("item", "What colour is the last frame?", prompt, frames, level_timestamps(4, 40.0), 4, 40.0))
    assert isinstance(reply.text, str) and 1 <= reply.usage["completion_tokens"] <= 4
    assert reply.usage["video_grid_thw"][0] == 2  # 4 frames, 2 per temporal patch: the family's video input
    assert spec.commit().startswith("local:")  # what every response record names as its weights
