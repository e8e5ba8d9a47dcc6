"""How long the report's statistics take at the paper's scale: 25 models x 2 prompts over 1,328 items on 901
videos with their levels as in the paper (587 reach 1024 frames, 915 reach 512), random verdicts.

    .venv/bin/python benchmarks/bench_scores.py

Measured on 2 cores: 254,800 judgments; 1,500 score rows in 6.3 s; 882 comparison rows in 12.8 s.
"""

import random
import time

from virtuebench.comparisons import compare, pairs
from virtuebench.metrics import compute_scores
from virtuebench.records import Judgment
from virtuebench.support.bootstrap import Bootstrap

rng = random.Random(0)
models = [f"m{i:02d}" for i in range(25)]
levels = [64, 128, 256, 512, 1024]
# 1328 items on 901 videos; items reach levels as in the paper (587 reach 1024, 915 reach 512)
items = []
for i in range(1328):
    top = 1024 if i < 587 else 512 if i < 915 else rng.choice([64, 128, 256])
    items.append(
        (f"q{i}", f"v{i % 901}", [level for level in levels if level <= top], rng.random() < 0.3, rng.choice(["perception", "reasoning"]))
    )
judgments = []
for m in models:
    for p in ("honest", "plain"):
        for q, v, lv, unans, cat in items:
            for level in lv:
                c = rng.random() < 0.5
                judgments.append(
                    Judgment(q, m, p, level, "rules", cat, "t", "x", unans, "r", int(unans and c), int(c), True, "", None, "f", video_id=v)
                )
print(len(judgments), "judgments")
t = time.time()
scores = compute_scores(judgments, Bootstrap(2000, 0))
print(len(scores), "score rows", round(time.time() - t, 1), "s")
t = time.time()
rows, _ = compare(judgments, pairs(models, ["honest", "plain"], "honest"), "rules", Bootstrap(2000, 0))
print(len(rows), "comparison rows", round(time.time() - t, 1), "s")
