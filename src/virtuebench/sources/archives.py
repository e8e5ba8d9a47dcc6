"""Unpacking a source's downloaded archives, and the free-space check before it (and before a download, sources.hub).

A release's videos come as whole archives (.zip, .tar and its compressed kinds) or as an archive split into parts;
the parts are read in order as one file, never joined on disk (docs/sources.md#split-archives), and what is
unpacked is checked whole: a part missing, out of order or cut short stops with an error naming the archive.
"""

from __future__ import annotations

import bisect
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def part_order(part: Path) -> tuple[Any, ...]:
    """Sort key for split archive parts: the numbers in a name compared as numbers (`part_2` before `part_10`),
    letter suffixes (`.aa`, `.ab`) as text."""
    return tuple(int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", part.name))


class _Chain(io.RawIOBase):
    """The parts read one after another as one file, never joined on disk. Seekable, so that a zip (whose index
    is at its end) reads from it as well as a tar stream does."""

    def __init__(self, parts: Sequence[Path]) -> None:
        self.parts = list(parts)
        self.starts: list[int] = []
        total = 0
        for part in self.parts:
            self.starts.append(total)
            total += part.stat().st_size
        self.total, self.position = total, 0
        self.index: int | None = None
        self.handle: io.BufferedReader | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.total}[whence]
        if base + offset < 0:
            raise OSError(f"seek to {base + offset}, before the start of {self.parts[0].name}")  # as a file would
        self.position = base + offset
        return self.position

    def readinto(self, buffer: Any) -> int:
        if self.position >= self.total:
            return 0
        index = bisect.bisect_right(self.starts, self.position) - 1  # an empty part shares its start with the next
        if index != self.index:
            if self.handle is not None:
                self.handle.close()
            self.index, self.handle = index, open(self.parts[index], "rb")  # noqa: SIM115 - closed on the next part or close()
        assert self.handle is not None
        self.handle.seek(self.position - self.starts[index])
        count = self.handle.readinto(buffer)
        if not count:
            raise ValueError(f"{self.parts[index]} became shorter while it was read")
        self.position += count
        return count

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        super().close()


