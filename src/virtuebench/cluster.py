"""Installing the SLURM profile where `snakemake --profile slurm` finds it (~/.config/snakemake/slurm),
with the account and partitions filled from the environment or profiles/slurm/local.yaml.

    python -m virtuebench.cluster install-profile [--source profiles/slurm] [--target ~/.config/snakemake/slurm]
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from virtuebench.support.settings import settings_from_dict

ENVIRONMENT = {"slurm_account": "VB_SLURM_ACCOUNT", "slurm_partition": "VB_SLURM_PARTITION", "gpu_partition": "VB_SLURM_GPU_PARTITION"}


@dataclass(frozen=True)
class LocalSettings:
    """profiles/slurm/local.yaml: the cluster's account and partitions (the environment's variables win)."""

    slurm_account: str | None = None
    slurm_partition: str | None = None
    gpu_partition: str | None = None


def install_profile(source: Path, target: Path, environ: dict[str, str] | None = None) -> dict:
    environ = os.environ if environ is None else environ
    profile = yaml.safe_load((source / "config.yaml").read_text())
    local_file = source / "local.yaml"
    local = settings_from_dict(LocalSettings, yaml.safe_load(local_file.read_text()) or {} if local_file.exists() else {}, str(local_file))
    values = {key: environ.get(variable) or getattr(local, key) for key, variable in ENVIRONMENT.items()}
    resources = profile.setdefault("default-resources", {})
    for key in ("slurm_account", "slurm_partition"):
        if values[key]:
            resources[key] = values[key]
    if values["gpu_partition"]:
        profile.setdefault("set-resources", {}).setdefault("run_inference", {})["slurm_partition"] = values["gpu_partition"]
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.yaml").write_text(
        "# Installed by `make slurm-profile` from profiles/slurm; edit there.\n" + yaml.safe_dump(profile, sort_keys=False)
    )
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.cluster", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install-profile")
    install.add_argument("--source", default="profiles/slurm")
    install.add_argument("--target", default=str(Path.home() / ".config" / "snakemake" / "slurm"))
    args = parser.parse_args(argv)
    try:
        values = install_profile(Path(args.source), Path(args.target))
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    shown = ", ".join(f"{k}={v}" for k, v in values.items() if v) or "no account or partition (the plugin's defaults)"
    print(f"installed {args.target}/config.yaml ({shown}); run: snakemake --profile slurm results/table2.tex", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
