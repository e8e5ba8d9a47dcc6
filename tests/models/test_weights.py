"""Weights tied to every number (models/weights.py): the commit a backend loaded is in every response record and the
job's summary; answers made with other weights are asked again on resume. And replies cut off at the token limit or
inside an unclosed thinking block: recorded as truncated, judged as no answer, listed in invalid_items.csv."""

import json
from pathlib import Path

import pytest
from helpers.data import build_bench

from virtuebench.inference import items_for_level, run_inference
from virtuebench.instances import read_instances
from virtuebench.judge import get_judge
from virtuebench.judge.run import TRUNCATED_REASON, judge_responses
from virtuebench.metrics import write_invalid
from virtuebench.models.weights import folder_fingerprint, resolve_commit, snapshot_commit
from virtuebench.records import Judgment, load_records

SHA_A, SHA_B = "a" * 40, "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 2, 140, [64])


def _lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def hub_cache(root: Path, repo: str, commits: dict[str, str]) -> Path:
    """A Hugging Face cache with `repo` at the given refs -> commits, each snapshot holding a config.json."""
    folder = root / ("models--" + repo.replace("/", "--"))
    for ref, commit in commits.items():
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / ref).write_text(commit)
        (folder / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (folder / "snapshots" / commit / "config.json").write_text("{}")
    return folder


def test_a_commit_is_resolved_from_a_snapshot_folder_the_hub_cache_or_a_pin(tmp_path, monkeypatch):
    import huggingface_hub.constants

    cache = tmp_path / "hub"
    repo = hub_cache(cache, "org/model", {"main": SHA_A, "v1": SHA_B})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    assert resolve_commit("org/model") == SHA_A  # the revision main resolves through refs/main
    assert resolve_commit("org/model", "v1") == SHA_B
    assert resolve_commit("org/model", SHA_B) == SHA_B  # a pinned commit is what from_pretrained loads
    assert snapshot_commit(repo / "snapshots" / SHA_A) == SHA_A == resolve_commit(str(repo / "snapshots" / SHA_A))
    # a backend that downloaded a snapshot itself (LLaVA-NeXT) names it: that folder is read, not the cache
    assert resolve_commit("org/model", "main", snapshot=repo / "snapshots" / SHA_B) == SHA_B
    assert resolve_commit(None, snapshot=repo / "snapshots" / SHA_B) is None  # no hub id: a model without weights
    assert resolve_commit("org/not-downloaded") is None and resolve_commit(None) is None
    plain = tmp_path / "converted"
    plain.mkdir()
    (plain / "config.json").write_text('{"a": 1}')
    fingerprint = resolve_commit(str(plain))
    assert fingerprint.startswith("local:") and fingerprint == folder_fingerprint(plain)
    (plain / "model.safetensors").write_bytes(b"0" * 10)
    assert resolve_commit(str(plain)) != fingerprint  # new weights in the folder: another fingerprint


class _ModelStandIn:
    """What a backend's constructor does with a loaded model: eval(), and VideoChat-Flash's config switch."""

    def __init__(self, *args, **kwargs):
        import types

        self.config = types.SimpleNamespace()

    def eval(self):
        return self


def _load_stand_ins(monkeypatch, tmp_path):
    """The loaders every backend with weights calls (transformers' Auto classes, vLLM, LLaVA-NeXT's builder and the hub's
    snapshot_download) replaced by stand-ins that return at once; the snapshot folder LLaVA-NeXT gets is returned."""
    import sys
    import types

    import huggingface_hub
    from helpers import remote_standins
    from transformers import AutoModel, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

    from virtuebench.models import llava_next

    # Patched after their first use: transformers' lazy module can put another `transformers` in sys.modules then.
    loads = classmethod(lambda cls, *args, **kwargs: _ModelStandIn())
    for loader in (AutoModel, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer):
        monkeypatch.setattr(sys.modules["transformers"], loader.__name__, type(loader.__name__, (), {"from_pretrained": loads}))
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=_ModelStandIn, SamplingParams=dict))
    snapshot = tmp_path / "snapshots" / SHA_B
    snapshot.mkdir(parents=True)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda repo_id, revision=None: str(snapshot))
    modules = remote_standins.llava_modules()
    modules["builder"].load_pretrained_model = lambda *args, **kwargs: (object(), _ModelStandIn(), object(), None)
    monkeypatch.setattr(llava_next, "llava_modules", lambda: modules)
    return snapshot