def readable_bytes(count: float) -> str:
    """'512 B', '97.8 kB', '167.6 GB': decimal units, as the hub lists sizes."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def check_free_space(folder: Path, needed: int, what: str) -> None:
    """Stop, naming the bytes needed and free, where `folder`'s file system (its nearest existing folder's, for
    one not made yet) has less than `needed` bytes free."""
    import shutil

    folder = Path(folder)
    probe = folder if folder.exists() else next(p for p in folder.parents if p.exists())
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise ValueError(
            f"{what} needs {readable_bytes(needed)} ({needed:,} bytes) free in {folder}, but only {readable_bytes(free)} "
            f"({free:,} bytes) are: free space or point the source's raw folder elsewhere (curation.raw_dirs)"
        )


def _unzip(zipped: Any, dest: Path, label: str) -> None:
    """Every member of the open ZipFile `zipped` into `dest`; a member that would land outside it is refused."""
    import shutil

    root = dest.resolve()
    for member in zipped.infolist():
        target = (root / member.filename).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"{label}: member {member.filename!r} would be written outside {dest}")
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipped.open(member) as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 24)


def extract_parts(parts: Sequence[Path], dest: Path, name: str) -> Path:
    """Unpack an archive split into `parts` (`name` the whole archive's: a .zip, or a .tar / .tar.gz) into `dest`,
    reading the parts in order (by `part_order`) as one file: they are never joined, so the extra disk needed is
    the unpacked files only (about the archive's size), not the archive again. A tar streams through the
    unpacker (`cat parts | tar -xf -`); a zip reads its index at the end through the same chain. Once done a
    `.<name>.extracted` marker records it (the same marker as extract_archive, so an archive joined by hand
    counts too); members that would land outside `dest` are refused."""
    marker = dest / f".{name}.extracted"
    if marker.exists():
        return dest
    parts = sorted(parts, key=part_order)
    if not parts:
        raise ValueError(f"no archive parts to unpack into {dest}")
    dest.mkdir(parents=True, exist_ok=True)
    _unpack(parts, dest, f"{name} (parts {parts[0].name} ... {parts[-1].name})", name.endswith(".zip"))
    marker.write_text("")
    return dest


def _unpack(parts: Sequence[Path], dest: Path, label: str, is_zip: bool) -> None:
    """The archive that `parts` form, read in this order as one file, into `dest`: a zip, or a tar checked whole
    (_untar_whole); free space checked first. Errors name the archive by `label`."""
    import zipfile
    import zlib

    with _Chain(parts) as raw, io.BufferedReader(raw, 1 << 24) as stream:
        if is_zip:
            try:
                zipped = zipfile.ZipFile(stream)
            except (zipfile.BadZipFile, OSError) as error:
                raise ValueError(f"{label}: not a readable zip archive, or a part missing or cut short ({error})") from None
            with zipped:
                check_free_space(dest, sum(member.file_size for member in zipped.infolist()), f"unpacking {label}")
                try:  # each member's checksum is checked as it is read: a gap in the parts does not pass
                    _unzip(zipped, dest, label)
                except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as error:
                    raise ValueError(f"{label}: the archive is broken (a part missing, out of order or cut short?): {error}") from None
        else:
            check_free_space(dest, raw.total, f"unpacking {label}")
            _untar_whole(stream, dest, label)


def _untar_whole(stream: io.BufferedReader, dest: Path, label: str) -> None:
    """Unpack the tar (plain, gzip, bzip2 or xz) read from `stream` into `dest`, and make sure it was whole.

    tarfile alone does not: in stream mode it stops without a word at the first header it cannot read, and it
    never checks a gzip stream's end, so a part missing from the middle of the chain, or the last part of a
    .tar.gz, would unpack the members before the gap (the one across it corrupt) and pass. So the decompressor
    here is the standard library's file reader, which checks the compressed stream's end and checksum, and after
    the last member the rest of the tar must be its zero padding up to the end of the input."""
    import bz2
    import gzip
    import lzma
    import tarfile
    import zlib

    magic = stream.peek(6)[:6]
    body: Any = stream
    if magic[:2] == b"\x1f\x8b":
        body = gzip.GzipFile(fileobj=stream)
    elif magic[:3] == b"BZh":
        body = bz2.BZ2File(stream)
    elif magic == b"\xfd7zXZ\x00":
        body = lzma.LZMAFile(stream)
    broken = f"{label}: the archive is broken (a part missing, out of order or cut short?)"
    try:
        with tarfile.open(fileobj=body, mode="r|") as tarred:
            tarred.extractall(dest, filter="data")
        while chunk := body.read(1 << 20):
            if chunk.count(0) != len(chunk):
                raise ValueError(f"{broken}: data after the point where the tar stopped reading headers")
    except tarfile.FilterError as error:
        raise ValueError(f"{label}: unsafe member ({error})") from None
    except (tarfile.ReadError, EOFError, OSError, zlib.error, lzma.LZMAError) as error:
        raise ValueError(f"{broken}: {error}") from None


def extract_archive(archive: Path, dest: Path) -> Path:
    """Unpack a .zip or .tar(.gz, .bz2, .xz) into `dest` once (a `.<name>.extracted` marker records it): the one-part
    case of extract_parts, with the same checks (free space, a tar read whole, each zip member's checksum).

    Members that would land outside `dest` (absolute paths, `..`, links out) are refused.
    """
    import tarfile
    import zipfile

    marker = dest / f".{archive.name}.extracted"
    if marker.exists():
        return dest
    is_zip = zipfile.is_zipfile(archive)
    if not is_zip and not tarfile.is_tarfile(archive):
        raise ValueError(f"{archive}: neither a zip nor a tar archive")
    dest.mkdir(parents=True, exist_ok=True)
    _unpack([archive], dest, str(archive), is_zip)
    marker.write_text("")
    return dest
