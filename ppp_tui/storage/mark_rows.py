"""The two statements every writer of marks uses (imports, `prefer`, merges, the
sessions importer): light enough for the store to import at start."""

# A mark's history entry: (run id, agent or NULL for cleared, when, source, reviewer).
MARK_HISTORY = (
    "INSERT INTO preferred_marks (run_id, agent, marked_at, source, reviewer) VALUES (?,?,?,?,?)"
)
# The reviewer's current mark of the run, from a history entry of the same run.
CURRENT_MARK = "INSERT OR REPLACE INTO marks (run_id, reviewer, agent, marked_at) VALUES (?,?,?,?)"
