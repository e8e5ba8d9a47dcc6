"""Installing the SLURM profile where `snakemake --profile slurm` finds it (~/.config/snakemake/slurm), fitted to the
cluster it lands on, and starting a one-node SLURM to try it on a workstation.

`install-profile` looks before it writes:
- software: `conda` (with `mamba` as its frontend where present) -> each model runs in its route's conda env
  (envs/*.yaml); none -> the jobs run in the environment that runs Snakemake, and each inference job in its
  route's virtual environment where `make envs` built one (.envs/<name>/); it says which.
- accounting: whether `sacct` answers. Without accounting (small clusters; the one-node SLURM below) the plugin
  can neither read job states from sacct nor guess an account, and waits forever: job states then come from
  squeue and no account is asked for.
- account and partitions: from VB_SLURM_ACCOUNT, VB_SLURM_PARTITION, VB_SLURM_GPU_PARTITION or
  profiles/slurm/local.yaml (the environment wins); none written in the repository.
Snakemake 9 deploys conda envs only through a `conda` executable (the rattler-based deployment plugin needs
Snakemake's plugin interface for software deployment, which Snakemake 9 does not have).

    python -m virtuebench.cluster install-profile [--source profiles/slurm] [--target ~/.config/snakemake/slurm]
    python -m virtuebench.cluster start-local     # root, Debian or Ubuntu: a one-node SLURM (profiles/slurm/start-local.sh)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from virtuebench.support.settings import settings_from_dict

ENVIRONMENT = {"slurm_account": "VB_SLURM_ACCOUNT", "slurm_partition": "VB_SLURM_PARTITION", "gpu_partition": "VB_SLURM_GPU_PARTITION"}
RUN_COMMAND = ".venv/bin/snakemake --profile slurm results/table2.tex"
START_LOCAL = Path(__file__).resolve().parents[2] / "profiles" / "slurm" / "start-local.sh"


@dataclass(frozen=True)
class LocalSettings:
    """profiles/slurm/local.yaml: the cluster's account and partitions (the environment's variables win)."""

    slurm_account: str | None = None
    slurm_partition: str | None = None
    gpu_partition: str | None = None


@dataclass(frozen=True)
class Cluster:
    """What the submitting machine has."""

    conda: str | None  # the conda executable, if any
    mamba: bool  # mamba is there too: Snakemake's faster conda frontend
    accounting: bool  # sacct answers: job states and the account can be read from the accounting database
    accounting_note: str  # what sacct said


def detect(which=shutil.which, run=subprocess.run) -> Cluster:
    conda = which("conda")
    sacct = which("sacct")
    if not sacct:
        accounting, note = False, "no sacct command"
    else:
        try:
            result = run([sacct, "-n", "-X", "--format=JobID", "-S", "now"], capture_output=True, text=True, timeout=30)
            accounting = result.returncode == 0
            said = (result.stderr or result.stdout).strip()
            note = "sacct answers" if accounting else (said.splitlines()[-1] if said else f"sacct exited {result.returncode}")
        except (OSError, subprocess.TimeoutExpired) as error:
            accounting, note = False, f"sacct did not answer ({error})"
    return Cluster(conda, bool(which("mamba")), accounting, note)


def install_profile(source: Path, target: Path, environ: dict[str, str] | None = None, cluster: Cluster | None = None) -> dict:
    """Write the profile for this cluster; the values and choices made, for the summary."""
    environ = os.environ if environ is None else environ
    cluster = detect() if cluster is None else cluster
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
    if cluster.conda:
        profile["software-deployment-method"] = "conda"
        if cluster.mamba:
            profile["conda-frontend"] = "mamba"
        software = f"conda ({cluster.conda}{', mamba frontend' if cluster.mamba else ''}): each model in its route's env, envs/*.yaml"
    else:
        profile.pop("software-deployment-method", None)
        software = (
            "no conda: the jobs run in the environment that runs Snakemake (.venv), each inference job in its route's "
            "virtual environment where one is built (.envs/<name>/: `make envs` builds one per envs/*.yaml)"
        )
    if not cluster.accounting:
        profile["slurm-status-command"] = "squeue"
        if not values["slurm_account"]:
            profile["slurm-no-account"] = True
        accounting = f"no accounting ({cluster.accounting_note}): job states from squeue" + (
            ", no account asked for" if not values["slurm_account"] else ""
        )
    else:
        accounting = "accounting: job states from sacct"
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.yaml").write_text(
        "# Installed by `make slurm-profile` from profiles/slurm for this cluster; edit there and run it again.\n"
        + yaml.safe_dump(profile, sort_keys=False)
    )
    return {**values, "software": software, "accounting": accounting}


def start_local() -> int:
    """A one-node SLURM on this machine (root, Debian or Ubuntu), to try the cluster path; idempotent."""
    if os.geteuid() != 0:
        print(f"error: starting SLURM needs root: sudo bash {START_LOCAL}", file=sys.stderr)
        return 1
    return subprocess.run(["bash", str(START_LOCAL)]).returncode


def _install_profile(args: argparse.Namespace) -> int:
    if not shutil.which("sbatch"):
        print("error: no sbatch on this machine: run this where jobs are submitted (or `make slurm-local` to try it here)", file=sys.stderr)
        return 1
    try:
        values = install_profile(Path(args.source), Path(args.target))
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    names = ", ".join(f"{k}={values[k]}" for k in ENVIRONMENT if values[k]) or "no account or partition set (the cluster's defaults)"
    print(
        f"installed {args.target}/config.yaml\n  {names}\n  software: {values['software']}\n  {values['accounting']}\nrun: {RUN_COMMAND}",
        file=sys.stderr,
    )
    return 0


def _start_local(args: argparse.Namespace) -> int:
    return start_local()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.cluster", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install-profile", help="write the SLURM profile, fitted to this cluster")
    install.add_argument("--source", default="profiles/slurm")
    install.add_argument("--target", default=str(Path.home() / ".config" / "snakemake" / "slurm"))
    install.set_defaults(func=_install_profile)
    local = commands.add_parser("start-local", help="a one-node SLURM on this machine (root, Debian or Ubuntu)")
    local.set_defaults(func=_start_local)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
