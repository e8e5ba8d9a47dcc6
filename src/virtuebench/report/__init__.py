"""The paper's tables (LaTeX) and figures (PNG), made from results/scores.csv and the instances table only."""
