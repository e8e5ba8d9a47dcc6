"""How many input tokens an API model is billed for a request, from its family's published sizing rules: the tokens of
each frame (a rule of the image's width and height) and of the text (the prompt, each frame's time label).

Used by `make plan` (virtuebench.estimate) to say what a run will cost before it starts. The image rules are the
providers' published ones; where a rule leaves a step open, the reading taken here is named beside it. Text is
counted as OpenAI's and Google's documentation count it for a budget, one token per 4 characters: their tokenizers are
not installed here, so text counts are estimates and are labelled so wherever they are shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TileRule:
    """OpenAI's image tokens for `detail: high` ("Images and vision", Calculating costs, platform.openai.com/docs):
    the image is scaled to fit within a 2048 x 2048 square, then so that its shortest side is 768 px, and costs `base`
    tokens plus `tile` tokens per 512 x 512 tile that covers it. The docs' examples only ever shrink (a 1024 x 1024
    image is scaled to 768 x 768: 4 tiles, 765 tokens); a smaller image is read as kept at its size. `detail: low` costs
    `base` alone. A request that sets no detail gets the API's `auto`, counted here as high (the larger count)."""

    base: int
    tile: int
    source: str

    def image_tokens(self, width: int, height: int, detail: str | None = None) -> int:
        if detail == "low":
            return self.base
        if max(width, height) > 2048:
            scale = 2048 / max(width, height)
            width, height = int(width * scale), int(height * scale)
        if min(width, height) > 768:
            scale = 768 / min(width, height)
            width, height = int(width * scale), int(height * scale)
        return self.base + self.tile * math.ceil(width / 512) * math.ceil(height / 512)


@dataclass(frozen=True)
class GeminiRule:
    """Gemini 2.x's image tokens ("Understand and count tokens", ai.google.dev/gemini-api/docs/tokens): an image with
    both sides at most 384 px is 258 tokens; a larger one is cropped and scaled into 768 x 768 tiles of 258 tokens
    each. The docs do not say how a partial tile is cropped: counted here as ceil(w / 768) x ceil(h / 768) tiles."""

    source: str = "Gemini API docs, Understand and count tokens (images: 258 tokens per 768x768 tile, 258 at most 384x384)"

    def image_tokens(self, width: int, height: int, detail: str | None = None) -> int:
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)


_OPENAI_DOCS = "OpenAI API docs, Images and vision, Calculating costs"
#: The tile rule's constants by model name (the docs' table of base and tile tokens), longest prefix first.
OPENAI_TILE_RULES = {
    "gpt-5": TileRule(70, 140, f"{_OPENAI_DOCS} (gpt-5, gpt-5-chat-latest: 70 + 140 per tile)"),
    "gpt-4o": TileRule(85, 170, f"{_OPENAI_DOCS} (gpt-4o: 85 + 170 per tile)"),
}

#: One token per this many characters of text (OpenAI's help article "What are tokens and how to count them?" and
#: the Gemini docs' "Understand and count tokens": about 4 characters a token).
CHARS_PER_TOKEN = 4


def text_tokens(text: str) -> int:
    """An estimate of the tokens of `text`: ceil(characters / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def image_rule(family: str | None, model: str) -> TileRule | GeminiRule | None:
    """The image-token rule of an API model (registry `family`, and the endpoint's model name), or None where the
    code holds none for it (the estimate then says so instead of a number)."""
    if family == "gemini":
        return GeminiRule()
    if family == "openai":
        for prefix in sorted(OPENAI_TILE_RULES, key=len, reverse=True):
            if model.startswith(prefix):
                return OPENAI_TILE_RULES[prefix]
    return None
