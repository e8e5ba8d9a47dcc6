import copy
import json
import re

import pytest
import yaml
from helpers.data import REPO

from virtuebench.config import ConfigError, check_config, load_schema, schema_errors
from virtuebench.judge.kinds import REGISTRY, configurable_kinds, judge_kind
from virtuebench.judge.prompts import JUDGE_PROMPTS
from virtuebench.models import BACKENDS
from virtuebench.prompts import PROMPTS
from virtuebench.sources import REAL_SOURCES, SOURCES

DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
CONFIG_DIR = REPO / "config"


def check(config, base_dir=REPO, environ=None):
    return check_config(config, REPO / "config", base_dir=base_dir, environ=environ or {})


def test_default_config_is_valid():
    assert list(check(copy.deepcopy(DEFAULT)).models) == DEFAULT["models"]


def test_the_schemas_take_the_registries_names_from_the_code():
    """The schemas list no backend, source, prompt, judge kind or judge setting: each is written once, in its registry
    (docs/extending.md), and filled in where the schema says `x-registry`."""
    raw = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    raw_judge = raw["properties"]["judges"]["additionalProperties"]
    assert "enum" not in raw["properties"]["source"]["properties"]["name"] and "enum" not in raw["properties"]["prompts"]["items"]
    assert set(raw_judge["properties"]) == {"kind"} and "enum" not in raw_judge["properties"]["kind"]
    schema = load_schema(REPO / "config" / "schema.yaml")
    assert schema["properties"]["prompts"]["items"]["enum"] == list(PROMPTS)
    assert schema["properties"]["source"]["properties"]["name"]["enum"] == [*SOURCES, "virtuebench"]
    judge = schema["properties"]["judges"]["additionalProperties"]
    assert judge["properties"]["kind"]["enum"] == configurable_kinds() == [name for name in REGISTRY if judge_kind(name).configurable]
    assert judge["properties"]["prompt"]["enum"] == list(JUDGE_PROMPTS) and judge["additionalProperties"] is False
    assert set(judge["properties"]) == {"kind", *(name for kind in configurable_kinds() for name in judge_kind(kind).reads())}
    raw_models = yaml.safe_load((REPO / "config" / "models.schema.yaml").read_text())
    assert "enum" not in raw_models["properties"]["backend"]["anyOf"][0]
    assert load_schema(REPO / "config" / "models.schema.yaml")["properties"]["backend"]["anyOf"][0]["enum"] == list(BACKENDS)


def test_the_benchmarks_and_their_blocks_come_from_the_registry():
    """config/schema.yaml names no benchmark and holds no benchmark's block: `benchmark`'s values and each block
    (config.cvrr) are filled in from virtuebench.benchmarks, the block's defaults from its settings dataclass."""
    from virtuebench.benchmarks import REGISTRY as BENCHMARKS
    from virtuebench.benchmarks import benchmark
    from virtuebench.config import with_defaults

    raw = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    assert "enum" not in raw["properties"]["benchmark"] and "cvrr" not in raw["properties"]
    schema = load_schema(REPO / "config" / "schema.yaml")
    assert schema["properties"]["benchmark"]["enum"] == list(BENCHMARKS) and "cvrr" in BENCHMARKS
    assert schema["additionalProperties"] is False and set(schema["properties"]["cvrr"]["properties"]) == {
        "published_dir",
        "empty_predictions",
        "published_commit",
    }
    cvrr = yaml.safe_load((REPO / "config" / "cvrr.yaml").read_text())
    filled = with_defaults(cvrr, REPO / "config" / "schema.yaml")["cvrr"]
    assert filled == {"published_dir": "data/CVRR-Evaluation-Suite", "empty_predictions": "skip", "published_commit": "9d77787"}
    assert benchmark("cvrr").settings_from(cvrr).published_commit == "9d77787"
    assert benchmark("cvrr").rules == "rules/cvrr.smk" and benchmark("virtuebench").rules == "rules/report.smk"
    assert schema_errors({**cvrr, "cvrr": {"empty_predictions": "zero"}}, REPO / "config" / "schema.yaml", "config") == [
        "config.cvrr.empty_predictions: 'zero' is not allowed; allowed values: skip, wrong"
    ]
    assert schema_errors({**cvrr, "benchmark": "cvr"}, REPO / "config" / "schema.yaml", "config") == [
        "config.benchmark: 'cvr' is not allowed; did you mean 'cvrr'? allowed values: virtuebench, cvrr"
    ]
    warnings = check({**copy.deepcopy(DEFAULT), "cvrr": {"published_dir": "download"}}).warnings
    assert "config.cvrr: published_dir does nothing without benchmark: cvrr (its rules file reads them)" in warnings


def test_a_benchmark_is_found_by_its_packages_benchmark_module_and_must_name_itself_as_its_package(tmp_path, monkeypatch):
    """virtuebench.benchmarks.discover: a package (a folder with __init__.py) with a benchmark.py is a benchmark under
    the package's name, found without importing it; a folder without __init__.py, or a package without benchmark.py,
    is not. A BENCHMARK that names itself otherwise is refused, naming both."""
    import sys

    from virtuebench import benchmarks

    for folder, files in {"alpha": ("__init__.py", "benchmark.py"), "loose": ("benchmark.py",), "plain": ("__init__.py", "run.py")}.items():
        (tmp_path / folder).mkdir()
        for name in files:
            (tmp_path / folder / name).write_text("raise SystemExit('imported')\n")
    assert benchmarks.discover(tmp_path) == {
        "virtuebench": "virtuebench.benchmarks:VIRTUEBENCH",
        "alpha": "virtuebench.alpha.benchmark:BENCHMARK",
    }
    assert list(benchmarks.discover())[0] == "virtuebench" and "cvrr" in benchmarks.discover()
    # A package whose BENCHMARK names another benchmark.
    module = type(sys)("virtuebench_test_misnamed")
    module.BENCHMARK = benchmarks.Benchmark("other", rules="rules/other.smk")
    monkeypatch.setitem(sys.modules, "virtuebench_test_misnamed", module)
    monkeypatch.setitem(benchmarks.REGISTRY.targets, "misnamed", "virtuebench_test_misnamed:BENCHMARK")
    with pytest.raises(ValueError, match=r"benchmark 'misnamed': virtuebench_test_misnamed:BENCHMARK names itself 'other', not 'misnamed'"):
        benchmarks.benchmark("misnamed")


def test_every_judge_kind_is_registered_under_its_name_with_classified_settings():
    from virtuebench.config import RERUN_CLASSES

    for name in REGISTRY:
        kind = judge_kind(name)
        assert kind.name == name and set(kind.reads().values()) <= set(RERUN_CLASSES), name
    assert not judge_kind("letter-grade").configurable  # the workflow sets the authors' grader up itself
    # A setting two kinds read means one thing to the config check (settings_properties keeps the first kind's schema).
    from virtuebench.support.settings import settings_schema

    seen = {}
    for name in configurable_kinds():
        for setting, schema in settings_schema(judge_kind(name).settings).items():
            shape = {key: value for key, value in schema.items() if key != "description"}
            assert seen.setdefault(setting, shape) == shape, f"{name}.{setting} differs from another kind's"
    with pytest.raises(ValueError, match="unknown judge kind 'telepathy'; known: " + ", ".join(REGISTRY)):
        judge_kind("telepathy")


