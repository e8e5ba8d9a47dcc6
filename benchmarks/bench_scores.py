"""How long the report's statistics take at the paper's scale: 25 models x 2 prompts over 1,328 items on 901
videos with their levels as in the paper (587 reach 1024 frames, 915 reach 512), random verdicts.

    .venv/bin/python benchmarks/bench_scores.py

Measured in three runs on 2 cores shared with other jobs (load average 5-7): 254,800 judgments; 1,500 score rows
in 27.2, 31.1 and 42.3 s wall clock (29.7, 26.5, 29.6 s CPU); 882 comparison rows in 49.9, 38.6 and 54.0 s wall
clock (39.2, 35.6, 37.7 s CPU). Wall clock on a busy machine varies; CPU time less.
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
t, c = time.time(), time.process_time()
scores = compute_scores(judgments, Bootstrap(2000, 0))
print(len(scores), "score rows", round(time.time() - t, 1), "s wall", round(time.process_time() - c, 1), "s cpu")
t, c = time.time(), time.process_time()
rows, _ = compare(judgments, pairs(models, ["honest", "plain"], "honest"), "rules", Bootstrap(2000, 0))
print(len(rows), "comparison rows", round(time.time() - t, 1), "s wall", round(time.process_time() - c, 1), "s cpu")
