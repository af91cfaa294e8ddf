"""``crowd start|config``'s edges (issue 45, item 8): it writes only files of its own making in the run
folder (a lab's ``haproxy.log`` or ``app-a.log`` there stops it, untouched), and ``--bind`` is an IP address
or a host name, refused by name otherwise (no "port taken", no newline in the printed configuration)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from structext_core.cli import crowd
from structext_core.cli.main import main as cli_main


def _haproxy_or_skip() -> None:
    try:
        crowd.find_haproxy()
    except crowd.UsageError:
        pytest.skip("haproxy is not installed here (Debian: apt-get install haproxy)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _refused(capsys, *argv: str) -> tuple[str, str]:
    status = cli_main(["crowd", *argv])
    captured = capsys.readouterr()
    assert status == 2, captured.err
    return captured.err, captured.out


# ------------------------------------------------------------------------------ --bind
@pytest.mark.parametrize("good", ["0.0.0.0", "127.0.0.1", "::", "::1", "fe80::1", "localhost",
                                  "crowd.lab.example.org", "node-2"])
def test_addresses_and_host_names_are_taken(good):
    assert crowd.check_bind(good) == good


@pytest.mark.parametrize("bad", ["", " ", "0.0.0.0\nfrontend evil", "127.0.0.1 ", "999.1.1.1", "1.2.3",
                                 "host name", "-lead.example", "a..b", "x" * 300, "127.0.0.1:80", "[::1]",
                                 "lab.example/cfg"])
def test_anything_else_is_refused_naming_the_flag_and_the_value(bad):
    with pytest.raises(crowd.UsageError) as refused:
        crowd.check_bind(bad)
    message = str(refused.value)
    assert message.startswith("--bind ") and "is not an IP address or a host name" in message
    assert "\n" not in message  # a newline in the value is shown escaped, never printed as one
    assert repr(bad[:80]) in message


def test_config_refuses_a_bad_bind_and_prints_no_configuration(capsys):
    err, out = _refused(capsys, "config", "--bind", "0.0.0.0:8500\n    server evil 10.0.0.1:80")
    assert "--bind '0.0.0.0:8500\\n    server evil 10.0.0.1:80' is not an IP address" in err
    assert out == ""


def test_an_ipv6_bind_is_written_in_brackets_and_haproxy_takes_it():
    text = crowd.haproxy_config(2, 9000, bind="::1")
    assert "    bind [::1]:9000\n" in text
    assert "    bind 0.0.0.0:9000\n" in crowd.haproxy_config(2, 9000)
    try:
        haproxy = crowd.find_haproxy()
    except crowd.UsageError:
        return
    checked = subprocess.run([haproxy, "-c", "-q", "-f", "/dev/stdin"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_start_with_a_bad_bind_says_so_not_that_a_port_is_taken(tmp_path, capsys):
    err, _ = _refused(capsys, "start", "--bind", "no such\nhost", "--run-dir", str(tmp_path / "run"))
    assert "--bind 'no such\\nhost' is not an IP address or a host name" in err and "taken" not in err
    assert not (tmp_path / "run").exists()


def test_start_on_an_address_of_no_interface_here_says_so(tmp_path, capsys):
    _haproxy_or_skip()
    err, _ = _refused(capsys, "start", "--bind", "192.0.2.77", "--port", str(_free_port()),
                      "--app-port", str(_free_port()), "--run-dir", str(tmp_path / "run"))
    assert "--bind '192.0.2.77' is no address of this machine" in err and "taken" not in err
    assert not (tmp_path / "run").exists()


def test_start_on_a_name_that_does_not_resolve_says_so(tmp_path, capsys):
    _haproxy_or_skip()
    err, _ = _refused(capsys, "start", "--bind", "no-such-host.invalid", "--port", str(_free_port()),
                      "--app-port", str(_free_port()), "--run-dir", str(tmp_path / "run"))
    assert "--bind 'no-such-host.invalid': no address has that name" in err


# ------------------------------------------------------------------------------ its own files only
@pytest.mark.parametrize("name", ["haproxy.log", "app-a.log", "app-b.log", "crowd.pid"])
def test_a_log_of_the_lab_in_the_run_folder_stops_start_and_is_left_as_it_was(tmp_path, capsys, name):
    _haproxy_or_skip()
    theirs = "2026-12-01 the lab's own notes\nkeep me\n"
    (tmp_path / name).write_text(theirs)
    err, _ = _refused(capsys, "start", "--port", str(_free_port()), "--app-port", str(_free_port()),
                      "--bind", "127.0.0.1", "--run-dir", str(tmp_path))
    assert f"{name} in {tmp_path} exists and was not written by this command: nothing is overwritten" in err
    assert (tmp_path / name).read_text() == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no configuration, no other log written


def test_a_link_where_a_log_goes_is_refused_and_never_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "haproxy.log").symlink_to(target)
    assert crowd.not_ours(run, 2) == ["haproxy.log"]
    with pytest.raises(OSError):
        crowd._open_log(run / "haproxy.log", "haproxy")
    assert target.read_text() == "precious\n"


def test_its_own_logs_are_recognised_and_written_again_with_their_first_line(tmp_path):
    process = crowd._spawn([sys.executable, "-c", "print('first run')"], tmp_path / "app-a.log", "app process a")
    process.wait(30)
    first = (tmp_path / "app-a.log").read_text()
    assert first.startswith(f"{crowd.LOG_HEADER}app process a, started ") and first.endswith("first run\n")
    (tmp_path / "crowd.pid").write_text(f"{os.getpid()}\n")
    (tmp_path / "haproxy.log").write_text("")  # empty: nothing to lose
    (tmp_path / "haproxy.cfg").write_text(crowd.haproxy_config(2, 9000))
    assert crowd.not_ours(tmp_path, 2) == []
    process = crowd._spawn([sys.executable, "-c", "print('second run')"], tmp_path / "app-a.log", "app process a")
    process.wait(30)
    second = (tmp_path / "app-a.log").read_text()
    assert second.count(crowd.LOG_HEADER) == 1 and "first run" not in second and second.endswith("second run\n")
    (tmp_path / "app-b.log").write_text("the lab's\n")
    (tmp_path / "haproxy.cfg").write_text("global\n")
    assert crowd.not_ours(tmp_path, 2) == ["haproxy.cfg", "app-b.log"]
    assert crowd.not_ours(tmp_path, 1) == ["haproxy.cfg"]  # one process writes no app-b.log
