"""Evaluating models: prompts, the runner, scoring (ours and the paper's metric), result
import (our files and the harnesses' logs), aggregation, agreement and the paper's tables.

Imports only :mod:`structext_core.settings` and :mod:`structext_core.structext_eval`.
"""
