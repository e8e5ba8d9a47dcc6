"""virtuebench: does a video-language model answer honestly when the frames lack the evidence?

The package holds every piece of logic the Snakemake workflow calls; each stage is a module
(`sources`, `frames`, `models`, `inference`, `judge`, `metrics`, `report`) with its own CLI.
"""

__version__ = "0.1.0"

#: The ground truth of an unanswerable (instance, level): the paper's exact string.
REFUSAL_ANSWER = "The video does not provide enough information."

#: The paper's frame levels.
LEVELS = (64, 128, 256, 512, 1024)
