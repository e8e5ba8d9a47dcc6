"""Configuration checks with messages a person can act on.

The JSON schemas (config/schema.yaml, config/models.schema.yaml) describe the shape; this package turns each violation
into one line naming the key and the allowed values, and checks the references between config, model registry and the
code's registries (backends, prompts, judges). One job per module:

  schema          the schemas with the registries' names filled in, their errors as lines, the defaults
  model_registry  the model registry files (`model_registry`), each entry and its choices checked
  model_specs     each model's entry resolved to its ModelSpec; the stored frames' pixel cap
  results         where results and logs go; results folders that would write into each other's
  review          what the section checks read and add to; ConfigError
  check_run       the source and levels, prompts and report, names, settings that do nothing
  check_judges    the judges in use, their keys, and their JudgeSpecs
  check_models    the models and config.model_choices
  check_sources   the curation's sources and models, the supplement's
  checked         check_config, the checks in order, and its result `Checked`
"""

from virtuebench.config.checked import Checked, check_config, start_warnings
from virtuebench.config.model_registry import Registry, load_registries, load_registry, registry_warnings, resolve_registry
from virtuebench.config.model_specs import frame_size_warnings, frame_storage_pixels, model_spec, setting_classes
from virtuebench.config.results import RESULTS_FOLDERS, known_results_folders, logs_folder, results_collision
from virtuebench.config.review import ConfigError
from virtuebench.config.schema import CURATED_SOURCE, load_schema, schema_errors, with_defaults
from virtuebench.support.settings import RERUN_CLASSES, did_you_mean

__all__ = [
    "CURATED_SOURCE",
    "RERUN_CLASSES",
    "RESULTS_FOLDERS",
    "Checked",
    "ConfigError",
    "Registry",
    "check_config",
    "did_you_mean",
    "frame_size_warnings",
    "frame_storage_pixels",
    "known_results_folders",
    "load_registries",
    "load_registry",
    "load_schema",
    "logs_folder",
    "model_spec",
    "registry_warnings",
    "resolve_registry",
    "results_collision",
    "schema_errors",
    "setting_classes",
    "start_warnings",
    "with_defaults",
]
