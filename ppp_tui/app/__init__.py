"""The terminal app (`ppp-tui browse`): its screens, widgets and the workspace they share."""
