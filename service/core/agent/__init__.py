"""Coding agents' hook settings: the merge that installs and uninstalls selfhub's hooks
(`hooks.py`).
"""
