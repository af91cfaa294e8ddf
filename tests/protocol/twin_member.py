"""A member whose display name is another's (tests/protocol/test_members.py refuses it at registration)."""
from structext_core.labset.member import (  # noqa: F401 (the protocol's names, borrowed)
    AXES,
    ITEM_FIELDS,
    PLACES,
    STRATA,
    SUMMARY,
    item_id,
    score_answer,
    show_question,
)

NAME = "twin"
DISPLAY_NAME = "the lab's own"
