"""`python -m ppp_tui`: the same program as `ppp-tui` (how `serve` starts the app)."""

from .cli import main

main()
