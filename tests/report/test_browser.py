"""The per-item results browser (virtuebench.browser): pages from the records, bad input shown as such,
and (where Debian's chromium and its driver are installed, as CI does) clicked through in a real browser."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from helpers.browser import click_through
from helpers.data import build_bench

from virtuebench import REFUSAL_ANSWER
from virtuebench.browser import SHEET_COLUMNS, Site, safe_name
from virtuebench.instances import read_instances
from virtuebench.judge.explain import explain
from virtuebench.judge.rules import RulesJudge
from virtuebench.records import Judgment


def _judgments(bench: Path) -> list[Judgment]:
    """Two judges' verdicts on an always-refusing model, as the judge stage writes them: the rules judge's own (its
    reasons end in its rule labels), and another judge that disagrees on the answerable items."""
    records = []
    rules = RulesJudge()
    for inst in read_instances(bench / "instances.parquet"):
        for level, answer in inst.answers.items():
            for judge, verdict in (("rules", 1), ("other", 0)):
                unanswerable = answer == REFUSAL_ANSWER
                reason = rules.judge(inst.question, answer, REFUSAL_ANSWER).reason if judge == "rules" else "refusal detected"
                records.append(
                    Judgment(
                        inst.instance_id,
                        "refuse",
                        "honest",
                        level,
                        judge,
                        inst.category,
                        inst.task_type,
                        answer,
                        unanswerable,
                        REFUSAL_ANSWER,
                        1,
                        int(unanswerable) if judge == "rules" else verdict,
                        True,
                        reason,
                        None,
                        "fp",
                        question=inst.question,
                        video_id=inst.video_id,
                    )
                )
    return records


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    bench = build_bench(tmp_path_factory.mktemp("browser"), 3, 300, [64, 128, 256])
    instances = read_instances(bench / "instances.parquet")
    judgments = _judgments(bench)
    broken = instances[-1]
    shutil.rmtree(bench / "frames" / broken.video_id)  # its frames are gone
    first = next(i for i in instances if 128 in i.answers and i.video_id != broken.video_id)
    missing = next(j for j in judgments if j.instance_id == first.instance_id and j.level == 128 and j.judge == "rules")
    judgments.remove(missing)  # one judgment never written
    orphan = Judgment(
        "ghost/1", "refuse", "honest", 64, "rules", "perception", "t", "red", False, None, 0, 0, False, "", "no response", "fp"
    )
    counts = Site(instances, [*judgments, orphan], bench / "frames", bench / "site").build()
    (bench / "site" / "judgments.json").write_text(json.dumps([j.__dict__ for j in [*judgments, orphan]]))
    return bench / "site", instances, broken, counts, first


def test_the_overview_links_every_number_to_its_items(site):
    out, instances, _, counts, first = site
    index = (out / "index.html").read_text()
    assert counts["items"] == len(instances) + 1 and "Judge rules" in index and "Judge other" in index
    assert 'href="lists/rules/refuse/honest/64.html#refusal"' in index and "disagreement" in index
    listing = (out / "lists" / "rules" / "refuse" / "honest" / "64.html").read_text()
    assert f'href="../../../../items/{safe_name(first.instance_id)}.html#model=refuse&amp;prompt=honest&amp;level=64"' in listing or (
        f"../../../../items/{safe_name(first.instance_id)}.html#model=refuse&prompt=honest&level=64" in listing
    )


def test_the_overview_shows_the_numbers_of_scores_csv(site):
    """Every accuracy cell of the overview equals the row virtuebench.metrics computes from the same records."""
    from virtuebench.browser import SUBSETS
    from virtuebench.metrics import compute_scores

    out = site[0]
    index = (out / "index.html").read_text()
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    shown = 0
    for score in compute_scores(judgments):
        if score.level == "all" or score.subset not in {subset for subset, _ in SUBSETS}:
            continue
        assert f"{score.accuracy:.1f} ({score.n_correct}/{score.n})" in index, score
        shown += 1
    assert shown >= 2 * 3 * 3  # two judges, three levels, three subsets at least


def test_an_item_page_shows_every_level_its_frames_and_what_is_missing(site):
    out, instances, broken, _, first = site
    text = (out / "items" / f"{safe_name(first.instance_id)}.html").read_text()
    assert first.question in text.replace("&#x27;", "'")
    for level in first.answers:
        assert f'id="level-{level}"' in text
    manifest = json.loads((out.parent / "frames" / first.video_id / "manifest.json").read_text())
    times = ",".join(f"{t:g}" for t in manifest["levels"]["64"]["timestamps"])
    assert f'data-times="{times}"' in text and f'data-columns="{SHEET_COLUMNS}"' in text
    assert (out / "thumbs" / first.video_id / "64.jpg").stat().st_size > 1000
    assert "no judgment record" in text  # the one removed at 128 frames
    gone = (out / "items" / f"{safe_name(broken.instance_id)}.html").read_text()
    assert "no frames" in gone and "frame manifest not found" in gone
    ghost = (out / "items" / f"{safe_name('ghost/1')}.html").read_text()
    assert "not in the instances table" in ghost and "invalid" in ghost


def test_verdicts_are_in_plain_words_with_the_rule_labels_behind_a_toggle(site):
    out, _, _, _, first = site
    listing = (out / "lists" / "rules" / "refuse" / "honest" / "64.html").read_text()
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    shown = [j for j in judgments if (j.judge, j.level, j.valid) == ("rules", 64, True)]
    assert shown and all(re.search(r"\[.*@.*; (not )?confident\]$", j.reason) for j in shown)  # the rules judge's own reasons
    for judgment in shown:
        words = explain(judgment.reason)
        assert html.escape(words.reason) in listing and f"decided by: {html.escape(words.rules)}" in listing
        assert f'<details class="tags"><summary>rule labels</summary><code>{html.escape(words.labels[0])}</code></details>' in listing
    outside = re.sub(r"<details.*?</details>", "", listing)
    assert "case A" not in outside and "case B" not in outside and "@short" not in outside and "confident]" not in outside
    assert "the truth is the refusal: refusal phrase" in listing and "a refusal and nothing else; short answer" in listing
    other = (out / "lists" / "other" / "refuse" / "honest" / "64.html").read_text()
    assert "refusal detected" in other and "<details" not in other  # a reason without labels is shown as it is
    item = (out / "items" / f"{safe_name(first.instance_id)}.html").read_text()
    assert "decided by: " in item and '<details class="tags">' in item


def test_rows_follow_table_2s_order(site, tmp_path):
    """config.models' order, as Table 2 (and each model's prompts in config.prompts' order); a model the config does
    not list (CVRR-ES's published ones) after them; without an order, alphabetical."""
    out, instances, *_ = site
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    base = [j for j in judgments if j.judge == "rules" and j.level == 64]
    arms = [("oracle", "plain"), ("refuse", "honest"), ("guess", "plain"), ("guess", "honest"), ("published", "honest")]
    mixed = [dataclasses.replace(j, model=model, prompt=prompt) for model, prompt in arms for j in base]

    def rows(**order) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        Site(instances, mixed, out.parent / "frames", folder, **order).build()
        index = (folder / "index.html").read_text()
        item = (folder / "items" / f"{safe_name(base[0].instance_id)}.html").read_text().split('id="level-64"')[1]
        overview = re.findall(r'<th class="arm">(\S+) <span class="prompt">(\S+)</span></th>', index)
        return overview, re.findall(r'data-model="(\S+)" data-prompt="(\S+)"', item)

    wanted = [("refuse", "honest"), ("guess", "plain"), ("guess", "honest"), ("oracle", "plain"), ("published", "honest")]
    assert rows(models=["refuse", "guess", "oracle"], prompts=["plain", "honest"]) == (wanted, wanted)
    assert rows() == (sorted(arms), sorted(arms))


@pytest.fixture(scope="module")
def wide_site(site):
    """The site with the paper's five levels (the records at 64 frames copied to 512 and 1024): its overview is wider
    than a 1,400 px window."""
    out, instances, *_ = site
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    wider = [dataclasses.replace(j, level=level) for j in judgments if j.level == 64 for level in (512, 1024)]
    Site(instances, [*judgments, *wider], out.parent / "frames", out.parent / "wide").build()
    return out.parent / "wide"


def test_clicking_from_the_overview_to_an_item_in_a_real_browser(wide_site, tmp_path):
    """Overview -> list -> item. At 1,400 px the overview does not scroll sideways: its table, wider, scrolls in its
    box, and scrolled to its end shows the 1024-frame columns' header inside the box, the model column still at the
    box's left edge."""
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = click_through(wide_site, shots)
    assert seen["title"].startswith("Item ") and "Ground truth" in seen["text"]
    assert seen["listed"] >= 1 and seen["thumbs"] == 64 and "thumbs/" in seen["image"] and seen["focused"] >= 1
    for name in ("1-overview.png", "2-list.png", "3-item.png"):
        assert (shots / name).stat().st_size > 5000
    layout = seen["layout"]
    assert layout["window"] == 1400 and layout["page_scroll"] <= layout["page_client"], layout
    assert layout["box_scroll"] > layout["box_client"] and layout["box_right"] <= layout["window"], layout  # it does scroll
    assert layout["last"] == "1024 frames" and layout["last_inside"] and abs(layout["arm_left"]) <= 1, layout
    print(f"\nscreenshots: {shots}")
