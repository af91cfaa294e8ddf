"""The benchmark itself: names, trees, the eight formats, the 29 tasks, samples, suites,
the authors' released samples and the audit that solves every sample from its text.

Imports only :mod:`structext_core.settings`.
"""
