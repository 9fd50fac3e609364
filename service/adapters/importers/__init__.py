"""Importers: other tools' stores brought into a selfhub workspace, every event kept."""
