"""Text every layer shares: counted nouns (:mod:`.words`) and text made safe to show (:mod:`.safe_text`)."""
