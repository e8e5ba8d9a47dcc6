"""The Qwen families' frames against qwen-vl-utils itself (PyPI 0.0.14, the version the Qwen3-VL README pins):
for the same frames and the same pixel settings, our sizing (`QwenVideo.frame_size`) and our resized frames
(`resize_frames`) equal what the authors' `fetch_video` hands the processor, pixel for pixel, and the processor
then gives both the same grid and the same pixel values. Settings: each family's defaults under the registry's
200,704-pixel cap (Qwen2.5-VL: the report's 19,267,584-pixel clip budget; Qwen3-VL: the authors' VideoMME script,
--max-pixels 401408 --total-pixels 19267584 --min-pixels 3584), at every level. Needs the hf extra."""

import pytest

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")
vision_process = pytest.importorskip("qwen_vl_utils.vision_process", reason="qwen-vl-utils is not installed (the hf extra)")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from virtuebench.models.families import FAMILIES, QWEN2_5_VIDEO, QWEN3_VIDEO, resize_frames  # noqa: E402

REGISTRY_MAX_PIXELS = 200_704  # config/models.yaml: the paper's per-frame cap (448 x 448)
# (height, width) of small frames: 16:9, 4:3, square, portrait, and a 1:13 strip.
SHAPES = [(54, 96), (72, 96), (96, 96), (128, 72), (30, 400)]


def tight(family: str):
    """The family's settings with a small clip budget and floor, so that a few small frames already share it."""
    from dataclasses import replace

    video = settings(family)
    return replace(video, total_pixels=40 * video.factor**2, min_pixels=2 * video.factor**2, max_pixels=12 * video.factor**2)


def settings(family: str):
    return FAMILIES[family].video_settings(max_pixels=REGISTRY_MAX_PIXELS)


def element(video) -> dict:
    """The keys of qwen-vl-utils' video message that our settings stand for."""
    return {"min_pixels": video.min_pixels, "max_pixels": video.max_pixels, "total_pixels": video.total_pixels}


def frames(shape: tuple[int, int], n: int, seed: int = 0) -> list[Image.Image]:
    """n distinct noisy frames (a repeated frame would hide a mix-up of frames)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    return [Image.fromarray(np.roll(base, 7 * i, axis=1)) for i in range(n)]


def fetch(images, video) -> "torch.Tensor":
    """qwen-vl-utils' fetch_video on a list of frames: (T, C, H, W) float, as the Qwen model cards feed the processor."""
    return vision_process.fetch_video({"type": "video", "video": images, **element(video)}, image_patch_size=video.patch_size)


def test_the_family_defaults_are_the_authors_settings():
    assert (QWEN3_VIDEO.patch_size, QWEN3_VIDEO.total_pixels, QWEN3_VIDEO.max_pixels, QWEN3_VIDEO.min_pixels) == (
        16,
        19267584,
        401408,
        3584,
    )
    assert (QWEN2_5_VIDEO.patch_size, QWEN2_5_VIDEO.total_pixels) == (14, 24576 * 28 * 28)
    assert QWEN2_5_VIDEO.min_pixels == vision_process.VIDEO_MIN_TOKEN_NUM * 28 * 28
    assert QWEN2_5_VIDEO.max_pixels == vision_process.VIDEO_MAX_TOKEN_NUM * 28 * 28