@pytest.mark.parametrize(
    ("backend", "family"),
    [
        ("transformers", "qwen3-vl"),
        ("vllm", "qwen3-vl"),
        ("videochat_flash", None),
        ("internvl_chat", None),
        ("internvideo", None),
        ("keye", None),
        ("llava_video", None),
    ],
)
def test_every_backend_with_weights_records_the_commit_the_shared_function_resolves(backend, family, tmp_path, monkeypatch):
    """The weights commit is worked out in one place (ModelSpec.commit, models/weights.resolve_commit): each backend that
    loads weights gets what it returns for the spec's hub id and revision (LLaVA-NeXT: with the snapshot folder it loaded)."""
    pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
    pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")
    from virtuebench.models import load_backend
    from virtuebench.models.spec import ModelSpec

    snapshot = _load_stand_ins(monkeypatch, tmp_path)
    calls = []

    def resolve(source, revision=None, *, snapshot=None):
        calls.append((source, revision, snapshot))
        return "commit-from-the-shared-function"

    from virtuebench.models import spec as spec_module

    monkeypatch.setattr(spec_module, "resolve_commit", resolve)
    answers = {"backend": backend, "hub_id": "org/model", "revision": "v1"} | ({"family": family} if family else {})
    loaded = load_backend(ModelSpec.from_job("m", answers, {}))
    assert loaded.weights_commit == "commit-from-the-shared-function"
    assert calls == [("org/model", "v1", str(snapshot) if backend == "llava_video" else None)]


