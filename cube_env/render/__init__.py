"""Renderers: pure functions from 54 colour indices to text or pixels."""
