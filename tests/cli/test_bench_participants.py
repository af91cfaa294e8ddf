"""``benchmarks/bench_annotators.py --participants``: the crowd's benchmark, run with tiny numbers.

Three people arrive by a study link of two places on a real server (``streamlit run server.py``), each
over the browser's websocket protocol (benchmarks/st_client.py: the first run at the link's address
with its query string, the page the server switches to followed, a radio option picked and a number
typed): two are enrolled, consent, send the questionnaire, accept the rule and answer; the third is
refused as full. The run's own checks read the database (participants, consents, questionnaires,
answers, integrity); its exit status says whether every goal but the timing one was met (a loaded
test machine says nothing about p95)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_people_arrive_by_the_link_two_take_the_places_and_the_third_is_refused():
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_annotators.py"), "--participants", "2", "--extra", "1",
         "--ramp", "2", "--seconds", "8", "--pace-min", "2", "--pace-max", "3", "--read-min", "0.2",
         "--read-max", "0.4", "--items", "20"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert "3 participants arriving by the study link within 2 s for 2 places" in out, out + run.stderr
    goals = dict(re.findall(r"^goal: (.+): (met|NOT met)", out, re.M))
    assert len(goals) == 7, out
    assert {goal: met for goal, met in goals.items() if not goal.startswith("p95")} == \
        {goal: "met" for goal in goals if not goal.startswith("p95")}, out
    assert "2 participants in the database for 2 places (all taken)" in out, out
    assert "2 kept with the platform's PROLIFIC_PID, STUDY_ID and SESSION_ID; 1 refused as full (expected 1)" in out
    assert "2 consented, 2 questionnaires sent (4 answers); 2 reached the questions" in out, out
    assert "questionnaires: 2 of 2 sent kept exactly as sent (choice and number)" in out, out
    assert "the refusal said: 'This study is full: all 2 places are taken.'" in out, out
    answers = re.search(r"^answers: (\d+) acknowledged, (\d+) rows in the database \(0 lost", out, re.M)
    assert answers and int(answers[1]) == int(answers[2]) >= 2, out
    assert run.returncode == (0 if goals[next(g for g in goals if g.startswith("p95"))] == "met" else 1), out
