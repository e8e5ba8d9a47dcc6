"""virtuebench.config as a package of one-job modules: each short, each named in the package's docstring, every name the
workflow and the other modules import from `virtuebench.config` still there; and each judge in use resolved once into
its JudgeSpec, whose halves the plan hands the rules as they are."""

from __future__ import annotations

import ast
import copy
import json

import yaml
from helpers.data import REPO

import virtuebench.config
from virtuebench.config import check_config, with_defaults
from virtuebench.judge.kinds import split_settings
from virtuebench.judge.spec import JudgeSpec
from virtuebench.plan import Plan

PACKAGE = REPO / "src" / "virtuebench" / "config"
CONFIG_DIR = REPO / "config"


def test_each_module_of_the_package_is_under_300_lines_and_named_in_its_docstring():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 1
    long = {path.name: n for path in modules if (n := len(path.read_text().splitlines())) >= 300}
    assert long == {}, "split the module: one job each"
    listed = {line.split()[0] for line in (virtuebench.config.__doc__ or "").splitlines() if line.startswith("  ")}
    assert listed == {path.stem for path in modules if path.stem != "__init__"}


def _imported_from_config() -> dict[str, set[str]]:
    """{name: files} of every `from virtuebench.config import NAME` in the Snakefile, rules/, src/ and tests/."""
    files = [REPO / "Snakefile", *REPO.glob("rules/*.smk"), *REPO.glob("src/**/*.py"), *REPO.glob("tests/**/*.py")]
    names: dict[str, set[str]] = {}
    for path in files:
        text = path.read_text()
        if "virtuebench.config import" not in text:
            continue
        # A rules file is Snakemake, not Python: its import lines are.
        lines = [line for line in text.splitlines() if line.lstrip().startswith("from virtuebench.config import")]
        tree = ast.parse(text) if path.suffix == ".py" else ast.parse("\n".join(line.strip().split("#")[0] for line in lines))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "virtuebench.config":
                for alias in node.names:
                    names.setdefault(alias.name, set()).add(str(path.relative_to(REPO)))
    return names


def test_every_name_imported_from_the_package_is_there():
    imported = _imported_from_config()
    assert {"check_config", "ConfigError", "start_warnings", "Checked"} <= set(imported)  # the Snakefile's and the plan's
    missing = {name: sorted(files) for name, files in imported.items() if not hasattr(virtuebench.config, name)}
    assert missing == {}


def _paper(environ: dict[str, str]):
    config = yaml.safe_load((CONFIG_DIR / "paper.yaml").read_text())
    checked = check_config(copy.deepcopy(config), CONFIG_DIR, base_dir=REPO, environ=environ, defer_keys=True)
    return checked, Plan.build(with_defaults(config, CONFIG_DIR / "schema.yaml"), checked, CONFIG_DIR)


def test_each_judge_in_use_is_resolved_once_and_the_plan_hands_on_its_halves():
    """The paper's run: its report judge (an llm judge) and its difficulty judge each have a spec made by the config
    check from their resolved settings; the judging jobs' params are the spec's halves as JSON, nothing split again."""
    checked, plan = _paper({"OPENAI_API_KEY": "sk-x"})
    assert set(checked.judge_specs) == set(checked.judges) and plan.judge in checked.judge_specs
    assert plan.config["curation"]["difficulty_judge"] in checked.judge_specs
    for name, spec in checked.judge_specs.items():
        assert (spec.name, spec.settings) == (name, checked.judges[name])
        assert (spec.answers, spec.run) == split_settings(checked.judges[name])
        assert plan.judge_spec(name) is spec
        assert json.loads(plan.judge_config(spec)) == spec.answers and json.loads(plan.judge_run_config(spec)) == spec.run
    llm = checked.judge_specs[plan.judge]
    assert llm.kind == "llm" and "api_key_env" in llm.run and "api_key_env" not in llm.answers
    # The difficulty filter judges answers itself: the judging stage's input settings are left out of its param.
    assert "reasoning" in llm.answers and "reasoning" not in llm.tracked(responses=False)
    assert {key: value for key, value in llm.answers.items() if key != "reasoning"} == llm.tracked(responses=False)


def test_a_judge_not_in_use_gets_its_spec_from_config_judges_or_is_rules():
    checked, plan = _paper({})
    assert "strict" not in checked.judge_specs
    plan.config["judges"]["strict"] = {"kind": "rules", "truncated": "judge"}
    assert plan.judge_spec("strict") == JudgeSpec.resolve("strict", {"kind": "rules", "truncated": "judge"})
    assert plan.judge_spec("strict").answers["truncated"] == "judge"
    assert plan.judge_spec("no-such-judge").settings == {"kind": "rules"}
