"""Issue 46, item 2: AIBench's people on Results say true things: the pairwise study's counted votes
are the lead's (one source), and no table or figure shows a raw None or nan."""
from __future__ import annotations

import re

from structext_core.aibench import pairwise as pws
from tests.aibench.test_page_results_aibench import aibench_dir, env, own_copy  # noqa: F401 (fixtures)
from tests.aibench.test_page_results_people import open_people, world  # noqa: F401 (fixtures)
from tests.pages.light_choices import send
from tests.pages.light_parts import notes
from tests.pages.test_screens_say_true_things import raw_missing


def test_the_people_section_counts_as_the_lead_does_and_shows_no_raw_missing_value(world):  # noqa: F811
    at = open_people(world["lead"])
    send(at, "rs_aib_people", True)
    assert not at.exception
    counted = pws.counted_votes(world["db"], world["study"])
    assert counted == sum(c.votes for c in pws.person_counts(world["db"], world["study"]))
    chooser = at.selectbox(key="rs_aib_pw_study")
    assert chooser.format_func(chooser.value).endswith(f", {counted} counted votes)")
    said = [c.value for c in notes(at, "caption") if re.match(r"\d+ counted votes? \(", c.value)]
    assert said and said[0].startswith(f"{counted} counted votes")
    assert raw_missing(at) == []
