"""Visual tokens per frame at every level, for every family, side by side (the table in docs/models.md).

A 16:9 frame as the workflow stores it under the registry's 200,704-pixel cap (597 x 336). The Qwen families through
their sizing (models/families.py, equal to qwen-vl-utils 0.0.14's: tests/models/test_qwen_vl_utils.py); Keye-VL 1.5 through
keye-vl-utils 1.5.2 itself, on frames that all differ from their neighbours (all "slow" frames: the fewest tokens
each) and on a static video (one slow frame, the rest "fast" at 0.3x); the families with a fixed square input from their published configs.

    python tools/tokens_per_frame.py      # needs the hf extra (keye-vl-utils, torch)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from virtuebench.levels import LEVELS  # noqa: E402
from virtuebench.models.families import FAMILIES  # noqa: E402

HEIGHT, WIDTH = 336, 597
REGISTRY_MAX_PIXELS = 200_704


def keye_tokens(n_frames: int, distinct: bool, folder: Path) -> tuple[float, float]:
    """(tokens per slow frame, per fast frame) that keye-vl-utils gives n frames of the stored size."""
    import numpy as np
    from keye_vl_utils import process_vision_info
    from PIL import Image

    rng = np.random.default_rng(0)
    static = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    paths = []
    for i in range(n_frames):
        path = folder / f"{'d' if distinct else 's'}{n_frames}-{i:05d}.jpg"
        # Black and white in turn: no two neighbours alike to keye-vl-utils (random noise would look alike to it).
        pixels = np.full((HEIGHT, WIDTH, 3), 255 * (i % 2), dtype=np.uint8) if distinct else static
        Image.fromarray(pixels).save(path, quality=90)
        paths.append(str(path))
    messages = [{"role": "user", "content": [{"type": "video", "video": paths, "max_pixels": REGISTRY_MAX_PIXELS}]}]
    _, _, kwargs = process_vision_info(messages)
    slow = kwargs["height"][0] * kwargs["width"][0] / 28**2
    fast = kwargs["fast_height"][0] * kwargs["fast_width"][0] / 28**2
    return slow, fast


def main() -> int:
    rows = {}
    for family in ("qwen2.5-vl", "qwen3-vl"):
        video = FAMILIES[family].video_settings(max_pixels=REGISTRY_MAX_PIXELS)
        rows[family] = [
            f"{video.tokens_per_frame(HEIGHT, WIDTH, n):g} ({'x'.join(map(str, video.frame_size(HEIGHT, WIDTH, n)))})" for n in LEVELS
        ]
    with tempfile.TemporaryDirectory() as work:
        distinct = [keye_tokens(n, True, Path(work)) for n in LEVELS]
        static = [keye_tokens(n, False, Path(work)) for n in LEVELS]
    rows["keye (every frame new: all slow)"] = [f"{slow:g}" for slow, _ in distinct]
    rows["keye (a static video: one slow frame, the rest fast)"] = [f"{fast:g} (slow {slow:g})" for slow, fast in static]
    # Fixed square inputs (published configs): InternVL3.5 448 px, patch 14, pixel shuffle 0.5 -> 32 x 32 / 4;
    # LLaVA-Video SigLIP 384 px, patch 14 -> 27 x 27, pooled 2x2 -> 14 x 14; VideoChat-Flash and InternVideo2.5 merge
    # each group of 4 frames to 64 tokens.
    rows["internvl"] = ["256"] * 3 + ["-"] * 2
    rows["llava-video"] = ["196 + newlines"] * 2 + ["-"] * 3
    rows["videochat-flash, internvideo"] = ["16"] * len(LEVELS)
    print("| family | " + " | ".join(str(n) for n in LEVELS) + " |")
    print("|---" * (len(LEVELS) + 1) + "|")
    for family, cells in rows.items():
        print(f"| {family} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
