"""The gate that lets a few page runs of a server process proceed at once (issue 23)."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from structext_core import settings
from structext_core.studio import run_gate
from structext_core.studio.run_gate import RunGate

ROOT = Path(__file__).resolve().parents[2]


def run_threads(gate: RunGate, n: int, hold: float = 0.02, meet: bool = False) -> tuple[int, list[int]]:
    """n threads each holding a slot for ``hold`` s: (most at once, order of entry). With ``meet``,
    each holds its slot until all n are inside instead (5 s at most), so how many get in at once
    does not depend on how fast a busy machine starts threads."""
    inside = 0
    most = 0
    order: list[int] = []
    guard = threading.Lock()
    all_inside = threading.Barrier(n)

    def work(index: int) -> None:
        nonlocal inside, most
        with gate.slot():
            with guard:
                inside += 1
                most = max(most, inside)
                order.append(index)
            if meet:
                try:
                    all_inside.wait(timeout=5)
                except threading.BrokenBarrierError:
                    pass  # fewer got in at once: ``most`` says how many
            else:
                time.sleep(hold)
            with guard:
                inside -= 1

    threads = []
    for index in range(n):
        thread = threading.Thread(target=work, args=(index,))
        thread.start()
        threads.append(thread)
        time.sleep(0.002)  # they arrive in order
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive(), "a run never got through the gate"
    return most, order


def test_no_more_runs_at_once_than_slots_and_all_get_through():
    gate = RunGate(3)
    most, order = run_threads(gate, 20)
    assert most == 3
    assert sorted(order) == list(range(20))
    assert gate.busy == 0 and gate.waiting == 0
    assert gate.runs == 20 and gate.waited_runs >= 1 and gate.most_waiting >= 1


def test_first_come_first_served():
    gate = RunGate(1)
    _, order = run_threads(gate, 12, hold=0.03)
    assert order == list(range(12))


def test_zero_slots_is_no_gate():
    most, _ = run_threads(RunGate(0), 8, meet=True)
    assert most == 8


def test_a_thread_holding_a_slot_takes_it_again_at_once():
    gate = RunGate(1)
    with gate.slot():
        assert gate.held_here()
        with gate.slot():  # a fragment called inline in its full run: no second slot, no deadlock
            assert gate.busy == 1
        assert gate.held_here()
    assert not gate.held_here() and gate.busy == 0


def test_a_run_that_raises_gives_its_slot_back():
    gate = RunGate(1)

    class Rerun(BaseException):  # as st.rerun's and st.stop's exceptions are
        pass

    with pytest.raises(Rerun):
        with gate.slot():
            raise Rerun
    assert gate.busy == 0
    most, _ = run_threads(gate, 3)
    assert most == 1


def test_slots_from_the_environment(monkeypatch, caplog):
    assert settings.run_slots({}) == run_gate.DEFAULT_SLOTS == 3
    assert settings.run_slots({"STRUCTEXT_RUN_SLOTS": " 0 "}) == 0
    assert settings.run_slots({"STRUCTEXT_RUN_SLOTS": "256"}) == 256
    for bad in ("-1", "two", "1e3", "257", "３"):
        with pytest.raises(settings.SettingError, match="STRUCTEXT_RUN_SLOTS"):
            settings.run_slots({"STRUCTEXT_RUN_SLOTS": bad})
    # A page run that meets a bad value keeps the default and says so in the log.
    monkeypatch.setenv("STRUCTEXT_RUN_SLOTS", "many")
    assert run_gate.slots_from_env() == run_gate.DEFAULT_SLOTS
    assert "STRUCTEXT_RUN_SLOTS='many'" in caplog.text
    with pytest.raises(ValueError):
        RunGate(-1)


def test_the_server_refuses_to_start_with_a_bad_value(tmp_path):
    """``server.py`` reads the value before anything else: a bad one ends the start with its name."""
    env = {**os.environ, "STRUCTEXT_RUN_SLOTS": "lots", "STRUCTEXT_DB": str(tmp_path / "s.db")}
    done = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('server.py')"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "STRUCTEXT_RUN_SLOTS='lots' must be a whole number from 0 (no limit) to 256" in done.stderr


def test_all_stacks_says_where_each_thread_is_and_which_hold_a_slot(monkeypatch):
    gate = RunGate(1)
    monkeypatch.setattr(run_gate, "_gate", gate)
    inside, leave = threading.Event(), threading.Event()

    def holder_of_the_slot() -> None:
        with gate.slot():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=holder_of_the_slot, name="the-holder")
    thread.start()
    try:
        assert inside.wait(5)
        text = run_gate.all_stacks()
    finally:
        leave.set()
        thread.join()
    assert text.startswith("gate: 1 of 1 slots busy, 0 runs waiting")
    assert "the-holder (holds a slot of the gate)" in text
    assert "in holder_of_the_slot" in text
    assert "MainThread" in text and "(holds" not in text.split("MainThread")[1].split("\n")[0]


def test_a_signal_writes_every_stack_to_stderr(capfd, monkeypatch):
    import signal

    previous = signal.getsignal(signal.SIGUSR1)
    try:
        assert run_gate.log_stacks_on_signal()
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.1)  # the handler runs in the main thread at its next bytecode
        err = capfd.readouterr().err
        assert "every thread's stack, on signal" in err and "test_a_signal_writes_every_stack_to_stderr" in err
        # and each report added, once however often it was added (the server's last rerun requests)
        monkeypatch.setattr(run_gate, "_REPORTS", [])
        run_gate.add_report(lambda: "a report of the server")
        run_gate.add_report(run_gate._REPORTS[0])
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.1)
        assert capfd.readouterr().err.count("a report of the server\n--- end ---") == 1
        # Only the main thread can set a handler: elsewhere nothing changes.
        results: list[bool] = []
        thread = threading.Thread(target=lambda: results.append(run_gate.log_stacks_on_signal()))
        thread.start()
        thread.join()
        assert results == [False]
    finally:
        signal.signal(signal.SIGUSR1, previous)
