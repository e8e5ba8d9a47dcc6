"""Archives (virtuebench.sources.archives): split parts streamed in numeric order into the unpacker, the extra disk
about the unpacked size (not the archive again), and a clear stop where the disk is too small; and the unpackers'
refusals (a member outside the destination, an unreadable or broken zip, an unsafe tar member, a file that is no
archive), each naming the archive."""

from __future__ import annotations

import bz2
import io
import lzma
import os
import re
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from virtuebench.sources.archives import _Chain, extract_archive, extract_parts, part_order, readable_bytes


def _split_tar(
    folder: Path, files: dict[str, bytes], parts: int, name: str = "videos_part_{}.tar.gz", compressed: bool = True
) -> list[Path]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) if compressed else tarfile.open(fileobj=buffer, mode="w") as tarred:
        for member, data in files.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    blob = buffer.getvalue()
    step = -(-len(blob) // parts)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(parts):
        path = folder / name.format(i + 1)  # part_1 ... part_12: unpadded, so name order would be wrong
        path.write_bytes(blob[i * step : (i + 1) * step])
        paths.append(path)
    return paths


def _allocated(area: Path) -> int:
    """Disk blocks allocated to every file under `area` (what the file system gives up, not the apparent size)."""
    return sum(p.lstat().st_blocks * 512 for p in area.rglob("*") if p.is_file())


def _peak_extra_disk(area: Path, action) -> int:
    """The most disk `action()` holds at once beyond what `area` held before it, sampled every 5 ms over the whole
    of `area` (the test's temporary folder: the parts, the destination, and Python's temporary files, sent there)."""
    import tempfile

    before, peak, done = _allocated(area), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _allocated(area) - before)
            time.sleep(0.005)

    watcher = threading.Thread(target=sample)
    saved, tempfile.tempdir = tempfile.tempdir, str(area / "tmp")
    (area / "tmp").mkdir(exist_ok=True)
    watcher.start()
    try:
        action()
    finally:
        done.set()
        watcher.join()
        tempfile.tempdir = saved
    return max(peak[0], _allocated(area) - before)


def test_parts_sort_by_their_number_not_their_name():
    names = [Path(f"videos_part_{i}.tar.gz") for i in (10, 2, 1, 12, 11, 3)]
    assert [p.name for p in sorted(names, key=part_order)] == [f"videos_part_{i}.tar.gz" for i in (1, 2, 3, 10, 11, 12)]
    letters = [Path(f"videos.tar.part.{s}") for s in ("ab", "aa", "ba")]
    assert [p.name for p in sorted(letters, key=part_order)] == ["videos.tar.part.aa", "videos.tar.part.ab", "videos.tar.part.ba"]


def test_a_twelve_part_archive_unpacks_with_about_one_archive_of_extra_disk(tmp_path):
    """Incompressible videos (random bytes), so the archive is about as large as what it holds; the peak extra disk
    (sampled over the whole temporary folder while unpacking) is the unpacked files, not a joined archive besides
    them. The measured ratio is printed (docs/sources.md quotes it)."""
    files = {f"videos/v{i:02d}.mp4": os.urandom(1_500_000) for i in range(12)}
    parts = _split_tar(tmp_path / "raw", files, parts=12)
    archive_bytes = sum(p.stat().st_size for p in parts)
    dest = tmp_path / "out"
    peak = _peak_extra_disk(tmp_path, lambda: extract_parts(parts, dest, "videos_merged.tar.gz"))
    for member, data in files.items():
        assert (dest / member).read_bytes() == data, member
    ratio = peak / archive_bytes
    print(f"\narchive {archive_bytes} bytes in 12 parts; peak extra disk {peak} bytes allocated = {ratio:.3f}x the archive")
    assert 0.95 < ratio < 1.1
    assert not [p for p in dest.glob("*.tar*") if not p.name.endswith(".extracted")], "no joined archive written"
    (parts[0]).write_bytes(b"changed")  # unpacked once: the marker keeps it from being read again
    assert extract_parts(parts, dest, "videos_merged.tar.gz") == dest


