"""Evaluating models: the runner, scoring (ours and the paper's metric), result import (our files
and the harnesses' logs), aggregation, agreement, draws and writing a harness task's files.

Imports only :mod:`structext_core.settings`, :mod:`structext_core.text` and :mod:`structext_core.protocol`.
"""
