"""The checks of what the run asks: the source and its levels, the prompts and the report, the names that become
folders, and the settings given that do nothing under the other choices."""

from __future__ import annotations

import re
from typing import Any

from virtuebench.config.review import Review, and_did_you_mean, not_allowed
from virtuebench.levels import LEVELS
from virtuebench.report.paper import paper_models


def check_source_and_levels(review: Review) -> None:
    # The source's name and the prompts' are checked with the schema (first), whose allowed values load_schema takes
    # from the code's registries, so they are not checked again here.
    config = review.config
    if config["source"]["name"] == "cvrr":
        from virtuebench.cvrr.source import source_levels

        level = config["source"]["settings"].get("level", 8)
        try:
            levels = source_levels(level)
        except ValueError as error:
            review.problems.append(f"config.source.settings.level: {error}")
            return
        if sorted(config["levels"]) != sorted(levels):
            review.problems.append(
                f"config.levels: {config['levels']} must be {levels}, the CVRR-ES source's levels (config.source.settings.level)"
            )
        return
    unusual = [level for level in config["levels"] if level not in LEVELS]
    if unusual:
        review.warnings.append(
            f"config.levels: {unusual} are not the paper's levels {list(LEVELS)}: accepted, but the tables then differ from the paper's"
        )


def check_cvrr_model_levels(review: Review, registry: Any) -> None:
    """CVRR-ES's tables have one column per model: a model sampled at two of the source's frame counts would pool
    them, so each runs at one (its registry entry's `levels` picks it where the source lists more than one)."""
    config = review.config
    if config["source"]["name"] != "cvrr" or len(config["levels"]) < 2:
        return
    for index, model in enumerate(config["models"]):
        entry = registry.entries.get(model)
        if entry is None:
            continue  # named by the models' own check
        own, max_level = entry.get("levels"), entry.get("max_level")
        runs = [n for n in config["levels"] if (own is None or n in own) and (max_level is None or n <= max_level)]
        if len(runs) > 1:
            review.problems.append(
                f"config.models[{index}]: model {model} would run at {runs} frames, and CVRR-ES's tables would pool them: "
                f"give its registry entry `levels: [n]`, one of the source's levels {config['levels']}"
            )


def check_prompts_and_report(review: Review) -> None:
    config, report = review.config, review.config["report"]
    if report["prompt"] not in config["prompts"]:
        review.problems.append(not_allowed("config.report.prompt", report["prompt"], config["prompts"], of="config.prompts"))
    trust = report["trust"]
    if not trust["wrong_answer"] < trust["unwarranted_refusal"]:
        review.problems.append(
            "config.report.trust: wrong_answer must be below unwarranted_refusal (a guess must cost more than an honest refusal), "
            f"got {trust['wrong_answer']} and {trust['unwarranted_refusal']}"
        )
    for i, pair in enumerate(report["compare"]):
        for arm in pair:
            model, _, prompt = str(arm).partition(":")
            if model not in config["models"]:
                review.problems.append(
                    f"config.report.compare[{i}]: model {model!r} is not in config.models{and_did_you_mean(model, config['models'])}"
                )
            if prompt and prompt not in config["prompts"]:
                review.problems.append(
                    f"config.report.compare[{i}]: prompt {prompt!r} is not in config.prompts{and_did_you_mean(prompt, config['prompts'])}"
                )
    rows = paper_models()
    for model, row in report.get("paper_names", {}).items():
        if model not in config["models"]:
            review.problems.append(
                f"config.report.paper_names: model {model!r} is not in config.models{and_did_you_mean(model, config['models'])}"
            )
        if row not in rows:
            review.problems.append(
                f"config.report.paper_names.{model}: {row!r} is not a row of the paper's Tables 1 and 2{and_did_you_mean(row, rows)}"
            )


def check_names(review: Review) -> None:
    name_pattern = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # the workflow's wildcard constraints
    for where, names in (("config.models", review.config["models"]), ("config.judges", list(review.config["judges"]))):
        for name in names:
            if not name_pattern.match(name):
                review.problems.append(f"{where}: name {name!r} must be letters, digits, '.', '_' or '-' (it becomes a folder name)")


#: The report.trust settings each scheme reads besides `scheme` (virtuebench.metrics.TrustWeights.value).
TRUST_SCHEME_SETTINGS = {"kalai": ("confidence_target",), "refusal-credit": ("wrong_answer", "unwarranted_refusal")}


def check_unused_settings(review: Review, given: dict[str, Any]) -> None:
    """Warn of each setting the config gives (`given`: before the schema's defaults) that does nothing under its other
    choices: the other trust scheme's, one a judge's kind does not read, the curation's without source virtuebench,
    the supplement's without supplement.models, another benchmark's block, the authors' grader prompt without the
    authors' grader, the supplement's seed without its sample size."""
    config = review.config
    trust = (given.get("report") or {}).get("trust") or {}
    scheme = config["report"]["trust"]["scheme"]
    chosen = f"scheme {scheme}" + ("" if "scheme" in trust else " (the default)")
    for other, keys in TRUST_SCHEME_SETTINGS.items():
        for key in (key for key in keys if other != scheme and key in trust):
            review.warnings.append(
                f"config.report.trust.{key}: does nothing under {chosen}, which reads only "
                f"{', '.join(TRUST_SCHEME_SETTINGS[scheme])}; {key} is scheme {other}'s"
            )
    from virtuebench.judge.kinds import judge_kind

    for name, settings in config["judges"].items():
        reads = list(judge_kind(settings["kind"]).reads())  # an llm judge refuses those it does not read (its resolve)
        unread = [key for key in settings if key != "kind" and key not in reads]
        if unread:
            review.warnings.append(
                f"config.judges.{name}: {', '.join(unread)} {'does' if len(unread) == 1 else 'do'} nothing for a judge of kind "
                f"{settings['kind']}, which reads {', '.join(reads) if reads else 'no setting but kind'}"
            )
    unused = []
    if config["source"]["name"] != "virtuebench":
        unused += [(section, "without source virtuebench (they build it)") for section in ("curation", "annotation")]
    if not config["supplement"]["models"]:
        unused.append(("supplement", "without config.supplement.models (the supplementary's table is made for them)"))
    from virtuebench.benchmarks import REGISTRY as BENCHMARKS

    unused += [(name, f"without benchmark: {name} (its rules file reads them)") for name in BENCHMARKS if name != config["benchmark"]]
    for section, why in unused:
        keys = sorted(key for key in given.get(section) or {} if key != "models")
        if keys:
            review.warnings.append(f"config.{section}: {', '.join(keys)} {'does' if len(keys) == 1 else 'do'} nothing {why}")
    supplement, grader = config["supplement"], config["supplement"]["videoevalpro_grader"]
    if supplement["models"] and (given.get("supplement") or {}).get("authors_grader_prompt") and grader != "authors":
        review.warnings.append(
            f"config.supplement.authors_grader_prompt: does nothing with videoevalpro_grader: {grader}; "
            "it is the prompt of videoevalpro_grader: authors"
        )
    if supplement["models"] and "seed" in (given.get("supplement") or {}) and not supplement["max_questions_per_source"]:
        review.warnings.append(
            "config.supplement.seed: does nothing without supplement.max_questions_per_source (every question is asked; "
            "the seed draws the sample)"
        )
