-- A ppp-tui database of schema version 2 (PRAGMA user_version 2), as ppp-tui wrote it
-- before failures and consensus results were stored: two runs, one preferred mark.
BEGIN TRANSACTION;
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
INSERT INTO "agents" VALUES(1,'old-1',0,'a',NULL,0.9,NULL,NULL,NULL,0,0,1,0);
INSERT INTO "agents" VALUES(2,'old-1',1,'b',NULL,0.6,NULL,NULL,NULL,0,0,0,0);
INSERT INTO "agents" VALUES(3,'old-2',0,'a',NULL,0.4,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "agents" VALUES(4,'old-2',1,'c',NULL,0.8,NULL,NULL,NULL,0,0,0,0);
CREATE TABLE preferred_marks (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    agent TEXT,
    marked_at TEXT NOT NULL,
    source TEXT NOT NULL                          -- import, cli or app
);
INSERT INTO "preferred_marks" VALUES(1,'old-1','a','2026-11-24T06:02:51Z','import');
CREATE TABLE run_scores (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    names TEXT NOT NULL,
    name_lengths BLOB NOT NULL,
    technical BLOB NOT NULL,
    counts BLOB NOT NULL
) WITHOUT ROWID;
INSERT INTO "run_scores" VALUES('old-1','ab',X'0100000001000000',X'CDCCCCCCCCCCEC3F333333333333E33F',X'0000000000000000010000000000000000000000000000000000000000000000');
INSERT INTO "run_scores" VALUES('old-2','ac',X'0100000001000000',X'9A9999999999D93F9A9999999999E93F',X'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000000000000000000000000000');
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
INSERT INTO "runs" VALUES('old-1',NULL,'plan',NULL,'general','2025-11-16T10:00:00Z','[]',0,NULL,'a','[]',2,'2026-11-24T06:02:51Z');
INSERT INTO "runs" VALUES('old-2',NULL,'tasks',NULL,'general',NULL,'[]',0,NULL,NULL,'[]',2,'2026-11-24T06:02:51Z');
CREATE TABLE trajectories (
    id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    turns INTEGER NOT NULL,
    questions INTEGER NOT NULL,
    violations INTEGER NOT NULL,
    unchecked TEXT NOT NULL DEFAULT '[]'          -- stated preferences no checker decided
);
INSERT INTO "trajectories" VALUES(1,'old-1',0,1,0,'[]');
INSERT INTO "trajectories" VALUES(2,'old-1',0,0,0,'[]');
INSERT INTO "trajectories" VALUES(4,'old-2',0,0,0,'[]');
CREATE TABLE trajectory_questions (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    text TEXT NOT NULL,
    effort TEXT NOT NULL CHECK (effort IN ('low', 'medium', 'high')),
    source TEXT NOT NULL                          -- label, classifier or extracted
);
INSERT INTO "trajectory_questions" VALUES(1,1,NULL,'Which one?','high','label');
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
CREATE TABLE trajectory_violations (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    preference TEXT NOT NULL,
    severity TEXT NOT NULL,
    penalty REAL,                                 -- the violation's own penalty, if given
    source TEXT NOT NULL                          -- label or checker
);
CREATE INDEX runs_stage ON runs(stage);
CREATE INDEX runs_spec ON runs(spec_id);
CREATE INDEX runs_created ON runs(created_at);
CREATE INDEX agents_scores
    ON agents(run_id, position, name, technical, q_low, q_medium, q_high, violations);
CREATE INDEX trajectories_run ON trajectories(run_id);
CREATE INDEX trajectory_turns_trajectory ON trajectory_turns(trajectory_id);
CREATE INDEX trajectory_questions_trajectory ON trajectory_questions(trajectory_id);
CREATE INDEX trajectory_violations_trajectory ON trajectory_violations(trajectory_id);
CREATE INDEX preferred_marks_run ON preferred_marks(run_id);
CREATE TRIGGER run_scores_agent_update AFTER UPDATE ON agents BEGIN
    DELETE FROM run_scores WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER run_scores_agent_delete AFTER DELETE ON agents BEGIN
    DELETE FROM run_scores WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER run_scores_agent_insert AFTER INSERT ON agents BEGIN
    DELETE FROM run_scores WHERE run_id = NEW.run_id;
END;
COMMIT;