@pytest.mark.parametrize(
    "path,value,message",
    [
        (
            ("frames", "quality"),
            90,
            "config.frames: unknown key(s) 'quality'; allowed keys: jpeg_quality, max_pixels, max_side, on_broken_video",
        ),
        (("frames", "on_broken_video"), "skip", "config.frames.on_broken_video: 'skip' is not allowed; allowed values: record, fail"),
        (("levels",), [64, "many"], "config.levels[1]: must be of type integer"),
        (("models",), ["refuse", "nope"], "config.models[1]: 'nope' is not in the model registry"),
        (("report", "prompt"), "plain", None),
        (("report", "trust"), {"wrong_answer": -0.5, "unwarranted_refusal": -0.5}, "config.report.trust: wrong_answer must be below"),
        (("report", "trust"), {"wrong_answer": 1}, "config.report.trust.wrong_answer: 1 is greater than the maximum of 0"),
        (("report", "compare"), [["guess", "gpt-9"]], "config.report.compare[0]: model 'gpt-9' is not in config.models"),
        (("report", "compare"), [["guess", "oracle:sneaky"]], "config.report.compare[0]: prompt 'sneaky' is not in config.prompts"),
        (("report", "bootstrap", "resamples"), 10, "config.report.bootstrap.resamples: 10 is less than the minimum of 100"),
        (("report", "paper_names"), {"oracle": "Qwen3VL-32B"}, None),
        (("report", "paper_names"), {"orcale": "Qwen3VL-32B"}, "config.report.paper_names: model 'orcale' is not in config.models"),
        (
            ("report", "paper_names"),
            {"oracle": "Qwen3-VL-32B"},
            "config.report.paper_names.oracle: 'Qwen3-VL-32B' is not a row of the paper's Tables 1 and 2; did you mean 'Qwen3VL-32B' or",
        ),
        (("source", "name"), "cvrr", "'oracle' reads only the synthetic demo's frames"),
    ],
)
def test_errors_name_the_key_and_the_allowed_values(path, value, message):
    config = copy.deepcopy(DEFAULT)
    target = config
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    if message is None:
        check(config)
        return
    with pytest.raises(ConfigError) as error:
        check(config)
    assert message in str(error.value)


def test_report_prompt_must_be_run():
    config = {**copy.deepcopy(DEFAULT), "prompts": ["plain"]}
    with pytest.raises(ConfigError, match=r"config.report.prompt: 'honest' is not allowed; allowed values \(config.prompts\): plain"):
        check(config)


def test_registry_entries_are_checked(tmp_path):
    (tmp_path / "models.yaml").write_text("mine:\n  backend: telepathy\n  gpu: 1\n")
    config = {**copy.deepcopy(DEFAULT), "model_registry": str(tmp_path / "models.yaml"), "models": ["mine"]}
    with pytest.raises(ConfigError) as error:
        check(config)
    assert "mine: unknown key(s) 'gpu'" in str(error.value)
    assert "mine.backend: 'telepathy' is not allowed; allowed values: refuse, guess" in str(error.value)


def test_schema_errors_are_listed_together():
    errors = schema_errors({"levels": "x", "extra": 1}, REPO / "config" / "schema.yaml", "config")
    assert any("unknown key(s) 'extra'" in e for e in errors)
    assert any("config.levels: must be of type array" in e for e in errors)
    assert any("'source' is a required property" in e for e in errors)


def test_an_llm_judge_without_its_key_stops_before_any_job():
    config = {**copy.deepcopy(DEFAULT), "judge": "gpt-4o"}
    with pytest.raises(ConfigError, match="config.judges.gpt-4o: the judge needs an API key: set the environment variable OPENAI_API_KEY"):
        check(config)
    checked = check(config, environ={"OPENAI_API_KEY": "sk-x"})
    assert checked.judge == "gpt-4o" and checked.judges["gpt-4o"]["model"] == "gpt-4o-2024-08-06"


def test_if_no_key_rules_falls_back_with_a_warning():
    config = copy.deepcopy(DEFAULT)
    config["judge"] = "gpt-4o"
    config["judges"]["gpt-4o"]["if_no_key"] = "rules"
    checked = check(config)
    assert checked.judge == "rules" and "OPENAI_API_KEY is not set" in checked.warnings[0]


def test_unknown_judge_settings_are_named():
    config = copy.deepcopy(DEFAULT)
    config["judges"]["gpt-4o"]["temprature"] = 0.7
    with pytest.raises(ConfigError, match=r"config.judges.gpt-4o: unknown key\(s\) 'temprature'"):
        check(config)
    config = {**copy.deepcopy(DEFAULT), "compare_judges": [["rules", "gpt-5"]]}
    with pytest.raises(ConfigError, match=r"config.compare_judges\[0\]\[1\]: 'gpt-5' is not allowed"):
        check(config)


def test_names_must_fit_the_workflows_folders():
    config = {**copy.deepcopy(DEFAULT), "models": ["refuse", "Qwen2 VL"]}
    with pytest.raises(ConfigError, match="name 'Qwen2 VL' must be letters, digits"):
        check(config)


def test_no_fallback_for_a_judge_that_is_compared():
    config = copy.deepcopy(DEFAULT)
    config.update({"judge": "gpt-4o", "compare_judges": [["rules", "gpt-4o"]]})
    config["judges"]["gpt-4o"]["if_no_key"] = "rules"
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY"):
        check(config)


def test_the_paper_config_names_every_key_it_lacks_before_any_job():
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    checked = check_config(config, REPO / "config", environ={}, defer_keys=True)
    text = "\n".join(checked.missing_keys)
    assert "config.judges.gpt-4o: the judge needs an API key: set the environment variable OPENAI_API_KEY" in text
    assert "config.curation.filter_model: Gemini-2.5-Flash needs an API key: set the environment variable GEMINI_API_KEY" in text
    assert "config.curation.reference_model: Gemini-2.5-Pro needs an API key" in text
    assert "config.curation.difficulty_judge: gpt-4o needs an API key" in text
    assert "longvideobench (longvideobench/LongVideoBench) is gated" in text and "HF_TOKEN" in text
    keys = {"OPENAI_API_KEY": "x", "GEMINI_API_KEY": "y", "HF_TOKEN": "z"}
    assert check_config(config, REPO / "config", environ=keys, defer_keys=True).missing_keys == []
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        check_config(config, REPO / "config", environ={"OPENAI_API_KEY": "x", "HF_TOKEN": "z"})


def test_a_model_on_an_unverified_route_is_named_at_start(tmp_path):
    registry = {
        "proven": {"backend": "refuse", "verified": "reference backend"},
        "unproven": {"backend": "guess", "verified": "unverified: its processor was never run"},
        "silent": {"backend": "guess"},
    }
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    config = {**copy.deepcopy(DEFAULT), "model_registry": str(tmp_path / "models.yaml"), "models": list(registry)}
    warnings = [w for w in check(config).warnings if "route is unverified" in w]
    assert [w.split(":")[0] for w in warnings] == ["unproven", "silent"]
    assert "its processor was never run" in warnings[0] and "docs/models.md" in warnings[0]


