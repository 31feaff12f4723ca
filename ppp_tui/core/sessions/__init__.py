"""Coding agents' own session transcripts, as ppp-tui reads them.

The readers (storage/sessions/) turn one transcript file into a `Session`; everything
after that is shared by every agent and is pure: which sessions worked on one task
(`grouping`), the test evidence in a session's tool results (`evidence`), and what a
session becomes as an agent of a run (`agents`).
"""
