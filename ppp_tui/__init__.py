"""ppp-tui: score, compare and tune multi-agent coding runs with the PPP framework."""

__version__ = "0.1.0"
