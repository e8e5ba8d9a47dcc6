"""Download the CVRR-ES authors' published judge outputs (their repository's Judge-results/ folder).

The repository archive at a pinned commit is streamed to a temporary file, only the members under
`Judge-results/` are extracted (paths checked, no links), and the result is verified by importing it. The workflow
runs this only for `cvrr.published_dir: download`; a download that fails names the setting that needs no network.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from virtuebench.records import RecordError

REPOSITORY = "mbzuai-oryx/CVRR-Evaluation-Suite"
#: The commit of the authors' repository that the tests' CVRR-ES fixtures were copied from.
DEFAULT_COMMIT = "9d77787"
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{commit}"
#: What a failed download says to do instead: the workflow's setting that reads a local folder, or none.
OFFLINE_HINT = (
    "to run without the network, set cvrr.published_dir to a folder holding the authors' Judge-results "
    f"(git clone https://github.com/{REPOSITORY}) or to null (Table 2 without the published verdicts)"
)


def download_published(out: str | Path, commit: str | None = None, url: str | None = None, timeout_s: float = 60) -> Path:
    out = Path(out)
    url = url or ARCHIVE_URL.format(repository=REPOSITORY, commit=commit or DEFAULT_COMMIT)
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "archive.tar.gz"
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response, archive.open("wb") as handle:
                shutil.copyfileobj(response, handle)
        except OSError as error:  # URLError, HTTPError and timeouts are all OSErrors
            raise RecordError(f"cannot download {url}: {error}; {OFFLINE_HINT}") from None
        staging = Path(scratch) / "extract"
        try:
            with tarfile.open(archive) as tar:
                members = [m for m in tar.getmembers() if "/Judge-results/" in f"/{m.name}" and (m.isfile() or m.isdir())]
                if not any(m.isfile() for m in members):
                    raise RecordError(f"{url}: the archive holds no Judge-results/ folder")
                tar.extractall(staging, members=members, filter="data")
        except tarfile.TarError as error:
            raise RecordError(f"{url}: not a readable tar.gz archive ({error})") from None
        found = next(p for p in staging.rglob("Judge-results") if p.is_dir())
        target = out / "Judge-results"
        if target.exists():
            shutil.rmtree(target)
        out.mkdir(parents=True, exist_ok=True)
        shutil.move(str(found), target)

    from virtuebench.cvrr.published import read_published

    read_published(out)  # raises, naming the file, if what arrived is not in the release layout
    return target
