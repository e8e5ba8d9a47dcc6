"""The judges' checks: every judge the config names is defined, resolved by its kind (virtuebench.judge.kinds), and
has its API key or falls back to the rules judge where it says so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from virtuebench.config.review import Review, not_allowed
from virtuebench.judge.kinds import judge_kind
from virtuebench.judge.spec import JudgeSpec


def defined_judges(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every judge the config may name: the built-in `rules`, then config.judges."""
    return {"rules": {"kind": "rules"}, **config["judges"]}


def judge_key_env(settings: dict[str, Any]) -> str | None:
    """The variable a judge reads its API key from (its settings' default where unset); None where its kind needs no
    key or checks its own (a hybrid's LLM judge: virtuebench.judge.hybrid)."""
    kind = judge_kind(settings["kind"])
    return kind.key_env(settings) if kind.key_env else None


def check_judges(review: Review) -> tuple[dict[str, dict[str, Any]], str]:
    """(settings of every judge in use, resolved by its kind; the judge the tables report after any key fallback)."""
    config = review.config
    defined = defined_judges(config)
    wanted = [("config.judge", config["judge"])] + [
        (f"config.compare_judges[{i}][{j}]", name) for i, pair in enumerate(config["compare_judges"]) for j, name in enumerate(pair)
    ]
    for where, name in wanted:
        if name not in defined:
            review.problems.append(not_allowed(where, name, defined) + " (define others under config.judges)")
    judge, judges = config["judge"], {}
    compared = {name for pair in config["compare_judges"] for name in pair}
    for name in dict.fromkeys(name for _, name in wanted if name in defined):
        settings = defined[name]
        resolved = judge_kind(settings["kind"]).resolved(review, name, settings, defined)
        if resolved is None:
            continue
        key_env = judge_key_env(settings)
        if key_env and not review.environ.get(key_env):
            if settings.get("if_no_key", "fail") == "rules" and name == judge and name not in compared:
                review.warnings.append(
                    f"{key_env} is not set: judging with rules instead of {name} (config.judges.{name}.if_no_key: rules)"
                )
                judge = "rules"
                judges["rules"] = {"kind": "rules"}
                continue
            review.missing_key(
                f"config.judges.{name}: the judge needs an API key: set the environment variable {key_env} "
                f"(or set config.judge: rules, or config.judges.{name}.if_no_key: rules)"
            )
        judges[name] = resolved
    return judges, judge


def curation_judge(review: Review, name: str, defined: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The settings of a difficulty judge that Table 2 does not use, resolved by its kind as `check_judges` resolves
    its own (a hybrid's `llm` becomes its LLM judge's settings): the filter's job runs it from these."""
    settings = defined[name]
    return judge_kind(settings["kind"]).resolved(review, name, settings, defined) or dict(settings)


def judge_specs(judges: Mapping[str, dict[str, Any]]) -> dict[str, JudgeSpec]:
    """Each judge in use as its jobs run it, from its settings as its kind resolved them: made once, here."""
    return {name: JudgeSpec.resolve(name, settings) for name, settings in judges.items()}
