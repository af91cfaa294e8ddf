"""Text every layer shares: counted nouns (:mod:`.words`), text made safe to show (:mod:`.safe_text`), and the size limits on every text a person or a file hands us (:mod:`.limits`)."""