def test_the_stored_frame_size_does_not_depend_on_the_configured_models(tmp_path):
    """frames.max_pixels (default 200,704, the paper's models' cap) whatever models run, so adding one re-extracts
    nothing; a model whose own cap is above it is named; `auto` is the largest cap among the models."""
    registry = {
        "small": {"backend": "openai", "verified": "x", "settings": {"model": "m", "max_pixels": 100_000}},
        "large": {"backend": "openai", "verified": "x", "settings": {"model": "m", "max_pixels": 400_000}},
        "any": {"backend": "refuse", "verified": "x"},
        # A setting of that name its backend does not declare as its frame cap (Backend.frame_pixels_setting) caps nothing.
        "private": {"backend": "guess", "verified": "x", "settings": {"max_pixels": 900_000}},
    }
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    config = {**copy.deepcopy(DEFAULT), "model_registry": str(tmp_path / "models.yaml")}
    config["frames"].pop("max_pixels")  # the schema's default
    for models in (["any"], ["small"], ["small", "large", "any"]):
        assert check({**config, "models": models}).frame_pixels == 200_704
    (larger,) = [w for w in check({**config, "models": ["small", "large", "any"]}).warnings if "max_pixels" in w]
    assert larger.startswith("config.models: large's max_pixels 400000 is above the stored frames' cap") and "200704" in larger
    assert not [w for w in check({**config, "models": ["small", "any"]}).warnings if "max_pixels" in w]
    auto = {**config, "frames": {"max_pixels": "auto"}}
    assert check({**auto, "models": ["small", "large", "any"]}).frame_pixels == 400_000
    assert check({**auto, "models": ["any"]}).frame_pixels is None  # no model states a cap: the source's size
    assert check({**auto, "models": ["small", "private"]}).frame_pixels == 100_000
    assert check({**config, "models": ["small"], "frames": {"max_pixels": 50_000}}).frame_pixels == 50_000
    assert not [w for w in check({**config, "models": ["large"], "frames": {"max_pixels": None}}).warnings if "max_pixels" in w]


def test_the_results_folder_is_checked():
    for folder in ("results", "results/cvrr", "runs/paper", "/scratch/vb"):
        check({**copy.deepcopy(DEFAULT), "results": folder})
    for folder in (".", "./", "logs/x", "config", "../elsewhere"):
        with pytest.raises(ConfigError, match=r"config.results: .* is not allowed: a folder of its own"):
            check({**copy.deepcopy(DEFAULT), "results": folder})


@pytest.mark.parametrize(
    ("folder", "inside", "owner"),
    [
        ("results/report", "results/report", "config/config.yaml"),  # the demo's browser for the report was overwritten
        ("results/frames", "results/frames", "config/config.yaml"),
        ("results/supplement/mine", "results/supplement", "config/config.yaml"),
        ("results/browser", "results/browser", "config/config.yaml"),
        ("results/cvrr/frames", "results/cvrr/frames", "config/cvrr.yaml"),
        ("results/paper/report/x", "results/paper/report", "config/paper.yaml"),
        (str(REPO / "results" / "judgments"), "results/judgments", "config/config.yaml"),  # named in full
    ],
)
def test_a_results_folder_inside_a_folder_the_workflow_writes_is_refused_by_name(folder, inside, owner):
    with pytest.raises(ConfigError) as refused:
        check({**copy.deepcopy(DEFAULT), "results": folder})
    (line,) = [line.strip() for line in str(refused.value).splitlines() if line.strip().startswith("config.results")]
    assert line == (
        f"config.results: {folder!r} is not allowed: it is inside {inside}, a folder the workflow writes for the results "
        f"folder {inside.rsplit('/', 1)[0]!r} ({owner}); give a folder of its own, e.g. results/mine"
    )


def test_the_project_folder_named_in_full_is_refused():
    with pytest.raises(ConfigError, match=r"config.results: .* is not allowed: a folder of its own"):
        check({**copy.deepcopy(DEFAULT), "results": str(REPO)})


def test_a_results_folder_above_anothers_is_refused_where_it_would_write_over_it():
    from virtuebench.config import results_collision

    known = {"mine.yaml": "runs/a/frames/b"}
    assert results_collision("runs/a", known) == (
        "the workflow would write runs/a/frames, which holds the results folder 'runs/a/frames/b' (mine.yaml)"
    )
    assert results_collision("runs", known) is None  # runs/a is no folder the workflow writes
    assert results_collision("runs/a/frames/b", known) is None  # the same configuration's own folder
    assert results_collision("results/mine", {"config.yaml": "results"}) is None  # nested beside results/cvrr


def test_levels_that_are_not_the_papers_are_accepted_with_a_warning():
    checked = check({**copy.deepcopy(DEFAULT), "levels": [32, 64, 96]})
    assert any("config.levels: [32, 96] are not the paper's levels [64, 128, 256, 512, 1024]" in w for w in checked.warnings)
    assert not any("config.levels" in w for w in check(copy.deepcopy(DEFAULT)).warnings)


def test_unconfirmed_and_unpinned_weights_are_named_at_start():
    from virtuebench.config import registry_warnings

    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    assert registry_warnings("Qwen3VL-8B", registry["Qwen3VL-8B"]) == []  # pinned, provenance given, route proven
    (unpinned,) = registry_warnings("Keye-VL-8B", registry["Keye-VL-8B"])
    assert "weights unpinned" in unpinned and "weights_commit" in unpinned
    warnings = registry_warnings("x", {"backend": "transformers", "hub_id": "org/x", "revision": None, "verified": "unverified: never run"})
    assert len(warnings) == 3 and "unconfirmed" in warnings[1]
    assert registry_warnings("GPT-4o", registry["GPT-4o"]) == []  # an API model has no weights to pin


def test_every_registry_and_judge_setting_is_classified():
    """config/models.schema.yaml and config/schema.yaml (judges) say of every setting how far a change reaches."""
    from virtuebench.config import RERUN_CLASSES, model_spec, setting_classes

    # A judge setting's class is on its kind's settings dataclass (test_every_judge_kind_is_registered_under_its_name_...).
    unclassified = [name for name, rerun in setting_classes(CONFIG_DIR).items() if rerun not in RERUN_CLASSES]
    assert not unclassified, f"model registry settings without x-rerun: {unclassified}"
    assert setting_classes(CONFIG_DIR)["verified"] == "description" and setting_classes(CONFIG_DIR)["family"] == "answers"
    # A backend setting's class is on its backend's settings dataclass (virtuebench.models.spec).
    settings = {"model": "m", "max_concurrency": 8, "max_tokens": 9}
    spec = model_spec("api", {"backend": "openai", "settings": settings}, CONFIG_DIR)
    assert spec.run["settings"] == {"max_concurrency": 8} and spec.answers["settings"] == {"model": "m", "max_tokens": 9}
    vllm = model_spec("v", {"backend": "vllm", "hub_id": "x", "settings": {"batch_size": 4, "seed": 1}}, CONFIG_DIR)
    assert vllm.run["settings"] == {"batch_size": 4} and vllm.answers == {"backend": "vllm", "hub_id": "x", "settings": {"seed": 1}}


def test_the_classes_are_read_from_the_schemas_given_not_from_beside_the_package(tmp_path):
    """An installed package (not this checkout) still reads the workflow's schemas: the caller names their folder."""
    from virtuebench.config import setting_classes

    for name in ("schema.yaml", "models.schema.yaml"):
        (tmp_path / name).write_text((CONFIG_DIR / name).read_text().replace("x-rerun: description", "x-rerun: scheduling"))
    assert setting_classes(tmp_path)["verified"] == "scheduling"
    assert setting_classes(CONFIG_DIR)["verified"] == "description"


