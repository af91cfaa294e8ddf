"""Numeric word problems: an example benchmark registered from outside the workbench's repository."""
