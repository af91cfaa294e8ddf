"""``python -m structext_core``: the command line every benchmark shares.

The root parser, the shared verbs ``items`` (any benchmark's replies scored through the protocol,
:mod:`structext_core.cli.items`) and ``study`` (a study's answers as an Inspect log,
:mod:`structext_core.cli.studies`) and the error path; each benchmark adds its own verbs through its
member module (``register_cli``, :mod:`structext_core.protocol`). The first member's verbs lead the
list and its ``CLI_DESCRIPTION`` is the command's, as when the command served one benchmark; the
shared verbs follow them, then the other members' verbs.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys

from structext_core import protocol

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, the status of a tool the closed pipe stopped


class UsageError(Exception):
    """A mistake in the command line or its inputs, reported without a traceback."""


#: The verbs the command itself offers (every benchmark's: :mod:`structext_core.cli.items` and
#: :mod:`structext_core.cli.studies`; the crowd deployment behind HAProxy: :mod:`structext_core.cli.crowd`).
SHARED_COMMANDS = ("items", "study", "crowd")


def _register(member, sub, command: str | None) -> None:
    """A member's verbs; a ``register_cli`` that takes ``command`` (the verb being run, None for
    the whole list) is told it, so that it can leave out verbs that are slow to load."""
    register = member.register_cli
    if "command" in inspect.signature(register).parameters:
        register(sub, command=command)
    else:
        register(sub)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; ``command``: the verb about to run, when it is a known one."""
    members = list(protocol.members().values())
    description = protocol.option(members[0], "CLI_DESCRIPTION") if members else None
    parser = argparse.ArgumentParser(prog="python -m structext_core",
                                     description=description or "Work with benchmarks from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def register_shared() -> None:
        # Loaded only when they may be the verb: a benchmark's verb (`generate`) is not slowed by them.
        if command not in (None, *SHARED_COMMANDS):
            return
        from structext_core.cli import crowd as cli_crowd  # several app processes behind a sticky HAProxy
        from structext_core.cli import items as cli_items  # any benchmark's replies, scored through the protocol
        from structext_core.cli import studies as cli_studies  # any benchmark's studies

        cli_items.register(sub)
        cli_studies.register(sub)
        cli_crowd.register(sub)

    for position, member in enumerate(members):  # each benchmark's own verbs (structext_core.protocol)
        if protocol.option(member, "register_cli"):
            _register(member, sub, command)
        if position == 0:
            register_shared()
    if not members:
        register_shared()
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    known = argv and (argv[0] in SHARED_COMMANDS or protocol.owner_of_command(argv[0]))
    args = build_parser(argv[0] if known else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`score ... | head -1`): files are written before anything is
        # printed, so stop quietly, as a tool killed by SIGPIPE would, without a traceback
        # (and without a second one when Python flushes stdout at exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