def test_tracked_settings_keep_what_changes_the_answers_and_nothing_else():
    from virtuebench.config import model_spec
    from virtuebench.judge.rules import VERSION
    from virtuebench.judge.spec import JudgeSpec
    from virtuebench.support.settings import merge_settings

    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    entry = registry["Qwen3VL-8B"]
    entry = {**entry, "settings": {**entry["settings"], "batch_size": 4, "gpu_memory_utilization": 0.8}}
    tracked, run = model_spec("Qwen3VL-8B", entry, CONFIG_DIR).answers, model_spec("Qwen3VL-8B", entry, CONFIG_DIR).run
    assert set(tracked) == {"backend", "family", "hub_id", "revision", "env", "settings"}
    assert set(run) == {"gpus", "mem_gb", "runtime_min", "max_level", "settings"}  # the top-level scheduling keys too
    assert run["settings"] == {"batch_size": 4, "gpu_memory_utilization": 0.8} and tracked["settings"]["temperature"] == 0.7
    # The two halves make the whole entry again, less its description settings (`choices` among them: what a choice
    # changes is tracked through the keys it resolves to, virtuebench.models.spec.resolve_choices).
    assert merge_settings(tracked, run) == {
        key: value for key, value in entry.items() if key not in ("verified", "description", "provenance", "choices")
    }
    llm = {"kind": "llm", "model": "m", "base_url": "http://x/v1", "api_key_env": "K", "max_concurrency": 3, "if_no_key": "rules"}
    # the judging stage's `reasoning` is tracked at its default, with-reasoning, which is not what judgments before it read
    tracked = {"kind": "llm", "model": "m", "base_url": "http://x/v1", "reasoning": "with-reasoning"}
    assert JudgeSpec.resolve("j", llm).answers == tracked
    assert JudgeSpec.resolve("j", llm).run == {"api_key_env": "K", "max_concurrency": 3, "if_no_key": "rules"}
    rules = {"kind": "rules", "version": VERSION, "reasoning": "with-reasoning"}
    assert JudgeSpec.resolve("rules", {"kind": "rules"}).answers == rules
    old = {"kind": "rules", "reasoning": "answer-only", "truncated": "no-answer"}  # what judgments were made with before
    assert JudgeSpec.resolve("rules", old).answers == {"kind": "rules", "version": VERSION}
    with pytest.raises(ValueError, match="`llm` must be resolved"):  # a hybrid straight from config, not check_config's
        JudgeSpec.resolve("both", {"kind": "hybrid", "llm": "gpt-4o"})


def test_defaults_are_filled_before_the_checks_so_default_sources_need_their_token():
    """curation: {seed: 0} leaves the six sources to the schema's default; the gated ones still need HF_TOKEN."""
    config = {**copy.deepcopy(DEFAULT), "source": {"name": "virtuebench"}, "curation": {"seed": 0}, "models": ["refuse", "guess"]}
    checked = check_config(config, REPO / "config", environ={"GEMINI_API_KEY": "y"}, defer_keys=True)
    text = "\n".join(checked.missing_keys)
    assert "HF_TOKEN" in text and "longvideobench (longvideobench/LongVideoBench) is gated" in text
    assert check_config(config, REPO / "config", environ={"GEMINI_API_KEY": "y", "HF_TOKEN": "t"}, defer_keys=True).missing_keys == []


def test_the_schemas_defaults_are_the_library_defaults():
    """The workflow passes every report setting from config/schema.yaml (the CLIs require them); the library's own
    defaults, for use without the workflow, must say the same."""
    from virtuebench.browser import THUMB_WIDTH
    from virtuebench.metrics import TrustWeights
    from virtuebench.support.bootstrap import Bootstrap

    report = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())["properties"]["report"]["properties"]
    bootstrap, trust = report["bootstrap"]["properties"], report["trust"]["properties"]
    assert (bootstrap["resamples"]["default"], bootstrap["seed"]["default"]) == (Bootstrap.resamples, Bootstrap.seed)
    assert (trust["wrong_answer"]["default"], trust["unwarranted_refusal"]["default"]) == (
        TrustWeights.wrong_answer,
        TrustWeights.unwarranted_refusal,
    )
    assert (trust["scheme"]["default"], trust["confidence_target"]["default"]) == (TrustWeights.scheme, TrustWeights.confidence_target)
    from virtuebench.comparisons import compare

    holm_family, p_value, tarone = compare.__defaults__
    assert (report["holm_family"]["default"], report["p_value"]["default"], report["holm_tarone"]["default"]) == (
        holm_family,
        p_value,
        tarone,
    )
    assert report["thumb_width"]["default"] == THUMB_WIDTH


def test_a_hybrid_judge_resolves_its_llm_judge_and_tracks_both():
    from virtuebench.judge.rules import VERSION

    config = copy.deepcopy(DEFAULT)
    config["judge"] = "both"
    config["judges"]["both"] = {"kind": "hybrid", "llm": "gpt-4o"}
    with pytest.raises(
        ConfigError, match="config.judges.both: its LLM judge gpt-4o needs an API key: set the environment variable OPENAI_API_KEY"
    ):
        check(config)
    checked = check(config, environ={"OPENAI_API_KEY": "sk-x"})
    settings, spec = checked.judges["both"], checked.judge_specs["both"]
    assert settings["kind"] == "hybrid" and settings["llm"]["model"] == "gpt-4o-2024-08-06" and spec.settings == settings
    tracked = spec.answers
    assert tracked["version"] == VERSION and tracked["llm"]["model"] == "gpt-4o-2024-08-06" and "api_key_env" not in tracked["llm"]
    assert spec.run["llm"]["api_key_env"] == "OPENAI_API_KEY"

    # Without the key and `if_no_key: rules`: a warning, and no LLM judge (the unsure items become invalid).
    config["judges"]["both"]["if_no_key"] = "rules"
    keyless = check(config)
    assert keyless.judge == "both" and keyless.judges["both"]["llm"] is None
    assert any("judge both decides only where the rules are confident" in w for w in keyless.warnings)

    config["judges"]["both"]["llm"] = "rules"
    with pytest.raises(ConfigError, match="config.judges.both.llm: 'rules' is not an llm judge; allowed values: gpt-4o"):
        check(config)


def test_a_hybrid_difficulty_judge_that_table_2_does_not_use_is_resolved_too(monkeypatch):
    """curation.difficulty_judge may name a hybrid judge that config.judge does not: its `llm` is resolved to the LLM
    judge's settings all the same, so the filter's job gets settings it can build the judge from."""
    from virtuebench.judge import get_judge
    from virtuebench.judge.hybrid import HybridJudge
    from virtuebench.support.settings import merge_settings

    config = copy.deepcopy(DEFAULT)
    config["source"] = {"name": "virtuebench"}
    config["models"] = ["refuse", "guess"]
    config["judges"]["both"] = {"kind": "hybrid", "llm": "gpt-4o"}
    config["curation"] = {"seed": 0, "difficulty_judge": "both"}
    environ = {"GEMINI_API_KEY": "g", "OPENAI_API_KEY": "sk-x", "HF_TOKEN": "t"}
    checked = check_config(config, CONFIG_DIR, environ=environ)
    assert checked.judge == "rules" and checked.judges["both"]["llm"]["model"] == "gpt-4o-2024-08-06"
    spec = checked.judge_specs["both"]  # its halves as the job is given them (rules/common.smk), merged back as the job does
    settings = merge_settings(json.loads(json.dumps(spec.answers)), json.loads(json.dumps(spec.run)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    judge = get_judge("both", settings)
    assert isinstance(judge, HybridJudge) and judge.llm.settings.model == "gpt-4o-2024-08-06"
    # Its LLM judge's key is asked for once, by the hybrid's name.
    missing = check_config(config, CONFIG_DIR, environ={"GEMINI_API_KEY": "g", "HF_TOKEN": "t"}, defer_keys=True).missing_keys
    assert [line for line in missing if "OPENAI_API_KEY" in line] == [
        "config.judges.both: its LLM judge gpt-4o needs an API key: set the environment variable OPENAI_API_KEY "
        "(or set config.judges.both.if_no_key: rules to judge only what the rules are sure of)"
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "model_registry: file {path} not found"),
        ("mine: [unclosed", "{path}: not valid YAML ("),
        ("- just\n- a list\n", "{path}: must map model names to entries"),
    ],
    ids=["missing", "not yaml", "not a mapping"],
)
def test_a_registry_that_cannot_be_read_is_named(tmp_path, content, message):
    path = tmp_path / "models.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as error:
        check({**copy.deepcopy(DEFAULT), "model_registry": str(path)})
    assert str(error.value).startswith(message.format(path=path))


