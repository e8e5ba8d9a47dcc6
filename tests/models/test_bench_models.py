"""tools/bench_models.py: the full-size architectures it would run on a GPU are the published models
(built on the meta device: shapes, no memory), and its CPU mode runs the pipelined loop end to end."""

import subprocess
import sys

import pytest
from helpers.data import REPO

pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")

# Published parameter counts, billions: Qwen2.5-VL-7B, Qwen3-VL-8B, InternVL3.5-8B, LLaVA-Video-7B-Qwen2.
PUBLISHED = {"qwen2.5-vl": 8.29, "qwen3-vl": 8.77, "internvl": 8.53, "llava-video": 8.03}


def test_full_size_configs_are_the_published_architectures():
    run = subprocess.run(
        [sys.executable, str(REPO / "tools" / "bench_models.py"), "--check-configs"], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    sizes = {line.split(":")[0]: float(line.split()[1]) for line in run.stdout.splitlines()}
    assert sizes.keys() == PUBLISHED.keys()
    for family, billions in PUBLISHED.items():
        assert sizes[family] == pytest.approx(billions, rel=0.01), family


def test_cpu_mode_measures_both_loops(tmp_path):
    out = tmp_path / "rows.json"
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "bench_models.py"),
            "--families",
            "qwen2.5-vl",
            "--levels",
            "64",
            "--items",
            "2",
            "--max-new-tokens",
            "2",
            "--frame-size",
            "96",
            "54",
            "--work",
            str(tmp_path),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    import json

    rows = json.loads(out.read_text())
    assert [row["loop"] for row in rows] == ["one by one", "pipelined"]
    for row in rows:
        assert row["prompt_tokens"] > 64 and 0 < row["busy_share"] <= 1 and row["items_per_s"] > 0