@pytest.mark.parametrize("family", ["qwen2.5-vl", "qwen3-vl"])
@pytest.mark.parametrize("budget", ["registry", "tight"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n_frames", [2, 7, 16, 64])
def test_our_frame_size_is_qwen_vl_utils(family, budget, shape, n_frames):
    """Every branch of the sizing (enlarged to the floor, shrunk to the cap, shrunk to the clip's share, an odd count)."""
    video = settings(family) if budget == "registry" else tight(family)
    # One frame repeated: fetch_video's sizing depends only on the frames' size and count.
    image = Image.new("RGB", shape[::-1], (90, 30, 200))
    try:
        theirs = fetch([image] * n_frames, video)
    except ValueError:  # a frame too thin for the budget: no size at all, and ours says so too
        with pytest.raises(ValueError, match="shrinks to nothing"):
            video.frame_size(*shape, n_frames)
        return
    assert tuple(theirs.shape[-2:]) == video.frame_size(*shape, n_frames)


@pytest.mark.parametrize(
    ("family", "shape", "n_frames"),
    [
        ("qwen2.5-vl", (336, 597), 64),  # a 16:9 frame stored at the registry's cap: the per-frame cap decides
        ("qwen3-vl", (336, 597), 64),
        ("qwen2.5-vl", (252, 448), 512),  # the clip's budget decides (down to Qwen2.5-VL's 128-token floor)
        ("qwen3-vl", (160, 284), 1024),  # the clip's budget decides: 37,632 pixels a frame at 1024 frames
        ("qwen3-vl", (597, 336), 2),
    ],
)
def test_our_frames_are_qwen_vl_utils_frames_pixel_for_pixel(family, shape, n_frames):
    """The authors' settings on real-sized frames: the same size, and the same values in every pixel."""
    video = settings(family)
    images = frames(shape, n_frames)
    ours, theirs = resize_frames(images, video), fetch(images, video)
    assert ours.dtype == torch.uint8 and ours.shape == theirs.shape
    assert tuple(ours.shape[-2:]) == video.frame_size(*shape, n_frames)
    assert torch.equal(ours.float(), theirs)


@pytest.mark.parametrize("family", ["qwen2.5-vl", "qwen3-vl"])
def test_the_processor_sees_the_same_video_either_way(family):
    """Through the family's real processor class (tiny), unresized as the model cards call it: same grid, same pixels."""
    from helpers.tiny_hf import tiny_qwen2_5_vl, tiny_qwen3_vl

    _, processor = (tiny_qwen2_5_vl if family == "qwen2.5-vl" else tiny_qwen3_vl)()
    video = settings(family)
    images = frames((336, 597), 64, seed=1)
    kwargs = {"do_sample_frames": False, "do_resize": False, "cap_pixels_per_frame": False, "return_tensors": "pt"}
    ours = processor.video_processor(videos=[resize_frames(images, video)], **kwargs)
    theirs = processor.video_processor(videos=[fetch(images, video)], **kwargs)
    assert ours["video_grid_thw"].tolist() == theirs["video_grid_thw"].tolist()
    assert torch.equal(ours["pixel_values_videos"], theirs["pixel_values_videos"])


def test_tokens_per_frame_at_every_level(monkeypatch):
    """The numbers docs/models.md gives for a 16:9 frame stored at the registry's cap (597 x 336), at every level,
    from the size qwen-vl-utils' fetch_video itself chooses for that many frames. Its final resize is only
    recorded here, its per-frame step runs once for the one repeated frame, and the clip is a view of that frame
    (together they take about 25 s at 1024 frames and decide nothing about the size)."""
    chosen = []

    def record_size(video, size, **kwargs):
        chosen.append(tuple(size))
        return torch.zeros((video.shape[0], video.shape[1], *size))

    monkeypatch.setattr(vision_process.transforms.functional, "resize", record_size)
    # The stacked clip of one repeated frame is a view of that frame (fetch_video reads only its shape before resizing).
    monkeypatch.setattr(vision_process.torch, "stack", lambda frames: frames[0].unsqueeze(0).expand(len(frames), *frames[0].shape))
    # Every frame is the same image: qwen-vl-utils' per-frame step runs once, its result is handed back for the rest.
    real_fetch_image, fetched = vision_process.fetch_image, {}
    monkeypatch.setattr(
        vision_process,
        "fetch_image",
        lambda ele, *a, **k: fetched.get(id(ele["image"])) or fetched.setdefault(id(ele["image"]), real_fetch_image(ele, *a, **k)),
    )
    image = Image.new("RGB", (597, 336), (90, 30, 200))
    table = {}
    for family in ("qwen2.5-vl", "qwen3-vl"):
        video = settings(family)
        table[family] = []
        for n in (64, 128, 256, 512, 1024):
            fetched.clear()  # one family's per-frame result (its factor and caps) is not another's
            fetch([image] * n, video)
            height, width = chosen[-1]
            table[family].append(height * width / video.factor**2 / 2)  # a merged token: 2x2 patches of two frames
            assert video.tokens_per_frame(336, 597, n) == table[family][-1]
    print(f"\ntokens per frame, 16:9, levels 64..1024: {table}")
    # The per-frame cap up to 128 frames; then the clip's share (Qwen2.5-VL: down to its 128-token floor per two frames).
    assert table["qwen2.5-vl"] == [120.0, 120.0, 85.0, 56.0, 56.0]
    assert table["qwen3-vl"] == [90.0, 90.0, 72.0, 33.0, 16.0]


def _doc_budget_table() -> dict[tuple[str, str, str], list[float]]:
    """docs/models.md, "The Qwen video budget: both options, both sizings": {(family, budget, sizing): tokens per level}."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    section = text.split("### The Qwen video budget: both options, both sizings", 1)[1].split("\n#", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] not in ("family",) and not cells[0].startswith("---"):
            table[(cells[0].split(",")[0], cells[1], cells[2])] = [float(cell) for cell in cells[3:]]
    return table


def _budget_options(family: str) -> dict[str, dict]:
    """{option: the settings it sets} of qwen_video_budget, as config/models.yaml declares it for the family's entries."""
    from pathlib import Path

    import yaml

    registry = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "models.yaml").read_text())
    entry = next(entry for entry in registry.values() if entry.get("family") == family and "choices" in entry)
    return {option: keys.get("settings", {}) for option, keys in entry["choices"]["qwen_video_budget"]["options"].items()}