# --- Several registry files (docs/models.md, "Adding your own model") ----------------------------------------------

SHIPPED = yaml.safe_load((CONFIG_DIR / "models.yaml").read_text())
MINE = {"mine": {"backend": "openai", "verified": "a user's model", "settings": {"model": "m", "api_key_env": None, "max_pixels": 100_000}}}


def with_registries(tmp_path, registries, models):
    """The default config run from `tmp_path` (the working directory) with `model_registry: registries`."""
    return check({**copy.deepcopy(DEFAULT), "model_registry": registries, "models": models}, base_dir=tmp_path)


def test_a_list_of_registries_adds_the_later_files_models(tmp_path):
    (tmp_path / "my_models.yaml").write_text(yaml.safe_dump(MINE))
    # config/models.yaml is not in the working directory: the workflow's; my_models.yaml is.
    checked = with_registries(tmp_path, ["config/models.yaml", "my_models.yaml"], ["refuse", "mine"])
    assert checked.models == {"refuse": SHIPPED["refuse"], "mine": MINE["mine"]}
    auto = {**copy.deepcopy(DEFAULT), "model_registry": ["config/models.yaml", "my_models.yaml"], "models": ["refuse", "mine"]}
    auto["frames"]["max_pixels"] = "auto"
    assert check(auto, base_dir=tmp_path).frame_pixels == 100_000  # frames.max_pixels: auto reads the user's entry too
    # A list of one file reads as that file given alone.
    assert with_registries(tmp_path, ["my_models.yaml"], ["mine"]).models == with_registries(tmp_path, "my_models.yaml", ["mine"]).models


def test_each_relative_registry_path_is_looked_for_in_the_working_directory_first(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.yaml").write_text(yaml.safe_dump({"local-only": {"backend": "refuse", "verified": "x"}}))
    (tmp_path / "my_models.yaml").write_text(yaml.safe_dump(MINE))
    checked = with_registries(tmp_path, ["config/models.yaml", "my_models.yaml"], ["local-only", "mine"])
    assert list(checked.models) == ["local-only", "mine"]
    with pytest.raises(ConfigError, match=r"config.models\[0\]: 'refuse' is not in the model registries"):
        with_registries(tmp_path, ["config/models.yaml", "my_models.yaml"], ["refuse"])


def test_a_model_two_registry_files_define_is_an_error_naming_both_files(tmp_path):
    (tmp_path / "my_models.yaml").write_text(yaml.safe_dump({"GPT-4o": {"backend": "guess"}, **MINE}))
    with pytest.raises(ConfigError) as error:
        with_registries(tmp_path, ["config/models.yaml", "my_models.yaml"], ["refuse", "mine"])
    assert str(error.value) == (
        f"{tmp_path / 'my_models.yaml'}: GPT-4o: already defined in {CONFIG_DIR / 'models.yaml'}; a name means one model in "
        "every table and results folder: give this entry another name (a variant of a registry model is a copy of its entry "
        "under a new name)"
    )
    # Between two user files too, whatever the config's models.
    (tmp_path / "more.yaml").write_text(yaml.safe_dump(MINE))
    with pytest.raises(ConfigError, match=f"{tmp_path / 'more.yaml'}: mine: already defined in {tmp_path / 'my_models.yaml'}"):
        with_registries(tmp_path, ["my_models.yaml", "more.yaml"], ["mine"])


def test_every_registry_file_is_checked_and_each_error_names_its_file(tmp_path):
    (tmp_path / "a.yaml").write_text("mine:\n  backend: telepathy\n")
    (tmp_path / "b.yaml").write_text("yours:\n  backend: guess\n  gpu: 1\n")
    (tmp_path / "c.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError) as error:
        with_registries(tmp_path, ["config/models.yaml", "a.yaml", "b.yaml", "c.yaml", "gone.yaml"], ["refuse"])
    lines = str(error.value).splitlines()
    assert lines[0].startswith(f"{tmp_path / 'a.yaml'}: mine.backend: 'telepathy' is not allowed; allowed values: refuse, guess")
    assert lines[1] == f"{tmp_path / 'b.yaml'}: yours: unknown key(s) 'gpu'; allowed keys: " + ", ".join(
        sorted(yaml.safe_load((CONFIG_DIR / "models.schema.yaml").read_text())["properties"])
    )
    assert lines[2] == f"{tmp_path / 'c.yaml'}: must map model names to entries"
    assert lines[3] == (
        f"model_registry[4]: file {CONFIG_DIR.parent / 'gone.yaml'} not found (a relative path is looked for in the working "
        f"directory {tmp_path.resolve()} first, then in the workflow's folder {CONFIG_DIR.parent.resolve()})"
    )
    assert len(lines) == 4


def test_an_unknown_model_is_named_with_every_registry_file_read(tmp_path):
    (tmp_path / "my_models.yaml").write_text(yaml.safe_dump(MINE))
    with pytest.raises(ConfigError) as error:
        with_registries(tmp_path, ["config/models.yaml", str(tmp_path / "my_models.yaml")], ["refuse", "my-model"])
    assert (
        f"config.models[1]: 'my-model' is not in the model registries {CONFIG_DIR / 'models.yaml'}, {tmp_path / 'my_models.yaml'} "
        f"(read in that order); allowed values: {', '.join(sorted([*SHIPPED, 'mine']))}"
    ) in str(error.value)
    # One file, as a string: the message as it always was.
    with pytest.raises(ConfigError) as error:
        with_registries(tmp_path, str(tmp_path / "my_models.yaml"), ["my-model"])
    assert f"config.models[0]: 'my-model' is not in the model registry {tmp_path / 'my_models.yaml'}; allowed values: mine" in str(
        error.value
    )


def test_a_registry_file_listed_twice_is_named(tmp_path):
    (tmp_path / "my_models.yaml").write_text(yaml.safe_dump(MINE))
    with pytest.raises(
        ConfigError, match=r"^model_registry\[1\]: ./my_models.yaml is the file model_registry\[0\] names \(listed twice\)$"
    ):
        with_registries(tmp_path, ["my_models.yaml", "./my_models.yaml"], ["mine"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "config.model_registry: [] should be non-empty"),
        (["a.yaml", "a.yaml"], "config.model_registry: ['a.yaml', 'a.yaml'] has non-unique elements"),
        ([3], "config.model_registry[0]: must be of type string, got 3"),
        ({"file": "a.yaml"}, "config.model_registry: must be of type ['string', 'array']"),
    ],
)
def test_the_registry_key_takes_a_file_or_a_list_of_files(value, message):
    with pytest.raises(ConfigError) as error:
        check({**copy.deepcopy(DEFAULT), "model_registry": value})
    assert message in str(error.value)


JUDGE = {"kind": "llm", "model": "m", "api_key_env": None}
JUDGE_KEYS = [
    "api_key_env",
    "base_url",
    "forbidden_pairs",
    "if_no_key",
    "max_concurrency",
    "max_retries",
    "max_tokens",
    "model",
    "parse_retries",
    "prompt",
    "reasoning",  # read by the judging stage (judge/inputs.py), allowed on every judge kind and named as allowed
    "temperature",
    "timeout_s",
    "truncated",
]


def _judges(**judges):
    config = copy.deepcopy(DEFAULT)
    config["judges"] = judges
    return config


def test_judge_settings_the_schema_allows_but_the_judge_does_not_are_named():
    # `llm` belongs to a hybrid judge: an llm judge given one is refused wherever it is used.
    stray = {"kind": "llm", "model": "m", "api_key_env": None, "llm": "other"}
    with pytest.raises(ConfigError, match=r"config.judges.g: llm judge: unknown setting\(s\) \['llm'\]; allowed: \['api_key_env'"):
        check({**_judges(g=stray), "judge": "g"})
    with pytest.raises(ConfigError, match=r"config.judges.g: llm judge: unknown setting\(s\) \['llm'\]"):
        check({**_judges(g=stray, h={"kind": "hybrid", "llm": "g"}), "judge": "h"})
    with pytest.raises(
        ConfigError, match=r"^invalid configuration:\n  config.judges.h.llm: 'rules' is not an llm judge; allowed values: g$"
    ):
        check({**_judges(g={"kind": "llm", "model": "m", "api_key_env": None}, h={"kind": "hybrid", "llm": "rules"}), "judge": "h"})
    checked = check({**_judges(h={"kind": "hybrid", "llm": None}), "judge": "h"})  # no llm judge: unsure items are invalid
    assert checked.judges["h"] == {"kind": "hybrid", "llm": None}


def test_supplement_and_curation_settings_name_what_is_wrong():
    config = copy.deepcopy(DEFAULT)
    config["supplement"] = {"models": ["guess", "gpt-9"]}
    with pytest.raises(ConfigError) as error:
        check(config)
    assert str(error.value).splitlines()[1:] == [
        "  config.supplement.models[1]: 'gpt-9' is not allowed; allowed values (config.models): refuse, guess, oracle",
        "  config.supplement.models: the supplementary's table needs source virtuebench (the source benchmarks' questions)",
    ]
    config = {**_judges(g={**JUDGE, "llm": "x"}), "source": {"name": "virtuebench"}, "models": ["refuse"], "report": {"compare": []}}
    config["curation"] = {"difficulty_judge": "g", "sources": ["mlvu", "tiktok"], "filter_model": "gpt-9", "reference_model": "refuse"}
    with pytest.raises(ConfigError) as error:
        check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True)
    problems = str(error.value).splitlines()[1:]
    assert "  config.judges.g: llm judge: unknown setting(s) ['llm']; allowed: " + str(sorted(JUDGE_KEYS)) in problems
    assert "  config.curation.sources[1]: 'tiktok' is not allowed; allowed values: " + ", ".join(REAL_SOURCES) in problems
    registry = REPO / "config" / "models.yaml"
    assert f"  config.curation.filter_model: 'gpt-9' is not in the model registry {registry}; did you mean 'GPT-5' or 'GPT-4o'?" in problems
    config["curation"]["difficulty_judge"] = "gpt-99"
    with pytest.raises(ConfigError, match=r"config.curation.difficulty_judge: 'gpt-99' is not allowed; allowed values: rules, g"):
        check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True)


