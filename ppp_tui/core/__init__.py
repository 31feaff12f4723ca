"""The pure scoring core: formulas, classifiers, ranking, regret and tuning.

Nothing in this package performs I/O or imports textual; every face of ppp-tui
(the CLI, the terminal app) calls into it.
"""
