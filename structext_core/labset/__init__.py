"""The lab's own benchmark: any multiple-choice or short-answer question set (JSONL, CSV or an
Inspect AI dataset file), given a human baseline beside models. Its member: :mod:`.member`."""