@pytest.mark.parametrize(
    "change,message",
    [
        (
            {"models": ["refuse", "Qwen2.5VL-7b"]},
            "config.models[1]: 'Qwen2.5VL-7b' is not in the model registry {registry}; did you mean 'Qwen2.5VL-7B'? allowed values: ",
        ),
        ({"judge": "gpt4o"}, "config.judge: 'gpt4o' is not allowed; did you mean 'gpt-4o'? allowed values: rules, gpt-4o, gpt-3.5-cvrr"),
        ({"compare_judges": [["rule", "gpt-4o"]]}, "config.compare_judges[0][0]: 'rule' is not allowed; did you mean 'rules'?"),
        ({"source": {"name": "synthetc"}}, "config.source.name: 'synthetc' is not allowed; did you mean 'synthetic'? allowed values: "),
        ({"prompts": ["honset"]}, "config.prompts[0]: 'honset' is not allowed; did you mean 'honest'? allowed values: honest, plain"),
        ({"report": {"prompt": "Plain"}}, "config.report.prompt: 'Plain' is not allowed; did you mean 'plain'? allowed values"),
        (
            {"report": {"compare": [["gues", "oracle"]]}},
            "config.report.compare[0]: model 'gues' is not in config.models; did you mean 'guess'?",
        ),
        ({"prompts": ["honest", "sneaky"]}, "config.prompts[1]: 'sneaky' is not allowed; allowed values: honest, plain"),  # none close
    ],
)
def test_a_misspelt_name_gets_the_close_one_first(change, message):
    config = {**copy.deepcopy(DEFAULT), **change}
    with pytest.raises(ConfigError) as error:
        check(config)
    assert message.format(registry=REPO / "config" / "models.yaml") in str(error.value)


def test_did_you_mean_prefers_the_same_name_in_other_case_and_stays_quiet_when_nothing_is_close():
    from virtuebench.config import did_you_mean

    registry = ["Qwen2.5VL-7B", "Qwen2.5VL-32B", "Qwen2.5VL-72B", "GPT-5", "GPT-4o"]
    assert did_you_mean("qwen2.5vl-7b", registry) == "did you mean 'Qwen2.5VL-7B'? "
    assert did_you_mean("gpt-9", registry) == "did you mean 'GPT-5' or 'GPT-4o'? "
    assert did_you_mean("telepathy", registry) == "" and did_you_mean(7, registry) == ""


def test_the_supplement_and_curation_names_get_the_close_one_first():
    config = {**copy.deepcopy(DEFAULT), "source": {"name": "virtuebench"}, "models": ["refuse", "guess"], "report": {"compare": []}}
    config["curation"] = {"sources": ["mlvu", "lvbnch"], "difficulty_judge": "Rules"}
    config["supplement"] = {"models": ["refuse", "gues"], "sources": ["mlv"], "mcq_prompt": "standrd"}
    with pytest.raises(ConfigError) as error:
        check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True)
    text = str(error.value)
    assert "config.curation.sources[1]: 'lvbnch' is not allowed; did you mean 'lvbench' or 'longvideobench'? allowed values: " in text
    assert "config.curation.difficulty_judge: 'Rules' is not allowed; did you mean 'rules'? allowed values: " in text
    assert "config.supplement.models[1]: 'gues' is not allowed; did you mean 'guess'? allowed values (config.models): " in text
    assert "config.supplement.sources[0]: 'mlv' is not allowed; did you mean 'mlvu'? allowed values: " in text
    assert "config.supplement.mcq_prompt: 'standrd' is not allowed; did you mean 'standard'? allowed values: " in text


def _warned(config, about):
    return [warning for warning in check(config).warnings if warning.startswith(about)]


