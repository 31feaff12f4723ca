-- A ppp-tui database of schema version 1 (PRAGMA user_version 1), as ppp-tui created it
-- with hand-written SQL before it used sqlite-utils: the tables and indexes, no rows.
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    spec_id TEXT,
    stage TEXT,
    task TEXT,
    task_type TEXT NOT NULL,
    created_at TEXT,
    preferences TEXT NOT NULL DEFAULT '[]',      -- JSON list of stated preference names
    states_preferences INTEGER NOT NULL DEFAULT 0, -- 1 if one other than no_preference
    selected_agent TEXT,                          -- the system's own pick, as imported
    preferred_agent TEXT,                         -- the current mark (history: preferred_marks)
    iterations TEXT NOT NULL DEFAULT '[]',        -- JSON list of quality scores
    agents INTEGER NOT NULL,
    imported_at TEXT NOT NULL
);
CREATE INDEX runs_stage ON runs(stage);
CREATE INDEX runs_spec ON runs(spec_id);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,                    -- order in the imported run
    name TEXT NOT NULL,
    model TEXT,
    technical REAL NOT NULL,
    relevance REAL,
    confidence REAL,
    output TEXT,
    -- What the whole-database arrays need, so they load without joins. NULL counts
    -- mean "no trajectory" (the technical-only fallback).
    q_low INTEGER,                                -- question counts by effort
    q_medium INTEGER,
    q_high INTEGER,
    violations INTEGER,
    UNIQUE (run_id, name)
);
-- Covers the whole-database scan, so it never reads the (large) output column.
CREATE INDEX agents_scores
    ON agents(run_id, position, name, technical, q_low, q_medium, q_high, violations);

-- One row per agent that has a trajectory (same id as the agent): none means
-- "no trajectory".
CREATE TABLE trajectories (
    id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    turns INTEGER NOT NULL,
    questions INTEGER NOT NULL,
    violations INTEGER NOT NULL,
    unchecked TEXT NOT NULL DEFAULT '[]'          -- stated preferences no checker decided
);
CREATE INDEX trajectories_run ON trajectories(run_id);

CREATE TABLE trajectory_turns (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,                        -- 1-based
    prompt TEXT,
    response TEXT,
    token_count INTEGER,
    latency_ms INTEGER,
    timestamp TEXT
);
CREATE INDEX trajectory_turns_trajectory ON trajectory_turns(trajectory_id);

CREATE TABLE trajectory_questions (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    text TEXT NOT NULL,
    effort TEXT NOT NULL CHECK (effort IN ('low', 'medium', 'high')),
    source TEXT NOT NULL                          -- label, classifier or extracted
);
CREATE INDEX trajectory_questions_trajectory ON trajectory_questions(trajectory_id);

CREATE TABLE trajectory_violations (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    preference TEXT NOT NULL,
    severity TEXT NOT NULL,
    penalty REAL,                                 -- the violation's own penalty, if given
    source TEXT NOT NULL                          -- label or checker
);
CREATE INDEX trajectory_violations_trajectory ON trajectory_violations(trajectory_id);

-- Every change of a run's preferred agent, kept with its time (agent NULL: cleared).
CREATE TABLE preferred_marks (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    agent TEXT,
    marked_at TEXT NOT NULL,
    source TEXT NOT NULL                          -- import, cli or app
);
CREATE INDEX preferred_marks_run ON preferred_marks(run_id);
