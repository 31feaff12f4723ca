"""Readers of coding agents' session transcripts (Claude Code, Codex CLI, Gemini CLI),
and how their files are found, recognised and imported (docs/sessions.md)."""