def test_trust_settings_the_chosen_scheme_does_not_read_are_warned_of():
    config = copy.deepcopy(DEFAULT)
    assert check(copy.deepcopy(DEFAULT)).warnings == []  # the demo sets none it does not use
    config["report"]["trust"] = {"wrong_answer": -1.0, "unwarranted_refusal": -0.5}  # explicit, even at the default
    assert _warned(config, "config.report.trust") == [
        "config.report.trust.wrong_answer: does nothing under scheme kalai (the default), which reads only confidence_target; "
        "wrong_answer is scheme refusal-credit's",
        "config.report.trust.unwarranted_refusal: does nothing under scheme kalai (the default), which reads only "
        "confidence_target; unwarranted_refusal is scheme refusal-credit's",
    ]
    config["report"]["trust"] = {"scheme": "refusal-credit", "confidence_target": 0.75, "wrong_answer": -2.0}
    assert _warned(config, "config.report.trust") == [
        "config.report.trust.confidence_target: does nothing under scheme refusal-credit, which reads only wrong_answer, "
        "unwarranted_refusal; confidence_target is scheme kalai's"
    ]
    config["report"]["trust"] = {"scheme": "kalai", "confidence_target": 0.75}
    assert _warned(config, "config.report.trust") == []


def test_settings_of_a_judge_its_kind_does_not_read_are_warned_of():
    config = _judges(
        strict={"kind": "rules", "model": "gpt-4o", "prompt": "cvrr"},
        letters={"kind": "mcq", "if_no_key": "rules"},
        both={"kind": "hybrid", "llm": None, "max_tokens": 5, "if_no_key": "rules"},
        plain={"kind": "rules"},
    )
    assert _warned(config, "config.judges") == [
        "config.judges.strict: model, prompt do nothing for a judge of kind rules, which reads reasoning, truncated",
        "config.judges.letters: if_no_key does nothing for a judge of kind mcq, which reads reasoning, truncated",
        "config.judges.both: max_tokens does nothing for a judge of kind hybrid, which reads reasoning, truncated, llm, if_no_key",
    ]


def test_sections_that_do_nothing_under_the_source_or_without_supplement_models_are_warned_of(tmp_path):
    config = {**copy.deepcopy(DEFAULT), "curation": {"seed": 3}, "annotation": {"batch_size": 10}, "supplement": {"level": 128}}
    assert _warned(config, "config.curation") == ["config.curation: seed does nothing without source virtuebench (they build it)"]
    assert _warned(config, "config.annotation") == ["config.annotation: batch_size does nothing without source virtuebench (they build it)"]
    assert _warned(config, "config.supplement") == [
        "config.supplement: level does nothing without config.supplement.models (the supplementary's table is made for them)"
    ]
    prompt = tmp_path / "grader.txt"
    prompt.write_text("Question: {question}\nTarget: {target}\nPredicted: {predicted_answer}\n")
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    config["supplement"]["authors_grader_prompt"] = str(prompt)
    warnings = check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True).warnings
    assert [w for w in warnings if w.startswith("config.") and not w.startswith("config.curation.revisions")] == [
        "config.supplement.authors_grader_prompt: does nothing with videoevalpro_grader: virtuebench; it is the prompt of "
        "videoevalpro_grader: authors"
    ]
    config["supplement"]["seed"] = 7  # the seed draws a sample; paper.yaml asks every question
    warnings = check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True).warnings
    assert (
        "config.supplement.seed: does nothing without supplement.max_questions_per_source (every question is asked; the seed draws the sample)"
        in warnings
    )
    config["supplement"]["max_questions_per_source"] = 20
    warnings = check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True).warnings
    assert not [w for w in warnings if w.startswith("config.supplement.seed")]


def test_a_dry_run_names_the_missing_keys_a_real_run_stops_on():
    from virtuebench.config import start_warnings

    config = {**copy.deepcopy(DEFAULT), "judge": "gpt-4o", "levels": [32, 64]}
    checked = check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True)
    assert start_warnings(checked, runs_jobs=True) == checked.warnings and len(checked.warnings) == 1
    assert start_warnings(checked, runs_jobs=False) == [
        *checked.warnings,
        "config.judges.gpt-4o: the judge needs an API key: set the environment variable OPENAI_API_KEY (or set config.judge: "
        "rules, or config.judges.gpt-4o.if_no_key: rules); a real run stops here, before any job",
    ]


def test_the_curations_open_choices_default_to_the_library_and_check_their_values():
    """curation.filter_frame_max_side and curation.moviechat_breakpoint (docs/annotation.md): the schema's defaults are
    the library's (the difficulty filter's 448 px; MovieChat-1K's adapter leaves breakpoints out), and a value outside
    the allowed ones is named."""
    import inspect

    from virtuebench.config import with_defaults
    from virtuebench.curation.filters import FILTER_FRAME_MAX_SIDE, filter_difficulty
    from virtuebench.sources import moviechat

    schema = REPO / "config" / "schema.yaml"
    curation = with_defaults({**copy.deepcopy(DEFAULT), "source": {"name": "virtuebench"}}, schema)["curation"]
    assert curation["filter_frame_max_side"] == FILTER_FRAME_MAX_SIDE == 448
    assert inspect.signature(filter_difficulty).parameters["max_side"].default == FILTER_FRAME_MAX_SIDE
    assert curation["moviechat_breakpoint"] == "exclude"
    assert inspect.signature(moviechat.convert).parameters["include_breakpoint"].default is False
    for choices in ({"filter_frame_max_side": None}, {"filter_frame_max_side": 1024}, {"moviechat_breakpoint": "include"}):
        assert schema_errors({**DEFAULT, "curation": choices}, schema, "config") == []
    wrong = schema_errors({**DEFAULT, "curation": {"filter_frame_max_side": 8, "moviechat_breakpoint": "some"}}, schema, "config")
    assert wrong == [
        "config.curation.filter_frame_max_side: 8 is less than the minimum of 16",
        "config.curation.moviechat_breakpoint: 'some' is not allowed; allowed values: exclude, include",
    ]


def test_a_source_revision_that_is_not_a_commit_is_warned_of_at_start_up():
    """Every adapter's release is pinned to a commit where one is known; ALLVB's is not (no commit of it could be
    confirmed: docs/sources.md), so the paper's config warns of it, and of a branch given in curation.revisions,
    and says how to pin it; a commit given there silences it, as does a release already on disk (raw_dirs)."""
    from virtuebench.sources import REAL_SOURCES, real_source

    unpinned = [name for name in REAL_SOURCES if not re.fullmatch(r"[0-9a-f]{40}", real_source(name).RELEASE.revision)]
    assert unpinned == ["allvb"]
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())

    def revision_warnings(config):
        checked = check_config(config, CONFIG_DIR, base_dir=REPO, environ={}, defer_keys=True)
        return [w for w in checked.warnings if w.startswith("config.curation.revisions")]

    assert revision_warnings(config) == [
        "config.curation.revisions: allvb (ALLVB/ALLVB) follows revision 'main', not a commit: pin one with "
        "curation.revisions.allvb: <40-hex sha> (the commit each download resolved is in its download.json)"
    ]
    config["curation"]["revisions"] = {"allvb": "a" * 40, "mlvu": "main"}
    assert [w.split(" follows")[0] for w in revision_warnings(config)] == ["config.curation.revisions: mlvu (MLVU/MVLU)"]
    config["curation"]["revisions"] = {}
    config["curation"]["raw_dirs"] = {"allvb": "/data/ALLVB"}
    assert revision_warnings(config) == []


# --- Named registry choices (config/models.yaml `choices`, config.model_choices) -------------------------------------

