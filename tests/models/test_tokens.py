"""The API families' image-token rules (virtuebench.models.tokens) against the examples their providers publish."""

from __future__ import annotations

import pytest

from virtuebench.models.tokens import GeminiRule, TileRule, image_rule, text_tokens


def test_openai_tile_rule_gives_the_docs_examples():
    # OpenAI, "Images and vision", Calculating costs: GPT-4o at detail high.
    gpt4o = image_rule("openai", "gpt-4o-2024-11-20")
    assert isinstance(gpt4o, TileRule)
    # 1024 x 1024: within 2048; shortest side 1024 -> 768 x 768; 2 x 2 tiles: 85 + 4 x 170 = 765
    assert gpt4o.image_tokens(1024, 1024) == 765
    # 2048 x 4096: fit in 2048 -> 1024 x 2048; shortest side -> 768 x 1536; 2 x 3 tiles: 85 + 6 x 170 = 1105
    assert gpt4o.image_tokens(2048, 4096) == 1105
    # detail low: the base alone, whatever the size
    assert gpt4o.image_tokens(4096, 4096, "low") == 85
    # a frame smaller than 768 on its short side is kept: 500 x 500 is one tile, 513 x 500 two
    assert gpt4o.image_tokens(500, 500) == 85 + 170
    assert gpt4o.image_tokens(513, 500) == 85 + 2 * 170


def test_gpt5_has_its_own_constants_and_an_unknown_model_none():
    gpt5 = image_rule("openai", "gpt-5-2025-08-07")
    assert (gpt5.base, gpt5.tile) == (70, 140)
    assert image_rule("openai", "gpt-5-chat-latest") is gpt5
    assert image_rule("openai", "o3-2025-04-16") is None  # no rule held for it: the estimate says "-", not a number
    assert image_rule(None, "gpt-4o") is None


def test_gemini_rule():
    gemini = image_rule("gemini", "gemini-2.5-flash")
    assert isinstance(gemini, GeminiRule)
    assert gemini.image_tokens(384, 384) == 258  # both sides at most 384: one image, 258 tokens
    assert gemini.image_tokens(448, 448) == 258  # larger: one 768 x 768 tile
    assert gemini.image_tokens(1600, 900) == 258 * 3 * 2  # ceil(1600 / 768) = 3, ceil(900 / 768) = 2


@pytest.mark.parametrize("text,tokens", [("", 0), ("abcd", 1), ("abcde", 2), ("x" * 400, 100)])
def test_text_is_counted_at_four_characters_a_token(text, tokens):
    assert text_tokens(text) == tokens
