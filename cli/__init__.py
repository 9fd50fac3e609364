"""The `self` command line: parse, make one library call, render."""
