"""A folder for Snakemake's own report (`snakemake --report results/report.zip`): the report takes a site only as a
folder output (`report(directory(...), htmlindex="index.html")`), and the results browser's rule declares its
index.html (its contact sheets are kept from run to run beside it). `link_folder` gives the report a folder of its
own, of hard links: no second copy on disk, and a copy only where the file system has no hard links. A file the
browser rewrites in place (index.html, a contact sheet) changes in both folders at once; the workflow links the folder
again after every browser job, so a finished run's two folders hold the same files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def link_folder(source: str | Path, target: str | Path) -> dict[str, int]:
    """`target` as a copy of `source` made of hard links (copies where linking fails), written into a sibling folder
    and renamed into place: complete or absent. Returns how many files were linked and copied."""
    source, target = Path(source), Path(target)
    if not source.is_dir():
        raise FileNotFoundError(f"{source} is not a folder")
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    counts = {"linked": 0, "copied": 0}

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
            counts["linked"] += 1
        except OSError:  # another file system, or one without hard links
            shutil.copy2(src, dst)
            counts["copied"] += 1

    try:
        shutil.copytree(source, staging, copy_function=link)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return counts