def test_every_record_carries_the_weights_commit_and_moved_weights_are_asked_again(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    items = items_for_level(instances, 64)
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    out = tmp_path / "out.jsonl"
    config = {
        "backend": "helpers.vb_test_backends:WeightsBackend",
        "hub_id": str(weights),
        "settings": {"fail_on": [items[-1].instance_id]},
    }
    first = run_inference(instances, bench / "frames", "m", config, "honest", 64, out)
    assert first.backend_errors == 1 and first.answered == len(items) - 1
    old = folder_fingerprint(weights)
    assert {r["weights_commit"] for r in _lines(out.with_name(out.name + ".partial"))} == {old}
    # The weights change under the same registry entry (an unpinned id that moved): nothing made with the old ones is kept.
    (weights / "model.safetensors").write_bytes(b"new")
    from helpers.vb_test_backends import WeightsBackend

    new = folder_fingerprint(weights)
    second = run_inference(instances, bench / "frames", "m", config, "honest", 64, out, backend=WeightsBackend({"loaded_commit": new}))
    assert second.reused == 0 and second.answered == len(items) and second.weights_commits == (new,)
    assert {r["weights_commit"] for r in _lines(out)} == {new} and new != old
    assert f"weights {new}" in second.line("m/honest/64")
    # Beside the commit, the weights' hub id (here a folder) as the model that answered (`answered_by`).
    assert {r["answered_by"] for r in _lines(out)} == {str(weights)}


def test_records_of_other_weights_are_asked_again_once_the_loaded_commit_is_known(bench, tmp_path, monkeypatch):
    """An unpinned hub id is resolved only when the weights download: before loading, the job cannot tell which
    commit it will get, so the check is made again once the backend has loaded."""
    from helpers.vb_test_backends import WeightsBackend

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # nothing cached: the commit is unknown before loading
    instances = read_instances(bench / "instances.parquet")
    items = items_for_level(instances, 64)
    out = tmp_path / "out.jsonl"
    config = {"backend": "helpers.vb_test_backends:WeightsBackend", "hub_id": "org/unpinned-model", "settings": {}}
    fail_last = WeightsBackend({"loaded_commit": SHA_A, "fail_on": [items[-1].instance_id]})
    first = run_inference(instances, bench / "frames", "m", config, "honest", 64, out, backend=fail_last)
    assert first.answered == len(items) - 1 and first.backend_errors == 1
    # The hub id moved between the runs: the download brings SHA_B. Every item is asked again, none is mixed in.
    moved = WeightsBackend({"loaded_commit": SHA_B})
    second = run_inference(instances, bench / "frames", "m", config, "honest", 64, out, backend=moved)
    assert second.reused == 0 and second.answered == len(items) and second.weights_commits == (SHA_B,)
    assert [r["weights_commit"] for r in _lines(out)] == [SHA_B] * len(items)
    # The same weights again: the finished items are kept.
    third = WeightsBackend({"loaded_commit": SHA_A, "fail_on": [items[-1].instance_id]})
    out.unlink()
    run_inference(instances, bench / "frames", "m", config, "honest", 64, out, backend=third)
    again = run_inference(instances, bench / "frames", "m", config, "honest", 64, out, backend=WeightsBackend({"loaded_commit": SHA_A}))
    assert again.reused == len(items) - 1 and again.answered == 1


def test_a_cut_off_reply_is_recorded_truncated_and_judged_as_no_answer(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    items = items_for_level(instances, 64)
    cut, unclosed = items[0].instance_id, items[1].instance_id
    weights = tmp_path / "weights"
    weights.mkdir()
    settings = {"cut_off": [cut], "unclosed": [unclosed]}
    config = {"backend": "helpers.vb_test_backends:WeightsBackend", "hub_id": str(weights), "settings": settings}
    out = tmp_path / "responses.jsonl"
    summary = run_inference(instances, bench / "frames", "m", config, "honest", 64, out)
    assert summary.truncated == 2 and summary.answered == len(items)
    records = {r["instance_id"]: r for r in _lines(out)}
    assert (
        records[cut]["truncated"] and records[cut]["finish_reason"] == "length" and records[cut]["response"] == "The star is red, and the"
    )
    assert records[unclosed]["truncated"] and records[unclosed]["response"] == "" and records[unclosed]["thinking"]
    assert sum(r["truncated"] for r in records.values()) == 2
    judged = tmp_path / "judged.jsonl"
    judge_responses(out, bench / "instances.parquet", get_judge("rules"), judged)
    verdicts = {j.instance_id: j for j in load_records(judged, Judgment)}
    for instance_id in (cut, unclosed):  # neither a refusal nor an answer, whatever the text holds
        verdict = verdicts[instance_id]
        assert (verdict.refusal, verdict.judgement, verdict.valid, verdict.truncated) == (0, 0, False, True)
        assert verdict.reason == TRUNCATED_REASON
    assert all(v.valid for i, v in verdicts.items() if i not in (cut, unclosed))
    listed = tmp_path / "invalid_items.csv"
    assert write_invalid(verdicts.values(), listed) == 2
    assert listed.read_text().count(TRUNCATED_REASON) == 2


def test_the_judge_cli_treats_a_truncated_item_as_no_answer(tmp_path):
    from virtuebench.judge.__main__ import main

    items = tmp_path / "items.jsonl"
    rows = [
        {"id": 1, "question": "What colour?", "answer": "Red.", "response": "Red", "truncated": True},
        {"id": 2, "question": "What colour?", "answer": "Red.", "response": "Red"},
    ]
    items.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main([str(items), "--judge", "rules", "--out", str(tmp_path / "out.jsonl")]) == 0
    first, second = _lines(tmp_path / "out.jsonl")
    assert (first["judgement"], first["valid"]) == (0, False) and (second["judgement"], second["valid"]) == (1, True)
