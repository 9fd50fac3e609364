"""The service's git endpoint: git's smart HTTP protocol over each hosted workspace."""