def test_tokens_per_frame_under_each_budget_option_and_sizing(monkeypatch):
    """docs/models.md's table of the Qwen video budget's options (config/models.yaml, qwen_video_budget) equals what
    qwen-vl-utils 0.0.14 gives, as released and with its fetch_image handed the patch size (the fix of upstream
    commit fe12058), for a 16:9 frame stored at the registry's cap; and our sizing agrees with it in every cell."""
    chosen, fetched = [], {}

    def record_size(video, size, **kwargs):
        chosen.append(tuple(size))
        return torch.zeros((video.shape[0], video.shape[1], *size))

    monkeypatch.setattr(vision_process.transforms.functional, "resize", record_size)
    monkeypatch.setattr(vision_process.torch, "stack", lambda frames: frames[0].unsqueeze(0).expand(len(frames), *frames[0].shape))
    real_fetch_image, fixed = vision_process.fetch_image, [False]

    def fetch_image(ele, factor, *args, **kwargs):
        # 0.0.14 passes the factor (2 x patch) here; fe12058 passes the patch size.
        size = factor // 2 if fixed[0] else factor
        key = (id(ele["image"]), size)
        return fetched.get(key) or fetched.setdefault(key, real_fetch_image(ele, size, *args, **kwargs))

    monkeypatch.setattr(vision_process, "fetch_image", fetch_image)
    image = Image.new("RGB", (597, 336), (90, 30, 200))
    computed = {}
    for family in ("qwen2.5-vl", "qwen3-vl"):
        for option, keys in _budget_options(family).items():
            video = FAMILIES[family].video_settings(REGISTRY_MAX_PIXELS, keys.get("total_pixels"), keys.get("min_pixels"))
            for sizing in ("0.0.14", "fixed"):
                fixed[0] = sizing == "fixed"
                cells = []
                for n in (64, 128, 256, 512, 1024):
                    fetch([image] * n, video)
                    height, width = chosen[-1]
                    cells.append(height * width / video.factor**2 / 2)
                    assert video.tokens_per_frame(336, 597, n, fixed=fixed[0]) == cells[-1], (family, option, sizing, n)
                computed[(family, option, sizing)] = cells
    print(f"\ntokens per frame by (family, budget, sizing), levels 64..1024: {computed}")
    assert _doc_budget_table() == computed
    # The fixed sizing with the VideoMME budget (known before this table): Qwen3-VL 95/95/64/33/16, Qwen2.5-VL 126/126/90/60/60.
    assert computed[("qwen3-vl", "videomme", "fixed")] == [95, 95, 64, 33, 16]
    assert computed[("qwen2.5-vl", "videomme", "fixed")] == [126, 126, 90, 60, 60]
