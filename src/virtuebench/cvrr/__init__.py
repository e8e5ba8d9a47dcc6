"""CVRR-ES ("How Good is my Video LMM?", arXiv:2405.03690): 11 dimensions of complex video reasoning and robustness, open-ended QA
judged correct/incorrect by an LLM, and Dual-Step Contextual Prompting (DSCP).

Accuracy per dimension is correct / (correct + incorrect) over the judge's verdicts; the headline is
the mean over the 11 dimensions (the paper's Table 2).
"""

from __future__ import annotations

from virtuebench.instances import CVRR_DIMENSIONS

DIMENSIONS = CVRR_DIMENSIONS  # the release's folder names, in Table 2's order

TITLES = {
    "multiple_actions_in_a_single_video": "Multiple actions in single video",
    "fine_grained_action_understanding": "Fine-grained action understanding",
    "partial_actions": "Partial actions",
    "time_order_understanding": "Time order understanding",
    "non_existent_actions_with_existent_scene_depictions": "Non-existent actions with existent scene",
    "non_existent_actions_with_non_existent_scene_depictions": "Non-existent actions with non-existent scene",
    "continuity_and_object_instance_count": "Continuity and object instance count",
    "unusual_and_physically_anomalous_activities": "Unusual and physically anomalous activities",
    "interpretation_of_social_context": "Interpretation of social context",
    "understanding_emotional_context": "Understanding of emotional context",
    "interpretation_of_visual_context": "Interpretation of visual context",
}

#: The release's prompting folders and the project's prompt names for them.
SETTINGS = {"standard_prompting": "standard", "dscp_prompting": "dscp"}
