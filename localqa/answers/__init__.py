"""The answer stage: the sentence scorer, the model's choice and its verification, evidence
coverage and doubts, when the evidence decides, lists and counts, and cause sentences."""