def test_a_split_zip_is_read_through_the_chained_parts(tmp_path):
    """A zip's index is at its end: the chain seeks across part boundaries instead of joining the parts."""
    import zipfile

    files = {f"videos/v{i}.mp4": os.urandom(300_000) for i in range(4)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for member, data in files.items():
            zipped.writestr(member, data)
    blob = buffer.getvalue()
    step = -(-len(blob) // 5)
    parts = []
    for i in range(5):
        parts.append(tmp_path / f"videos.zip.{i + 1:03d}")
        parts[-1].write_bytes(blob[i * step : (i + 1) * step])
    peak = _peak_extra_disk(tmp_path, lambda: extract_parts(parts[::-1], tmp_path / "out", "videos.zip"))
    assert {member: (tmp_path / "out" / member).read_bytes() for member in files} == files
    assert peak < 1.1 * len(blob) and not (tmp_path / "videos.zip").exists()


@pytest.mark.parametrize("compressed", [True, False], ids=["tar.gz", "tar"])
@pytest.mark.parametrize("fault", ["first missing", "middle missing", "last missing", "two swapped"])
def test_a_part_missing_or_out_of_order_stops_the_unpacking(tmp_path, compressed, fault):
    """tarfile alone would stop at the first unreadable header without a word (a middle part missing from a plain
    tar), or never notice a gzip stream cut short (the last part missing): the members before the gap would pass
    for the whole archive and their questions become 'missing video' rows. Each fault here stops with an error
    naming the archive and its parts, and nothing is marked unpacked."""
    name = "videos_merged.tar.gz" if compressed else "videos.tar"
    files = {f"videos/v{i}.mp4": os.urandom(100_000) for i in range(6)}
    parts = _split_tar(
        tmp_path / "raw", files, parts=6, name="videos_part_{}.tar.gz" if compressed else "videos.tar.part_{}", compressed=compressed
    )
    if fault == "two swapped":
        first, second = parts[2].read_bytes(), parts[3].read_bytes()
        parts[2].write_bytes(second)
        parts[3].write_bytes(first)
    else:
        del parts[{"first missing": 0, "middle missing": 2, "last missing": 5}[fault]]
    with pytest.raises(ValueError, match=rf"{re.escape(name)} \(parts .+ \.\.\. .+\): .*(broken|not a readable)"):
        extract_parts(parts, tmp_path / "out", name)
    assert not (tmp_path / "out" / f".{name}.extracted").exists()


def test_too_little_free_space_stops_before_unpacking_and_names_the_bytes(tmp_path, monkeypatch):
    import shutil

    parts = _split_tar(tmp_path / "raw", {"a.mp4": os.urandom(100_000)}, parts=2)
    total = sum(part.stat().st_size for part in parts)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**12, 10**12 - 900, 900))
    needed = rf"{readable_bytes(total)} \({total:,} bytes\)"
    with pytest.raises(ValueError, match=rf"needs {needed} free in .*out, but only 900 B \(900 bytes\) are"):
        extract_parts(parts, tmp_path / "out", "videos_merged.tar.gz")
    assert not (tmp_path / "out" / "a.mp4").exists()


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (100_154, "100.2 kB"), (5_240_000_000, "5.2 GB"), (167_600_000_000, "167.6 GB")],
)
def test_sizes_are_written_readably_at_every_scale(count, shown):
    assert readable_bytes(count) == shown


# --- whole archives and the unpackers' refusals ---


def _zip(path: Path, members: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)
    return path.read_bytes()


