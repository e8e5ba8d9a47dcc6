"""The checks of the curated benchmark's sources (source virtuebench: config.curation) and of the supplementary's table
(config.supplement): the models, sources and judges they name, and the keys and tokens their downloads need."""

from __future__ import annotations

import re
from typing import Any

from virtuebench.config.check_judges import curation_judge, defined_judges, judge_key_env
from virtuebench.config.model_registry import Registry
from virtuebench.config.review import Review, and_did_you_mean, not_allowed


def check_supplement(review: Review) -> None:
    from virtuebench.sources import REAL_SOURCES

    config, supplement = review.config, review.config["supplement"]
    for i, model in enumerate(supplement["models"]):
        if model not in config["models"]:
            review.problems.append(not_allowed(f"config.supplement.models[{i}]", model, config["models"], of="config.models"))
    for i, source in enumerate(supplement["sources"]):
        if source not in REAL_SOURCES:
            review.problems.append(not_allowed(f"config.supplement.sources[{i}]", source, REAL_SOURCES))
    from virtuebench.prompts import PROMPTS

    for key in ("mcq_prompt", "oe_prompt"):
        if supplement[key] not in PROMPTS:
            review.problems.append(not_allowed(f"config.supplement.{key}", supplement[key], PROMPTS))
    if supplement["models"] and config["source"]["name"] != "virtuebench":
        review.problems.append(
            "config.supplement.models: the supplementary's table needs source virtuebench (the source benchmarks' questions)"
        )
    if supplement["videoevalpro_grader"] == "authors":
        check_authors_grader(review, supplement)


def check_authors_grader(review: Review, supplement: dict[str, Any]) -> None:
    """supplement.videoevalpro_grader: authors needs the authors' prompt in a file (never in this repository) and,
    where the table judges VideoEval-Pro, the grader's API key."""
    from virtuebench.judge.letter_grade import GraderPromptError, LetterGradeSettings, read_grader_prompt

    path = supplement["authors_grader_prompt"]
    if not path:
        review.problems.append(
            "config.supplement.authors_grader_prompt: required with videoevalpro_grader: authors (a text file holding the "
            "authors' grading prompt; docs/supplement.md)"
        )
    else:
        try:
            read_grader_prompt(path)
        except GraderPromptError as error:
            review.problems.append(str(error))
    key_env = LetterGradeSettings(prompt_file=path or "").api_key_env
    judged = supplement["models"] and "videoeval-pro" in supplement["sources"]
    if judged and key_env and not review.environ.get(key_env):
        review.missing_key(
            f"config.supplement.videoevalpro_grader: the authors' grader needs an API key: set the environment variable {key_env} "
            "(or set config.supplement.videoevalpro_grader: virtuebench)"
        )


def check_curation(review: Review, registry: Registry, judges: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The curation's models (source virtuebench), their keys and the gated sources' token; the difficulty judge's
    resolved settings are added to `judges` (the judges in use) when it is not one of them already."""
    from virtuebench.sources import REAL_SOURCES, real_source

    config, curation = review.config, review.config["curation"]
    if config["source"]["name"] != "virtuebench":
        return {}
    defined = defined_judges(config)
    difficulty_judge = curation["difficulty_judge"]
    if difficulty_judge not in defined:
        review.problems.append(not_allowed("config.curation.difficulty_judge", difficulty_judge, defined))
    elif difficulty_judge not in judges:
        judges[difficulty_judge] = curation_judge(review, difficulty_judge, defined)
    for i, source in enumerate(curation["sources"]):
        if source not in REAL_SOURCES:
            review.problems.append(not_allowed(f"config.curation.sources[{i}]", source, REAL_SOURCES))
    curation_models = {}
    for key in ("filter_model", "reference_model"):
        name = curation[key]
        if name not in registry.entries:
            review.problems.append(
                f"config.curation.{key}: {name!r} is not in {registry.described()}{and_did_you_mean(name, registry.entries)}"
            )
            continue
        curation_models[name] = registry.entries[name]
        key_env = (registry.entries[name].get("settings") or {}).get("api_key_env")
        if key_env and not review.environ.get(key_env):
            review.missing_key(f"config.curation.{key}: {name} needs an API key: set the environment variable {key_env}")
    key_env = judge_key_env(defined[difficulty_judge]) if difficulty_judge in defined else None
    if key_env and not review.environ.get(key_env):
        # A hybrid's key was checked with its if_no_key (its kind's resolve); an llm judge's has no fallback here.
        review.missing_key(f"config.curation.difficulty_judge: {difficulty_judge} needs an API key: set the environment variable {key_env}")
    downloaded = [*curation["sources"], *(config["supplement"]["sources"] if config["supplement"]["models"] else [])]
    for source in dict.fromkeys(downloaded):
        if source in REAL_SOURCES and source not in curation["raw_dirs"]:
            release = real_source(source).RELEASE
            revision = curation["revisions"].get(source) or release.revision
            if not re.fullmatch(r"[0-9a-f]{40}", revision):
                # A branch moves: two runs a month apart may read different files with nothing to say so but
                # download.json's commit. Warned, not refused: no commit of some releases is known (docs/sources.md).
                review.warnings.append(
                    f"config.curation.revisions: {source} ({release.repo_id}) follows revision {revision!r}, not a commit: "
                    f"pin one with curation.revisions.{source}: <40-hex sha> (the commit each download resolved is in its download.json)"
                )
    if not review.environ.get("HF_TOKEN"):
        for source in curation["sources"]:
            if source in REAL_SOURCES and source not in curation["raw_dirs"] and real_source(source).RELEASE.gated:
                release = real_source(source).RELEASE
                review.missing_key(
                    f"config.curation.sources: {source} ({release.repo_id}) is gated: accept its terms at {release.url} "
                    "and set HF_TOKEN (or give an already downloaded copy in config.curation.raw_dirs)"
                )
    return curation_models
