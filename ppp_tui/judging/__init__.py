"""The LLM judge of `ppp-tui judge`: requests to an OpenAI-compatible endpoint (client.py)
and the work over a database's questions and agents (work.py). docs/judge.md."""
