"""The benchmarks: each one's name (the config's `benchmark`), its rules file, its default targets and the settings of
its config block (`config.<name>`).

A benchmark with tables of its own lives in one package, `virtuebench.<name>` (CVRR-ES's is the model), whose module
`benchmark.py` defines `BENCHMARK = Benchmark(name, ...)`. That module is its registration: REGISTRY lists every
package of virtuebench that has one, found by its file and without importing it, so a new benchmark touches no shared
file (`python -m virtuebench.benchmarks` prints what was found and where). Everything else reads this table: the
Snakefile includes the rules file of the benchmark the config names, `rule all` builds its targets, and the config
check takes the allowed names and each block's schema from it (virtuebench.config.load_schema). A new benchmark:
docs/extending.md.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from virtuebench.support.registry import Registry
from virtuebench.support.settings import settings_from_dict, settings_schema

#: The module a benchmark package registers itself in, and the name it defines there.
MODULE, ATTRIBUTE = "benchmark", "BENCHMARK"


def discover(package_dir: Path = Path(__file__).parent) -> dict[str, str]:
    """{benchmark name: "module:attribute" of its Benchmark}: VirtueBench's own first, then every package of virtuebench
    with a `benchmark.py`, by name (the package's name is the benchmark's: `benchmark()` checks that it says so)."""
    found = {"virtuebench": "virtuebench.benchmarks:VIRTUEBENCH"}
    for module in sorted(package_dir.glob(f"*/{MODULE}.py")):
        if (module.parent / "__init__.py").is_file():
            found[module.parent.name] = f"virtuebench.{module.parent.name}.{MODULE}:{ATTRIBUTE}"
    return found


@dataclass(frozen=True)
class Benchmark:
    name: str
    #: Its rules file, relative to the workflow's folder (the Snakefile includes it when the config names this benchmark).
    rules: str
    #: What `snakemake` builds by default: paths under the results folder. None: VirtueBench's own, which depend on the
    #: curation and the supplement (default_targets in rules/common.smk).
    targets: tuple[str, ...] | None = None
    #: The dataclass of its config block, `config.<name>` (fields made with virtuebench.support.settings.setting: each
    #: with its rerun class and the JSON Schema of its value), or None where it has no block.
    settings: type | None = None

    def settings_from(self, config: dict[str, Any]) -> Any:
        """Its config block as its settings dataclass, every default filled in (the config check has checked the block)."""
        if self.settings is None:
            raise ValueError(f"benchmark {self.name} has no settings of its own (config.{self.name})")
        return settings_from_dict(self.settings, dict(config.get(self.name) or {}), f"config.{self.name}")

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of its config block: an object of its settings, none required, nothing else."""
        assert self.settings is not None
        defaults = {f.name: f.default for f in fields(self.settings)}
        properties = {name: {**spec, "default": defaults[name]} for name, spec in settings_schema(self.settings).items()}
        return {"type": "object", "default": {}, "additionalProperties": False, "properties": properties}


#: VirtueBench itself: its tables and figures (rules/report.smk); its settings are the schema's own (config.report ...).
VIRTUEBENCH = Benchmark("virtuebench", rules="rules/report.smk")


#: benchmark name -> "module:attribute" of its Benchmark (virtuebench.support.registry), found by `discover`; the name
#: is what `benchmark:` says in the config.
REGISTRY: Registry[Benchmark] = Registry("benchmark", discover(), expect=Benchmark, named=True)


def benchmark(name: str) -> Benchmark:
    return REGISTRY[name]


def settings_blocks() -> dict[str, dict[str, Any]]:
    """{name: the JSON Schema of its config block} of every benchmark that has one (the config's top-level keys)."""
    return {name: benchmark(name).schema() for name in REGISTRY if benchmark(name).settings is not None}


def main() -> int:
    """python -m virtuebench.benchmarks: every benchmark found, its module, rules file and default targets."""
    for name, where in REGISTRY.targets.items():
        found = benchmark(name)
        targets = ", ".join(found.targets) if found.targets is not None else "VirtueBench's tables and figures"
        print(f"{name}: {where}; rules {found.rules}; builds {targets}")
    return 0


if __name__ == "__main__":
    # the registry checks each entry against this module's Benchmark as imported, not as __main__
    from virtuebench.benchmarks import main as imported_main

    sys.exit(imported_main())
