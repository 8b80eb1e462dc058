"""How a submission is scored: the verdicts, one submission as a task, the quick path."""
