"""Bridges: CubeBench inside other frameworks' tools, above the runner (docs/ecosystem.md).

Each bridge is an optional subpackage that needs its own extra; importing this package needs none.
"""
