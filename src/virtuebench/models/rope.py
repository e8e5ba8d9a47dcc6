"""Qwen2.5-VL's 3D rotary positions as its reference code computes them, for the transformers backend.

Qwen2.5-VL gives each video token a (time, height, width) position, the time index spaced by the frames' real
seconds (`second_per_grid_ts` x `tokens_per_second`): 64 frames of a one-hour video reach time position 31 x 225.
In the reference code (Qwen2.5-VL's own transformers 4.49-4.57 implementation, and vLLM's), the text after a video
continues after the largest position the video took. transformers 5.x (5.19 and 5.23 at least) continues it after
max(height, width) instead, ignoring the time extent, so the question that follows a long video is placed where the
model never saw text in training. tests/models/test_vllm_route.py found it: vLLM and transformers 5 disagreed on every
video prompt and agreed on text alone. `use_reference_positions` puts the reference computation on a loaded model.
Qwen3-VL is not affected: each of its temporal patches is a block of its own with its time written as text.
"""

from __future__ import annotations

import itertools
import types


def reference_rope_index(
    self,
    input_ids,
    mm_token_type_ids,
    image_grid_thw=None,
    video_grid_thw=None,
    second_per_grid_ts=None,
    attention_mask=None,
    **kwargs,
):
    """(position_ids (3, batch, length), rope_deltas (batch, 1)): each text run continues after the largest position
    so far; a vision block's (t, h, w) grid starts there, t spaced by the video's seconds per temporal patch."""
    import torch

    merge = self.config.vision_config.spatial_merge_size
    tokens_per_second = self.config.vision_config.tokens_per_second
    grids = {
        1: iter(image_grid_thw.tolist() if image_grid_thw is not None else []),
        2: iter(video_grid_thw.tolist() if video_grid_thw is not None else []),
    }
    seconds = iter(second_per_grid_ts.tolist() if second_per_grid_ts is not None else [])
    batch, length = input_ids.shape
    position_ids = torch.zeros(3, batch, length, dtype=input_ids.dtype, device=input_ids.device)
    deltas = []
    for row in range(batch):
        keep = attention_mask[row].bool() if attention_mask is not None else torch.ones(length, dtype=torch.bool, device=input_ids.device)
        kinds = mm_token_type_ids[row][keep].tolist()
        pieces, top = [], -1
        for kind, run in itertools.groupby(kinds):
            n = len(list(run))
            if kind == 0:
                piece = torch.arange(n).expand(3, n) + top + 1
            else:
                t, h, w = next(grids[kind])
                interval = tokens_per_second * next(seconds, 1.0) if kind == 2 else 1
                time_index = (torch.arange(t) * interval).long()
                grid = torch.meshgrid(time_index, torch.arange(h // merge), torch.arange(w // merge), indexing="ij")
                piece = torch.stack(grid).reshape(3, -1) + top + 1
                if piece.shape[1] != n:
                    raise ValueError(f"a vision block of {n} tokens does not match its grid {[t, h, w]}")
            top = int(piece.max())
            pieces.append(piece)
        position_ids[:, row, keep] = torch.cat(pieces, dim=1).to(position_ids)
        deltas.append(top + 1 - len(kinds))
    return position_ids, torch.tensor(deltas, device=input_ids.device).unsqueeze(1)


def use_reference_positions(model) -> None:
    """Make a loaded Qwen2.5-VL (or MiMo-VL) model compute its positions the reference way."""
    inner = getattr(model, "model", model)
    if not hasattr(inner, "get_rope_index"):
        raise ValueError(f"{type(model).__name__} has no get_rope_index: not a Qwen2.5-VL model")
    inner.get_rope_index = types.MethodType(reference_rope_index, inner)