TOY_CHOICE = {
    "default": "plain",
    "description": "a toy choice",
    "evidence": "none: a test",
    "options": {
        "plain": {"description": "the entry as written"},
        "other": {
            "description": "other weights and settings",
            "hub_id": "org/other",
            "revision": "0123456789abcdef0123456789abcdef01234567",
            "settings": {"priors": {"count": "7"}, "text": None},
        },
    },
}


def toy_registry(tmp_path, choice=None):
    registry = {
        "toy": {
            "backend": "guess",
            "hub_id": "org/toy",
            "settings": {"text": "x", "priors": {"count": "3"}},
            "choices": {"toy_choice": choice or TOY_CHOICE},
        },
        "plain": {"backend": "refuse"},
    }
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    return {**copy.deepcopy(DEFAULT), "model_registry": str(tmp_path / "models.yaml"), "models": ["toy", "plain"]}


def test_an_option_overrides_the_entrys_keys_and_merges_its_settings_a_null_removing_one():
    from virtuebench.models.spec import apply_option, resolve_choices

    entry = {"backend": "guess", "hub_id": "org/toy", "revision": None, "settings": {"text": "x", "priors": {"count": "3"}}}
    resolved = apply_option(entry, TOY_CHOICE["options"]["other"])
    assert resolved == {
        "backend": "guess",
        "hub_id": "org/other",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "settings": {"priors": {"count": "7"}},  # priors replaced, text removed by its null
    }
    assert entry["settings"] == {"text": "x", "priors": {"count": "3"}}  # the registry's entry is left as it was
    as_written, in_effect = resolve_choices({**entry, "choices": {"toy_choice": TOY_CHOICE}}, {})
    assert as_written == entry and [c.describe() for c in in_effect] == ["toy_choice = plain (default)"]
    _, in_effect = resolve_choices({**entry, "choices": {"toy_choice": TOY_CHOICE}}, {"toy_choice": "other"})
    assert [c.describe() for c in in_effect] == ["toy_choice = other"]


def test_the_picked_option_reaches_the_models_tracked_params_and_no_other_models(tmp_path):
    config = toy_registry(tmp_path)
    default = check(config)
    assert default.specs["toy"].answers["hub_id"] == "org/toy" and "choices" not in default.specs["toy"].answers
    switched = check({**config, "model_choices": {"toy_choice": "other"}})
    assert switched.specs["toy"].answers["hub_id"] == "org/other"
    assert switched.specs["toy"].answers["settings"] == {"priors": {"count": "7"}}
    assert switched.models["toy"]["hub_id"] == "org/other"  # the resolved entry, which the plan's resources read
    assert switched.specs["plain"] == default.specs["plain"]
    assert [c.describe() for c in switched.choices["toy"]] == ["toy_choice = other"] and "plain" not in switched.choices


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ({"toy_choise": "other"}, "config.model_choices.toy_choise: no entry of the model registry"),
        ({"toy_choise": "other"}, "did you mean 'toy_choice'?"),
        (
            {"toy_choice": "othr"},
            "config.model_choices.toy_choice: 'othr' is not allowed; did you mean 'other'? allowed values: other, plain",
        ),
    ],
)
def test_an_unknown_choice_or_option_is_named_with_its_key(tmp_path, choices, message):
    with pytest.raises(ConfigError) as error:
        check({**toy_registry(tmp_path), "model_choices": choices})
    assert message in str(error.value)


def test_a_choices_default_must_be_one_of_its_options(tmp_path):
    config = toy_registry(tmp_path, {**TOY_CHOICE, "default": "plian"})
    with pytest.raises(ConfigError) as error:
        check(config)
    assert f"{tmp_path / 'models.yaml'}: toy.choices.toy_choice.default: 'plian' is not one of its options; did you mean 'plain'?" in str(
        error.value
    )


def test_an_options_settings_are_checked_against_the_backend(tmp_path):
    """An option is checked as the entry it makes, when the registry is read: a setting the backend lacks is named."""
    options = {"plain": {"description": "as written"}, "other": {"description": "a typo", "settings": {"temprature": 0.5}}}
    choice = {"default": "plain", "description": "d", "evidence": "e", "options": options}
    entry = {"backend": "openai", "settings": {"model": "m", "api_key_env": "X"}, "choices": {"toy_choice": choice}}
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"api": entry}))
    with pytest.raises(ConfigError) as error:
        check({**copy.deepcopy(DEFAULT), "model_registry": str(tmp_path / "models.yaml"), "models": ["refuse"]})
    assert "api (choices.toy_choice: other).settings: unknown key(s) 'temprature'" in str(error.value)


def test_every_choice_of_the_registry_has_its_default_among_its_options_and_evidence():
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    declared = {choice for entry in registry.values() for choice in entry.get("choices", {})}
    assert declared == {
        "mimo_vl_release",
        "mimo_vl_decoding",
        "qwen3_vl_decoding",
        "internvl35_stage",
        "internvl35_decoding",
        "qwen_video_budget",
        "api_time_labels",
        "gpt5_completion_tokens",
    }
    for choice in declared:  # every pick of each choice passes the config check with the models that declare it
        models = [name for name, entry in registry.items() if choice in entry.get("choices", {})]
        for option in registry[models[0]]["choices"][choice]["options"]:
            checked = check_config(
                {**copy.deepcopy(DEFAULT), "models": models, "model_choices": {choice: option}},
                REPO / "config",
                environ={},
                defer_keys=True,
            )
            assert all(any(c.choice == choice and c.option == option for c in checked.choices[m]) for m in models)


def test_a_choice_no_model_of_the_run_declares_is_named_in_a_warning(tmp_path):
    config = {**toy_registry(tmp_path), "models": ["plain"], "model_choices": {"toy_choice": "other"}}
    warnings = check(config).warnings
    assert "config.model_choices.toy_choice: does nothing for this run's models; it is declared by toy" in warnings


@pytest.mark.parametrize(
    ("entry", "problem", "warning"),
    [
        ({"backend": "guess", "samples": 3}, "decodes deterministically", None),
        ({"backend": "vllm", "hub_id": "x/y", "samples": 2}, "decodes deterministically", None),  # temperature 0
        ({"backend": "vllm", "hub_id": "x/y", "samples": 2, "settings": {"temperature": 0.7, "seed": 1}}, None, None),
        ({"backend": "vllm", "hub_id": "x/y", "samples": 2, "settings": {"temperature": 0.7}}, None, "with no seed"),
        ({"backend": "transformers", "hub_id": "x/y", "samples": 2}, "decodes deterministically", None),
        ({"backend": "transformers", "hub_id": "x/y", "samples": 2, "settings": {"generation": {"do_sample": True}}}, None, None),
        ({"backend": "openai", "samples": 2, "settings": {"model": "m", "temperature": None}}, None, "with no seed"),
        ({"backend": "guess", "samples": 1}, None, None),
    ],
)
def test_samples_on_a_backend_that_decodes_deterministically_is_an_error(entry, problem, warning):
    """`samples` > 1 repeats each item: an error where the backend's settings make every run the same, a warning where
    they sample with no seed (a rerun does not repeat the runs)."""
    from virtuebench.models import samples_check

    problems, warnings = samples_check("mine", entry)
    assert (problems[0] if problems else None) is None if problem is None else problem in problems[0]
    assert (warnings[0] if warnings else None) is None if warning is None else warning in warnings[0]
    if problems:
        assert problems[0].startswith("mine: samples: ")
    config = yaml.safe_load((REPO / "config" / "models.schema.yaml").read_text())
    assert config["properties"]["samples"]["x-rerun"] == "answers"
