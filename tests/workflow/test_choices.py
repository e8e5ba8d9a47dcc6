"""docs/choices.md, the table of the papers' open choices: every setting it names exists where it says (the workflow
config's schema, the model registry's schema and its backends' settings, the LLM judges' settings, the named choices
config/models.yaml declares with their options), so the table cannot name a switch that was renamed or never made. A
row marked planned is skipped: its setting is still being added."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.choices import CHOICES, setting_cells

from virtuebench.config import load_schema
from virtuebench.judge.kinds import settings_properties

REPO = Path(__file__).resolve().parents[2]


def _config_key_exists(schema: dict, key: str) -> bool:
    node = schema
    for part in key.split("."):
        properties = node.get("properties", {})
        if part not in properties:
            return False
        node = properties[part]
    return True


def _backend_settings(models_schema: dict) -> set[str]:
    names: set[str] = set()
    for branch in models_schema.get("allOf", []):
        names |= set(branch["then"]["properties"]["settings"].get("properties", {}))
    return names


def _declared_with(named: str) -> bool:
    """`choice: option, option`: config/models.yaml declares the choice (`choices`) on some entry, and its options are
    exactly those named, on every entry that declares it."""
    import yaml

    choice, _, listed = named.partition(":")
    options = {option.strip() for option in listed.split(",")}
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    declared = [entry["choices"][choice] for entry in registry.values() if choice in (entry.get("choices") or {})]
    return bool(declared) and all(set(spec["options"]) == options for spec in declared)


def test_every_setting_the_choices_table_names_exists():
    config_schema = load_schema(REPO / "config" / "schema.yaml")
    models_schema = load_schema(REPO / "config" / "models.schema.yaml")
    backend_settings, judge_settings = _backend_settings(models_schema), set(settings_properties())
    rows = setting_cells()
    assert len(rows) >= 40, f"docs/choices.md: only {len(rows)} rows read; is its table layout (5 columns) intact?"
    checked, missing = 0, []
    for choice, cell in rows:
        if "planned" in cell or cell.startswith("-"):  # being added, or fixed in the code
            continue
        keys = re.findall(r"`([^`]+)`", cell)
        assert keys, f"docs/choices.md, row {choice!r}: the setting cell {cell!r} names no setting in backticks (or '-', or planned)"
        for key in keys:
            if key.startswith("models.yaml: "):
                field = key.removeprefix("models.yaml: ")
                ok = (
                    field.removeprefix("settings.") in backend_settings
                    if field.startswith("settings.")
                    else field in models_schema["properties"]
                )
            elif key.startswith("model_choices."):
                ok = _declared_with(key.removeprefix("model_choices."))
            elif key.startswith("judges: "):
                ok = key.removeprefix("judges: ") in judge_settings
            else:
                ok = _config_key_exists(config_schema, key)
            checked += 1
            if not ok:
                missing.append(f"{choice}: {key}")
    assert not missing, f"docs/choices.md names settings that do not exist: {missing}"
    assert checked >= 40


def test_the_switches_of_this_issue_are_in_the_table():
    """The switches issue 38 added (and the Table 1 ones before them) each have their row."""
    text = CHOICES.read_text()
    for key in (
        "supplement.longvideobench_subtitles",
        "supplement.question_pool",
        "supplement.short_video_frames",
        "curation.revisions",
        "curation.filter_frame_max_side",
        "curation.moviechat_breakpoint",
        "model_choices.mimo_vl_release: june-2025, august-2025",
        "model_choices.mimo_vl_decoding: lmms-eval, examples",
        "model_choices.qwen3_vl_decoding: readme, videomme-script",
        "model_choices.internvl35_stage: instruct, mpo",
        "model_choices.qwen_video_budget: videomme, qwen-vl-utils",
    ):
        assert f"`{key}`" in text, key


def test_the_model_rows_of_issue_50_are_in_the_table():
    """Issue 50's model rows name their switches: the new named choices and the settings they rest on."""
    text = CHOICES.read_text()
    for key in (
        "model_choices.api_time_labels: seconds, clock",
        "model_choices.internvl35_decoding: greedy, card",
        "model_choices.gpt5_completion_tokens: project, reasoning-guide",
        "models.yaml: settings.timestamp_format",
        "models.yaml: settings.system_suffix",
        "models.yaml: settings.model",
    ):
        assert f"`{key}`" in text, key


def test_the_qwen_budget_row_gives_the_tokens_per_frame_the_sizing_code_gives():
    """The budget row's numbers (tokens per frame of the stored 16:9 frame at each level, under each option) are what
    the families' own sizing gives for the registry's entries with each option applied: the row cannot claim the budget
    cuts at fewer levels than it does."""
    import yaml

    from virtuebench.levels import LEVELS
    from virtuebench.models.families import FAMILIES
    from virtuebench.models.spec import resolve_choices

    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    (row,) = [line for line in CHOICES.read_text().splitlines() if line.startswith("| the Qwen video budget")]
    for model, label in (("Qwen2.5VL-7B", "Qwen2.5-VL"), ("Qwen3VL-8B", "Qwen3-VL")):
        computed = {}
        for option in ("videomme", "qwen-vl-utils"):
            settings = resolve_choices(registry[model], {"qwen_video_budget": option})[0]["settings"]
            video = FAMILIES[registry[model]["family"]].video_settings(
                settings.get("max_pixels"), settings.get("total_pixels"), settings.get("min_pixels")
            )
            computed[option] = [video.tokens_per_frame(336, 597, n) for n in LEVELS]  # 597 x 336: as stored (docs/models.md)
        assert f"{label} {'/'.join(f'{t:g}' for t in computed['videomme'])}" in row, (label, computed)
        cut = [level for level, a, b in zip(LEVELS, computed["videomme"], computed["qwen-vl-utils"]) if a != b]
        assert cut == [256, 512, 1024], (label, cut)
    assert row.startswith("| the Qwen video budget at 256, 512 and 1024 frames")
