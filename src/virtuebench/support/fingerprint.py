"""A video file's content fingerprint: what the frame and inference jobs track of their videos, in place of a date.

A file's size and modification time change when it is touched or copied (`cp -r` without -p) though its content does
not, and Snakemake would then extract its frames, and ask every model about them, again. The fingerprint is the file's
size and a sha256 of SAMPLES evenly spaced BLOCK-byte blocks of it (the first and the last among them; the whole file
where it is no larger than that): a sampled fingerprint, not a hash of every byte. Hashing whole videos (an hour of
video is a few GB; a paper run has about 900 of them) whenever Snakemake builds its DAG would take minutes; a few
blocks take milliseconds, and a video edited or re-encoded in place changes its size or some sampled block in
practice. An edit that keeps the size and misses every sampled block goes unseen: remove the video's frame folders to
have them extracted again.

Fingerprints are kept in a small JSON file (`.snakemake/virtuebench/fingerprints.json` of the working directory) under
the file's real path, with the size, modification time (ns) and inode they were made for: a file is read again only
where one of them changed (a touched or copied video: read once, then found by its new stamp), so building the DAG
costs one stat per video.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
from pathlib import Path

#: Bytes per sampled block, and how many blocks (evenly spaced, the first at the start, the last at the end).
BLOCK = 64 * 1024
SAMPLES = 16
#: Where the fingerprints are kept, relative to the working directory (Snakemake's own state folder beside it).
CACHE = ".snakemake/virtuebench/fingerprints.json"
#: A new way of fingerprinting gets a new version: fingerprints kept under another are made again.
VERSION = "sampled-v1"


def content_fingerprint(path: str | Path) -> str:
    """`<size>-<sha256 hex>` of `path`'s sampled blocks (module docstring); reads at most SAMPLES x BLOCK bytes."""
    size = os.path.getsize(path)
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        if size <= SAMPLES * BLOCK:
            digest.update(file.read())
        else:
            for n in range(SAMPLES):
                file.seek(n * (size - BLOCK) // (SAMPLES - 1))
                digest.update(file.read(BLOCK))
    return f"{size}-{digest.hexdigest()}"


class Fingerprints:
    """Fingerprints kept in a JSON file (`path`), each under the stamp (size, mtime_ns, inode) it was made for.
    Saved at exit where one was added, written whole to a temporary file and renamed (two processes saving at once:
    the last one's file stands, each whole)."""

    def __init__(self, path: str | Path = CACHE) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict] = {}
        self.changed = False
        try:
            data = json.loads(self.path.read_text())
            if isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("files"), dict):
                self.entries = data["files"]
        except (OSError, ValueError):
            pass  # none yet, or unreadable: made again

    def of(self, path: str | Path) -> str:
        """The fingerprint of the video `path`, or "missing" where there is no such file."""
        real = os.path.realpath(path)
        try:
            stat = os.stat(real)
        except OSError:
            return "missing"
        stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
        entry = self.entries.get(real)
        if entry is not None and entry.get("stamp") == stamp:
            return entry["fingerprint"]
        fingerprint = content_fingerprint(real)
        self.entries[real] = {"stamp": stamp, "fingerprint": fingerprint}
        if not self.changed:
            self.changed = True
            atexit.register(self.save)
        return fingerprint

    def save(self) -> None:
        # A read-only folder: the fingerprints are made again next time, nothing is wrong.
        if self.changed and save_kept(self.path, {"version": VERSION, "files": self.entries}):
            self.changed = False


def save_kept(path: Path, data: dict) -> bool:
    """Write what a run keeps for the next one (JSON) to `path` whole: a temporary sibling renamed into place, so two
    processes saving at once leave one whole file. False where it cannot be written (a read-only folder, a full disk):
    what is kept there only saves work, so its loss is never an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.replace(tmp, path)
        return True
    except OSError:
        return False


def stat_stamp(*paths: str | Path) -> str:
    """Size, modification time, change time and inode of each path ("-" where it is missing): what a remembered check
    was made on. The change time moves on every write and is set by no tool (`touch -r` and os.utime keep only the
    modification time), and a file replaced by another has another inode: an edit that keeps size and modification
    time is still seen."""
    stamps = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stamps.append("-")
        else:
            stamps.append(f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}")
    return ",".join(stamps)