def _tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tarred:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _split(blob: bytes, folder: Path, name: str, parts: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-len(blob) // parts)
    paths = [folder / f"{name}.part{i + 1}" for i in range(parts)]
    for i, path in enumerate(paths):
        path.write_bytes(blob[i * step : (i + 1) * step])
    return paths


def test_whole_archives_unpack_once_and_refuse_what_is_not_safe_whole_or_an_archive(tmp_path):
    members = {"videos/a.mp4": os.urandom(3000), "videos/sub/b.mp4": b"b" * 500}
    _zip(tmp_path / "r.zip", {**members, "videos/empty/": b""})
    assert extract_archive(tmp_path / "r.zip", tmp_path / "z") == tmp_path / "z"
    assert {name: (tmp_path / "z" / name).read_bytes() for name in members} == members and (tmp_path / "z" / "videos" / "empty").is_dir()
    (tmp_path / "r.tar.gz").write_bytes(_tar(members, "w:gz"))
    extract_archive(tmp_path / "r.tar.gz", tmp_path / "t")
    assert {name: (tmp_path / "t" / name).read_bytes() for name in members} == members
    (tmp_path / "t" / "videos" / "a.mp4").unlink()
    extract_archive(tmp_path / "r.tar.gz", tmp_path / "t")  # the marker: not unpacked again
    assert not (tmp_path / "t" / "videos" / "a.mp4").exists()

    (tmp_path / "evil.tar").write_bytes(_tar({"../outside.mp4": b"x"}))
    with pytest.raises(ValueError, match=rf"^{tmp_path}/evil.tar: unsafe member \("):
        extract_archive(tmp_path / "evil.tar", tmp_path / "e")
    _zip(tmp_path / "evil.zip", {"../outside.mp4": b"x"})
    with pytest.raises(ValueError, match=r"evil.zip: member '../outside.mp4' would be written outside"):
        extract_archive(tmp_path / "evil.zip", tmp_path / "e")
    (tmp_path / "cut.tar.gz").write_bytes(_tar(members, "w:gz")[:2000])  # a download cut short: named, not a raw EOFError
    with pytest.raises(ValueError, match=rf"^{tmp_path}/cut.tar.gz: the archive is broken \(a part missing, out of order or cut short\?\)"):
        extract_archive(tmp_path / "cut.tar.gz", tmp_path / "c")
    assert not list((tmp_path / "c").glob(".*.extracted"))
    (tmp_path / "notes.txt").write_text("not an archive")
    with pytest.raises(ValueError, match=rf"^{tmp_path}/notes.txt: neither a zip nor a tar archive$"):
        extract_archive(tmp_path / "notes.txt", tmp_path / "n")
    assert not (tmp_path / "outside.mp4").exists() and not list((tmp_path / "e").glob(".*.extracted"))


@pytest.mark.parametrize("compression", ["bz2", "xz"])
def test_split_tars_in_every_compression_unpack(tmp_path, compression):
    members = {"v/a.mp4": os.urandom(20_000), "v/b.mp4": os.urandom(5_000)}
    blob = {"bz2": bz2.compress, "xz": lzma.compress}[compression](_tar(members))
    parts = _split(blob, tmp_path / "raw", f"videos.tar.{compression}")
    extract_parts(parts, tmp_path / "out", f"videos.tar.{compression}")
    assert {name: (tmp_path / "out" / name).read_bytes() for name in members} == members
    cut = _split(blob[: len(blob) // 2], tmp_path / "cut", f"videos.tar.{compression}")
    with pytest.raises(ValueError, match=r"the archive is broken \(a part missing, out of order or cut short\?\)"):
        extract_parts(cut, tmp_path / "out2", f"videos.tar.{compression}")


def test_split_archives_refuse_no_parts_unsafe_members_and_broken_zips(tmp_path):
    with pytest.raises(ValueError, match=r"^no archive parts to unpack into .*out$"):
        extract_parts([], tmp_path / "out", "videos.zip")
    unsafe = _split(_tar({"../outside.mp4": b"x"}), tmp_path / "unsafe", "videos.tar")
    with pytest.raises(ValueError, match=r"^videos.tar \(parts videos.tar.part1 ... videos.tar.part3\): unsafe member \("):
        extract_parts(unsafe, tmp_path / "out", "videos.tar")
    blob = _zip(tmp_path / "whole.zip", {"v/a.mp4": os.urandom(50_000), "v/b.mp4": os.urandom(50_000)})
    with pytest.raises(ValueError, match=r"videos.zip \(parts .*\): not a readable zip archive, or a part missing or cut short"):
        extract_parts(_split(blob, tmp_path / "nozip", "videos.zip")[:1], tmp_path / "out", "videos.zip")  # no index
    damaged = bytearray(blob)
    damaged[200:1200] = bytes(1000)  # inside the first member's data: the index at the end still reads
    broken = _split(bytes(damaged), tmp_path / "broken", "videos.zip")
    with pytest.raises(ValueError, match=r"videos.zip \(parts .*\): the archive is broken \(a part missing, out of order or cut short\?\)"):
        extract_parts(broken, tmp_path / "out", "videos.zip")
    assert not list((tmp_path / "out").glob(".*.extracted"))


def test_the_chain_of_parts_reads_as_one_file_and_names_a_part_that_shrank(tmp_path):
    parts = _split(bytes(range(256)) * 4, tmp_path, "blob", parts=4)
    with _Chain(parts) as chain:
        chain.seek(-10, io.SEEK_END)
        assert chain.read(20) == (bytes(range(256)) * 4)[-10:]
        with pytest.raises(OSError, match=r"seek to -1, before the start of blob.part1"):
            chain.seek(-1)
        chain.seek(300)
        parts[1].write_bytes(b"")  # cut short after the chain measured it
        with pytest.raises(ValueError, match=r"blob.part2 became shorter while it was read"):
            chain.read(10)


def test_readable_bytes_stops_at_terabytes():
    assert readable_bytes(5 * 10**15) == "5000.0 TB"
