"""What every source adapter shares (virtuebench.sources.base): the correct option read from a letter, an index or
its text; the rows a Conversion leaves out and why; a video moved under the same id relinked; and the archive
unpackers' refusals (a member outside the destination, an unreadable or broken zip, an unsafe tar member, a file
that is no archive), each naming the archive."""

from __future__ import annotations

import bz2
import io
import lzma
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from virtuebench.sources.base import Conversion, _Chain, correct_option, extract_archive, extract_parts, readable_bytes

OPTIONS = ["red", "green", "blue"]


@pytest.mark.parametrize(
    ("correct", "text"), [(0, "red"), (2, "blue"), ("B", "green"), ("(c)", "blue"), ("c.", "blue"), (" green ", "green")]
)
def test_the_correct_option_from_an_index_a_letter_or_its_text(correct, text):
    assert correct_option(OPTIONS, correct) == text


@pytest.mark.parametrize(
    ("correct", "message"),
    [
        (3, "correct option index 3 is outside the 3 options"),
        (-1, "correct option index -1 is outside the 3 options"),
        ("D", "correct option 'D' is outside the 3 options"),
        ("purple", "correct answer 'purple' is neither an option letter nor one of the options"),
        (True, "correct answer 'True' is neither an option letter nor one of the options"),  # a bool is not an index
    ],
)
def test_a_correct_option_outside_the_options_is_an_error_naming_it(correct, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        correct_option(OPTIONS, correct)


def test_a_conversion_leaves_out_duplicates_empty_rows_and_bad_files_naming_each(tmp_path, video_factory):
    video = video_factory(70.0)
    conversion = Conversion("mysrc", tmp_path / "videos", [64, 128], {"Counting": "reasoning"})
    assert conversion.add("q1", video, "Counting", "How many?", "3")
    assert not conversion.add("q1", video, "Counting", "How many again?", "4")  # the same id: left out
    assert not conversion.add("q2", video, "Counting", "  ", "3")
    assert not conversion.add("q3", video, "Counting", "How many?", "")
    (tmp_path / "list.json").write_text('{"not": "a list"}')
    (tmp_path / "bad.json").write_text("[1, 2")
    assert conversion.read_json("q4", tmp_path / "list.json", "annotation", list, "a list of questions") is None
    assert conversion.read_json("q5", tmp_path / "bad.json", "annotation", list, "a list of questions") is None
    assert conversion.read_json("q6", tmp_path / "list.json", "annotation", dict, "an object") == {"not": "a list"}
    rows = [(row["item"], row["reason_kind"], row["reason"]) for row in conversion.excluded]
    assert rows[:3] == [
        ("mysrc:q1", "duplicate_id", "duplicate question id"),
        ("mysrc:q2", "bad_row", "bad row: empty question or answer"),
        ("mysrc:q3", "bad_row", "bad row: empty question or answer"),
    ]
    assert rows[3] == ("mysrc:q4", "bad_row", f"{tmp_path / 'list.json'}: expected a list of questions")
    assert rows[4][:2] == ("mysrc:q5", "bad_row") and rows[4][2].startswith(f"{tmp_path / 'bad.json'}: unreadable annotation (")
    assert [instance.instance_id for instance in conversion.instances] == ["mysrc/q1"]
    with pytest.raises(ValueError, match="mysrc: exclusion kind 'oops' is not one of missing_video, unreadable_video"):
        conversion.exclude("q7", "why", kind="oops")


def test_a_video_id_linked_to_another_file_is_linked_again(tmp_path, video_factory):
    first, second = video_factory(70.0), video_factory(140.0)
    key_file = tmp_path / "release" / "clip.mp4"
    key_file.parent.mkdir()
    key_file.symlink_to(first)
    stale = tmp_path / "videos" / "mysrc_clip.mp4"
    stale.parent.mkdir()
    stale.symlink_to(second)  # left by an earlier conversion of another release
    conversion = Conversion("mysrc", tmp_path / "videos", [64], {"Counting": "reasoning"})
    assert conversion.add("q1", key_file, "Counting", "How many?", "3")
    assert Path(os.readlink(stale)) == first.resolve() and conversion.instances[0].duration_s == pytest.approx(70.0)


# --- archives ---


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
