"""`python -m virtuebench.verify` (`make verify`): check a configuration's results as the workflow's start does
(verify.check_configuration), list every stale record and report output, and Snakemake's report (report.zip in the
results folder) where it packs other files than those there now (virtuebench.report.packed), and end with the commands
that rebuild them.
It lives here, above the plan in the import layers, because it builds the configuration's plan as the Snakefile does;
virtuebench.verify (a layer below) runs it under its own name."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from virtuebench.config import ConfigError, check_config, with_defaults
from virtuebench.instances import read_instances
from virtuebench.plan import Plan
from virtuebench.report.packed import report_problems
from virtuebench.support.stops import run_stoppable
from virtuebench.verify import REPORT_FILES, check, check_configuration

#: The configuration the workflow runs on where no --configfile is given (the Snakefile's), and the schemas beside it.
DEFAULT_CONFIG = "config/config.yaml"
CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"


def _merge(config: dict, given: dict) -> None:
    """`given` merged into `config` as Snakemake merges its --configfile files, later over earlier: mappings key by
    key, any other value replaced."""
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            _merge(config[key], value)
        else:
            config[key] = value


def load_plan(configfiles: Sequence[str | Path], results: str | None = None) -> Plan:
    """The plan of configuration files as the Snakefile builds it (merged in order, checked, the schema's defaults
    filled in), with its results folder `results` where given; ConfigError (one line per problem) where a file cannot
    be read or the configuration is wrong. API keys are not needed: nothing is asked."""
    import yaml

    config: dict = {}
    for name in configfiles:
        try:
            given = yaml.safe_load(Path(name).read_text()) or {}
        except OSError as error:
            reason = error.strerror or error
            raise ConfigError(
                f"{name}: cannot be read ({reason}): give the configuration the workflow runs on, --configfile FILE"
            ) from None
        except yaml.YAMLError as error:
            raise ConfigError(f"{name}: not valid YAML ({str(error).splitlines()[0]})") from None
        if not isinstance(given, dict):
            raise ConfigError(f"{name}: expected a mapping of settings, got {type(given).__name__}")
        _merge(config, given)
    if results is not None:
        config["results"] = results
    checked = check_config(config, CONFIG_DIR, base_dir=".", defer_keys=True)
    return Plan.build(with_defaults(config, CONFIG_DIR / "schema.yaml"), checked, CONFIG_DIR)


def rerun_command(configfiles: Sequence[str] | None, results: str | None = None) -> str:
    """The command that rebuilds what is stale: the workflow on the same configuration (the default profile, and with
    it every core, is picked up by itself)."""
    words = ["snakemake", *(["--configfile", *configfiles] if configfiles else [])]
    return " ".join(words + ([f"--config results={results}"] if results is not None else []))


def report_command(configfiles: Sequence[str] | None, report_zip: str | Path) -> str:
    """The command that makes Snakemake's report again (`make report`, on the default configuration)."""
    return " ".join(["snakemake", *(["--configfile", *configfiles] if configfiles else []), "--report", str(report_zip)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", nargs="*", help="judgment files to check (default: every one the configuration reports)")
    parser.add_argument(
        "--configfile", nargs="+", help=f"the configuration file(s) the workflow runs on (default: {DEFAULT_CONFIG}, as the workflow's)"
    )
    parser.add_argument("--results", default=None, help="the results folder (default: the configuration's)")
    parser.add_argument("--report", nargs="*", default=None, help="report outputs made from the judgments (default: the usual ones)")
    parser.add_argument("--report-zip", help="Snakemake's report to check (default: report.zip in the results folder, where there is one)")
    args = parser.parse_args(argv)
    try:
        plan = load_plan(args.configfile or [DEFAULT_CONFIG], args.results)
    except ConfigError as error:
        print(f"virtuebench.verify: {error}", file=sys.stderr)
        return 2
    root = Path(plan.results)
    if args.report_zip and not Path(args.report_zip).is_file():
        print(f"virtuebench.verify: --report-zip {args.report_zip}: no such file (make it with `make report`)", file=sys.stderr)
        return 2
    outputs = args.report if args.report is not None else [str(root / name) for name in REPORT_FILES] + plan.agreement_targets()
    if args.judgments:
        paths, chain = args.judgments, check(args.judgments, report_outputs=outputs)
    else:
        table = Path(plan.res("instances.parquet"))
        instances = read_instances(table) if table.exists() else []
        paths, chain = plan.checked_judgments(instances), check_configuration(plan, outputs, instances=instances)
    for problem in chain.problems:
        print(f"stale: {problem}")
    report_zip = Path(args.report_zip) if args.report_zip else root / "report.zip"
    report = report_problems(report_zip, stale=chain.stale) if report_zip.is_file() else []
    for problem in report:
        print(f"stale: {report_zip}: {problem}")
    if chain.problems:
        records = [path for path in chain.stale if path not in set(map(str, outputs))]
        print(
            f"{len(chain.problems)} problem(s): a run removes the {len(records)} stale record(s) and rebuilds them and the "
            "report outputs made from them. Run:"
        )
        print(rerun_command(args.configfile, args.results))
    if report:
        print(f"{report_zip} is not the report of the results there now: after the workflow has run, make it again (`make report`):")
        print(report_command(args.configfile, report_zip))
    if chain.problems or report:
        return 1
    checked = f"; {report_zip} packs them as they are" if report_zip.is_file() else ""
    print(f"{len(paths)} judgments file(s) checked against their responses, frames and the instances table: nothing is stale{checked}")
    return 0


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback
    sys.exit(run_stoppable(lambda stop: main()))
