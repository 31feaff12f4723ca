"""The app's screens: each a page of its own (a run, the runs list, the tuning panel, the
dashboard, the leaderboard, help) or a box that asks first. A screen talks to the app
through messages (messages.py) and the small typed interface in services.py."""
