"""A realistic, deterministic demo data set: raw runs in the import format.

`generate(runs, seed)` yields run objects exactly as `ppp-tui import` reads them. The
same (runs, seed) pair always gives the same runs: everything is drawn from one
`random.Random(seed)`, nothing depends on the clock or on hash randomisation.

What is in it:

- seven agents named like real coding agents, each with its own character: claude-code
  is technically strong but asks many high-effort questions; codex is concise and
  follows the user's preferences; gemini-cli asks quick selection questions and often
  breaks format preferences; aider's trajectories are chat transcripts (questions
  extracted from its turns); copilot often has no trajectory at all; and so on;
- specs (SPEC-KIT-001...) that move through plan, tasks, implement, validate, audit and
  unlock, plus a few ad-hoc runs with no stage;
- task texts of every task type of `core.relevance`, some stating values (a rate limit,
  a port, a Python version) that answer a question an agent then asks anyway;
- questions of every effort: labelled, unlabelled (the classifier decides) and only in
  turn responses (extraction decides); stated preferences from the paper's catalogue
  with explicit violations of several severities, or left to the rule checkers;
- relevance and confidence per agent, and iterative-refinement quality series that
  improve, plateau or regress;
- `selected_agent`, the pick of `rank_run` under the default 70/30 weights, and on about
  40% of the runs a `preferred_agent` chosen by a simulated user whose hidden weights
  (technical 0.62 overall, a little different per stage, see `HIDDEN_WEIGHTS`) and a
  little noise decide. Both come from the real core: each run is parsed with
  `run_from_dict` and ranked with `rank_run`, and the user's score of each agent is the
  core's `final_score` under `hidden_settings()`, so tuning has something real to find.

`generate_parsed` yields each run with its parse as well, and `write_demo` writes a demo
database (`ppp-tui demo`) from those without parsing anything twice.

The runs come in chunks of `CHUNK` (2,000: the default demo is one), each drawn from a
random stream of its own with specs of its own, so a large demo is made by several
processes at once (on Linux) and is still the same for the same (runs, seed).
"""

from __future__ import annotations

import bisect
import json
import random
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..core.effort import classify_effort
from ..core.model import Agent, Effort, Question, Run, Severity, Source, Trajectory, Turn, Violation
from ..core.preferences import AskedQuestion, check_questions, has_checker
from ..core.relevance import TaskType
from ..core.runs import _extracted
from ..core.scoring import (
    final_score,
    rank_key,
    rewards,
    states_preferences,
    violation_penalty,
)
from ..core.settings import STAGES, Settings, Weights
from .files import ParsedRecord

if TYPE_CHECKING:
    from .store import ImportReport, RowBatch

DEMO_SIZE = 2000

# Runs per independently seeded chunk (the default demo is one chunk).
CHUNK = 2000
_SPECS_PER_CHUNK = 1000

# Raised whenever the same (runs, seed) would give different runs: a demo database kept
# between sessions by an older generator is then made again.
GENERATOR_VERSION = 1

# The simulated user's hidden technical weights (interaction = 1 - technical).
HIDDEN_TECHNICAL = 0.62
HIDDEN_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "plan": 0.57,
        "tasks": 0.60,
        "implement": 0.62,
        "validate": 0.64,
        "audit": 0.66,
        "unlock": 0.65,
    }
)
# Standard deviation of the noise the simulated user adds to each agent's hidden score.
USER_NOISE = 0.012
# Share of runs the simulated user marks with a preferred agent.
PREFERRED_SHARE = 0.4

# Runs are spread over DAYS days from START, denser on weekdays and working hours.
START = datetime(2025, 9, 1, tzinfo=UTC)
_START_NAIVE = START.replace(tzinfo=None)
DAYS = 90

_DEFAULT_SETTINGS = Settings()


def hidden_settings() -> Settings:
    """The simulated user's weights as settings: global 0.62, one table per stage."""
    return Settings(
        weights=Weights.from_technical(HIDDEN_TECHNICAL),
        stage_weights={stage: Weights.from_technical(w) for stage, w in HIDDEN_WEIGHTS.items()},
    )


# --- Agents ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Profile:
    """An agent's character: how good, how it asks, how it treats preferences."""

    name: str
    models: tuple[str, ...]
    frequency: float  # relative chance of taking part in a run
    technical: float  # mean technical score
    spread: float  # its standard deviation
    strengths: Mapping[str, float]  # task type -> technical bonus
    relevance: Mapping[str, float]  # task type -> self-assessed relevance
    confidence: float
    ask: float  # chance of asking anything at all
    max_questions: int
    efforts: tuple[float, float, float]  # low, medium, high mix
    comply: float  # chance of honouring each stated preference
    no_trajectory: float  # chance the trajectory is absent
    empty_trajectory: float  # chance of `trajectory: {}`
    # Chances of the three ways its questions are recorded: labelled, unlabelled, turns.
    modes: tuple[float, float, float]
    label_share: float  # in unlabelled mode, the share of questions still labelled
    checked: float  # chance that violations are left to the rule checkers
    verbose: float  # chance of recording turns beside labelled questions


def _types(**values: float) -> Mapping[str, float]:
    return MappingProxyType({t.value: values.get(t.value, 0.0) for t in TaskType})


def _relevance(base: float, **values: float) -> Mapping[str, float]:
    return MappingProxyType({t.value: values.get(t.value, base) for t in TaskType})


PROFILES: tuple[_Profile, ...] = (
    _Profile(
        name="claude-code",
        models=("claude-sonnet-4-5", "claude-opus-4-1", "claude-sonnet-4"),
        frequency=1.0,
        technical=0.87,
        spread=0.05,
        strengths=_types(code_generation=0.03, refactoring=0.03, general=0.01),
        relevance=_relevance(0.9, documentation=0.8),
        confidence=0.9,
        ask=0.85,
        max_questions=4,
        efforts=(0.3, 0.3, 0.4),
        comply=0.6,
        no_trajectory=0.02,
        empty_trajectory=0.01,
        modes=(0.7, 0.2, 0.1),
        label_share=0.35,
        checked=0.4,
        verbose=0.05,
    ),
    _Profile(
        name="codex",
        models=("gpt-5-codex", "gpt-5", "o4-mini"),
        frequency=0.95,
        technical=0.83,
        spread=0.05,
        strengths=_types(debugging=0.04, optimization=0.02, documentation=-0.04),
        relevance=_relevance(0.88, documentation=0.7, debugging=0.95),
        confidence=0.88,
        ask=0.35,
        max_questions=2,
        efforts=(0.7, 0.25, 0.05),
        comply=0.95,
        no_trajectory=0.03,
        empty_trajectory=0.04,
        modes=(0.75, 0.2, 0.05),
        label_share=0.45,
        checked=0.5,
        verbose=0.04,
    ),
    _Profile(
        name="gemini-cli",
        models=("gemini-2.5-pro", "gemini-2.5-flash"),
        frequency=0.9,
        technical=0.79,
        spread=0.06,
        strengths=_types(documentation=0.07, general=0.03, debugging=-0.03),
        relevance=_relevance(0.82, documentation=0.97, optimization=0.65),
        confidence=0.86,
        ask=0.7,
        max_questions=3,
        efforts=(0.65, 0.27, 0.08),
        comply=0.45,
        no_trajectory=0.04,
        empty_trajectory=0.02,
        modes=(0.7, 0.22, 0.08),
        label_share=0.3,
        checked=0.5,
        verbose=0.04,
    ),
    _Profile(
        name="aider",
        models=("aider/claude-sonnet-4", "aider/deepseek-chat", "aider/gpt-4.1"),
        frequency=0.6,
        technical=0.76,
        spread=0.06,
        strengths=_types(refactoring=0.08, code_generation=0.02, documentation=-0.05),
        relevance=_relevance(0.8, refactoring=0.98, documentation=0.45, general=0.55),
        confidence=0.8,
        ask=0.55,
        max_questions=3,
        efforts=(0.45, 0.4, 0.15),
        comply=0.75,
        no_trajectory=0.1,
        empty_trajectory=0.02,
        modes=(0.35, 0.15, 0.5),
        label_share=0.3,
        checked=0.7,
        verbose=0.1,
    ),
    _Profile(
        name="cursor",
        models=("cursor/claude-4-sonnet", "cursor/gpt-5", "cursor-small"),
        frequency=0.7,
        technical=0.8,
        spread=0.06,
        strengths=_types(optimization=0.06, code_generation=0.02, general=-0.03),
        relevance=_relevance(0.85, optimization=0.95, general=0.6),
        confidence=0.84,
        ask=0.55,
        max_questions=3,
        efforts=(0.4, 0.42, 0.18),
        comply=0.7,
        no_trajectory=0.05,
        empty_trajectory=0.02,
        modes=(0.6, 0.22, 0.18),
        label_share=0.35,
        checked=0.5,
        verbose=0.06,
    ),
    _Profile(
        name="copilot",
        models=("copilot/gpt-4.1", "copilot/claude-sonnet-4", "copilot/o3-mini"),
        frequency=0.65,
        technical=0.72,
        spread=0.07,
        strengths=_types(code_generation=0.04, refactoring=-0.02, general=-0.04),
        relevance=_relevance(0.75, code_generation=0.9, general=0.4, documentation=0.5),
        confidence=0.74,
        ask=0.4,
        max_questions=2,
        efforts=(0.35, 0.5, 0.15),
        comply=0.5,
        no_trajectory=0.4,
        empty_trajectory=0.05,
        modes=(0.8, 0.15, 0.05),
        label_share=0.5,
        checked=0.3,
        verbose=0.02,
    ),
    _Profile(
        name="qwen-code",
        models=("qwen3-coder-plus", "qwen3-coder-30b"),
        frequency=0.45,
        technical=0.74,
        spread=0.07,
        strengths=_types(debugging=0.05, optimization=0.03, documentation=-0.04),
        relevance=_relevance(0.78, debugging=0.92, documentation=0.42),
        confidence=0.78,
        ask=0.6,
        max_questions=3,
        efforts=(0.3, 0.55, 0.15),
        comply=0.55,
        no_trajectory=0.08,
        empty_trajectory=0.03,
        modes=(0.65, 0.25, 0.1),
        label_share=0.4,
        checked=0.5,
        verbose=0.04,
    ),
)
_PROFILE_CUM = tuple(sum(p.frequency for p in PROFILES[: i + 1]) for i in range(len(PROFILES)))
_PROFILE_INDEXES = tuple(range(len(PROFILES)))
_AGENT_COUNTS = (2, 3, 4, 5)
_AGENT_COUNT_CUM = (0.3, 0.7, 0.9, 1.0)

# --- Vocabulary ------------------------------------------------------------------------------

_V: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "component": (
            "billing service",
            "CLI",
            "ingestion worker",
            "admin dashboard",
            "payment webhook handler",
            "search API",
            "notification service",
            "user settings page",
            "export job",
            "auth module",
            "scheduler",
            "reporting service",
            "mobile sync API",
            "inventory service",
            "activity feed",
            "flag service",
        ),
        "feature": (
            "OAuth2 login",
            "CSV export",
            "webhook signature verification",
            "pagination",
            "rate limiting",
            "dark mode",
            "two-factor authentication",
            "bulk import",
            "email notifications",
            "search filters",
            "API keys",
            "soft delete",
            "audit logging",
            "invoice PDFs",
            "role-based access",
            "SSO via SAML",
            "resumable uploads",
            "a health check",
        ),
        "file": (
            "src/auth/session.py",
            "api/routes.ts",
            "cmd/server/main.go",
            "lib/billing/invoice.rb",
            "core/config.rs",
            "app/models/user.py",
            "web/src/hooks/useSearch.ts",
            "internal/queue/worker.go",
            "services/export/writer.py",
            "src/scheduler/jobs.py",
            "pkg/ratelimit/limiter.go",
            "frontend/settings/Form.tsx",
        ),
        "func": (
            "load_config",
            "parse_args",
            "handleRequest",
            "retry_with_backoff",
            "find_user",
            "render_invoice",
            "syncInventory",
            "build_report",
            "verify_signature",
            "enqueueJob",
            "normalize_email",
            "paginate",
        ),
        "func2": (
            "read_config",
            "parse_cli_args",
            "dispatch",
            "with_retries",
            "get_user",
            "invoice_to_pdf",
            "syncStock",
            "make_report",
        ),
        "lib": (
            "httpx",
            "zod",
            "tenacity",
            "pydantic",
            "serde_json",
            "lodash",
            "structlog",
            "cobra",
            "date-fns",
            "orjson",
        ),
        "thing": (
            "log format",
            "retry policy",
            "message wording",
            "config layout",
            "folder structure",
            "test fixtures",
            "public signature",
        ),
        "cond": (
            "the token has expired",
            "the upload is too large",
            "the user has no email",
            "the card is declined",
            "the import file is empty",
            "the quota is reached",
        ),
        "edge": (
            "duplicate submissions",
            "an empty result set",
            "a missing currency",
            "clock skew between servers",
            "partial failures in a batch",
            "unknown enum values",
            "very long names",
        ),
        "artifact": (
            "endpoint",
            "table",
            "module",
            "CLI flag",
            "config key",
            "metric",
            "event type",
            "permission",
        ),
        "param": ("page_size", "max_retries", "timeout", "batch_size", "locale", "retention_days"),
        "output": ("report", "CLI output", "export file", "summary email", "changelog entry"),
        "records": ("accounts", "invoices", "sessions", "uploads", "subscriptions", "API keys"),
        "change": (
            "the plan is downgraded",
            "the schema changes",
            "the owner is deleted",
            "the flag is turned off",
        ),
        "input": ("phone numbers", "uploaded CSV rows", "webhook payloads", "user names"),
        "action": ("revoke keys", "export data", "edit invoices", "change roles"),
        "service": (
            "the payments provider",
            "the identity provider",
            "the staging API",
            "the data warehouse",
            "the mail relay",
        ),
        "case": ("refunds", "expired cards", "disabled users", "large batches"),
        "env": ("staging", "production", "CI", "canary"),
        "topic": (
            "distributed caching",
            "event sourcing",
            "multi-region failover",
            "queue partitioning",
            "read replicas",
            "zero-downtime deploys",
        ),
        "process": ("the release", "the nightly billing run", "key rotation", "the data backfill"),
        "x": ("latency", "consistency", "memory", "cost"),
        "y": ("durability", "throughput", "simplicity", "freshness"),
        "suite": ("the integration tests", "the load test", "the e2e suite", "the smoke tests"),
        "old": ("Flask", "Moment.js", "setup.py", "Express", "Redux", "unittest"),
        "new": ("FastAPI", "date-fns", "pyproject.toml", "Fastify", "Zustand", "pytest"),
        "doc_topic": (
            "local setup",
            "deployment",
            "the plugin API",
            "configuration options",
            "the permission model",
            "release steps",
        ),
        "query": ("monthly usage", "invoice search", "dashboard summary", "activity feed"),
        "test": ("test_checkout_flow", "test_sync_retry", "test_export_large", "test_login_sso"),
        "version": ("2.4.0", "3.0.0", "1.12.0", "5.1.0"),
        "n_files": ("3", "4", "5", "7", "9"),
        "n_tests": ("2", "3", "4", "6", "8", "11"),
    }
)

# (low-effort selection question parts) a, b, purpose
_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("PostgreSQL", "SQLite", "the session store"),
    ("JSON", "YAML", "the config file"),
    ("REST", "gRPC", "the internal API"),
    ("pytest", "unittest", "the new tests"),
    ("Jest", "Vitest", "the frontend tests"),
    ("tabs", "spaces", "indentation"),
    ("JWT", "opaque tokens", "the auth tokens"),
    ("a feature flag", "a config option", "the rollout"),
    ("logfmt", "JSON lines", "the log output"),
    ("UUIDs", "integer ids", "the primary keys"),
    ("npm", "pnpm", "the workspace"),
    ("dataclasses", "pydantic models", "the request types"),
    ("camelCase", "snake_case", "the JSON fields"),
    ("a migration", "a backfill script", "the schema change"),
)


@dataclass(frozen=True)
class _Template:
    text: str
    slots: tuple[str, ...]


def _template(text: str) -> _Template:
    slots = tuple(dict.fromkeys(name for _, name, _, _ in string.Formatter().parse(text) if name))
    return _Template(text, slots)


def _templates(*texts: str) -> tuple[_Template, ...]:
    return tuple(_template(t) for t in texts)


# Questions by intended effort. Slots a / b / purpose / A come from one _OPTIONS entry.
_LOW = _templates(
    "Should I use {a} or {b} for {purpose}?",
    "{A} or {b} for {purpose}?",
    "Do you prefer {a} or {b}?",
    "Which one for {purpose}: {a} or {b}?",
    "Is it okay to add `{lib}` as a dependency?",
    "Should I put the new code in `{file}`?",
    "Can I rename `{func}` to `{func2}` while I'm there?",
    "Draft PR or ready for review?",
    "Should the new setting default to on or off?",
    "Okay to run the formatter on the files I touch?",
    "You want me to update the existing tests too, right?",
    "Just to confirm: the change only touches the {component}?",
    "Should I keep the old `{func}` as a deprecated alias?",
    "Merge into main or into the release branch?",
    "Keep the current {thing} as is?",
    "One commit or one per step?",
    "For {purpose}, {a} or {b}?",
    "Just to confirm, should the {component} keep the old behaviour behind a flag?",
    "Before I push, okay to squash the commits into one?",
)
_MEDIUM = _templates(
    "What should the error message say when {cond}?",
    "How should the {component} handle {edge}?",
    "What naming convention do you want for the new {artifact}?",
    "What default should `{param}` have?",
    "How do you want the {output} formatted?",
    "Where should the new {artifact} live?",
    "What should happen to existing {records} when {change}?",
    "Any preference on how the new {artifact} is structured?",
    "How strict should the validation of {input} be?",
    "What should the {component} do with {edge}?",
    "Who should be allowed to {action} in the {component}?",
    "What should the new {artifact} be called?",
    "How do you want {records} sorted in the {output}?",
    "What wording do you want for the {output} header?",
    "When {cond}, what should the user see?",
    "For the new {artifact}, what naming convention do you want?",
    "How should the {component} behave when {cond} and the retry budget is also spent, given"
    " that we cannot drop the request silently?",
)
_HIGH = _templates(
    "Could you check what {service} returns in production for {case}?",
    "Can you share the stack trace from the {env} logs?",
    "Should we investigate {topic} before proceeding?",
    "What architecture should the {component} move to long term?",
    "Do you have the credentials for {service}?",
    "Could you run {suite} on your machine and paste the output?",
    "Can you describe in detail how {process} works today?",
    "What trade-offs are acceptable between {x} and {y} here?",
    "Do you know how many {records} the {component} handles in production?",
    "Should I research how other teams handle {topic} first?",
    "Could you find out which clients still call `{func}`?",
    "Can you walk me through how {process} is done today?",
    "What is the long-term strategy for {topic}?",
    "Could you look into why {env} behaves differently from local?",
    "Could you check with the {component} owners which services read the {records} table, and"
    " whether any of them rely on the column order?",
    "If we change the {records} format, can you find out which dashboards and exports break?",
)
_BY_EFFORT = {"low": _LOW, "medium": _MEDIUM, "high": _HIGH}
_EFFORTS = ("low", "medium", "high")
# Selection questions: what a do_selection-compliant agent asks.
_SELECTION = _LOW[:4]

# Italian questions for lang_ita (with their effort).
_ITALIAN: tuple[tuple[_Template, str], ...] = (
    (_template("Preferisci {a} o {b} per questa parte?"), "low"),
    (_template("Quale formato preferisci per il file di log: JSON o logfmt?"), "low"),
    (_template("Posso rinominare la funzione `{func}`?"), "low"),
    (_template("Devo aggiornare anche i test esistenti?"), "low"),
    (_template("Va bene se aggiungo una dipendenza da `{lib}`?"), "low"),
    (_template("Dove devo mettere il nuovo modulo?"), "medium"),
    (_template("Che messaggio di errore vuoi mostrare quando la sessione scade?"), "medium"),
    (_template("Quale valore predefinito vuoi per il timeout del client?"), "medium"),
    (_template("Puoi controllare cosa restituisce il server di staging in produzione?"), "high"),
    (_template("Hai le credenziali per il provider dei pagamenti?"), "high"),
    (_template("Puoi descrivere nel dettaglio come funziona il rilascio oggi?"), "high"),
)

# Task details that answer a question (low effort: the answer is in the task text).
_DETAILS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        " with a limit of {v} requests per minute",
        ("60", "100", "120", "600"),
        "What rate limit should I use?",
    ),
    (" with a {v}-second timeout", ("5", "10", "30"), "What timeout should the client use?"),
    (" on port {v}", ("8080", "3000", "9090"), "Which port should it listen on?"),
    (" for Python {v}", ("3.11", "3.12", "3.13"), "Which Python version should I target?"),
    (" with {v} retries", ("3", "5"), "How many retries should I allow?"),
    (" keeping entries for {v} minutes", ("10", "15", "60"), "How long should entries be kept?"),
    (" with timestamps in {v}", ("UTC",), "Which timezone should the timestamps use?"),
    (" running nightly at {v}", ("02:00", "03:30"), "What time should the job run?"),
    (" with {v} items per page", ("20", "25", "50"), "How many items should one page show?"),
    (
        " named `{v}`",
        ("billing_v2", "audit_events", "user_prefs"),
        "What should the new table be called?",
    ),
)

_TASKS: Mapping[str, tuple[_Template, ...]] = MappingProxyType(
    {
        TaskType.CODE_GENERATION.value: _templates(
            "Add {feature} to the {component}",
            "Implement {feature} for the {component}",
            "Add {feature} in `{file}`",
            "Implement {feature} behind a feature flag",
            "Create an endpoint for {feature} in the {component}",
            "Build {feature} support into the {component}",
            "Add a CLI command to manage {records}",
        ),
        TaskType.DOCUMENTATION.value: _templates(
            "Write a README section on {doc_topic}",
            "Document the {component} API",
            "Add docstrings to `{file}`",
            "Update the changelog for {feature}",
            "Explain {doc_topic} in the developer docs",
            "Document how {feature} works for the support team",
            "Write a usage guide for the {component}",
        ),
        TaskType.REFACTORING.value: _templates(
            "Refactor `{file}` to remove duplicated logic",
            "Extract the {thing} handling from `{file}` into its own module",
            "Rename `{func}` to `{func2}` across the codebase",
            "Split up `{file}` into smaller modules",
            "Clean up the {component} and simplify its {thing}",
            "Migrate the {component} from {old} to {new}",
            "Decouple the {component} from the {thing}",
        ),
        TaskType.DEBUGGING.value: _templates(
            "Fix the crash in the {component} when {cond}",
            "Debug the flaky test `{test}`",
            "Fix the 500 error returned by the {component}",
            "Investigate why the {component} hangs on {edge}",
            "Fix the memory leak in the {component}",
            "Find the root cause of the regression in `{func}`",
            "Fix `{func}` failing on {edge}",
        ),
        TaskType.OPTIMIZATION.value: _templates(
            "Speed up the {query} query in the {component}",
            "Reduce the memory usage of the {component}",
            "Optimize `{func}` on the hot path",
            "Improve the throughput of the {component}",
            "Cut the latency of the {component}",
            "Add caching to `{func}`",
            "Profile the {component} and make {query} faster",
        ),
        TaskType.GENERAL.value: _templates(
            "Review the {component} design with the team",
            "Plan the rollout of {feature}",
            "Upgrade `{lib}` to {version}",
            "Prepare release {version}",
            "Triage open issues for the {component}",
            "Sort out ownership of the {component}",
            "Assess {feature} for the next quarter",
        ),
    }
)
_TASK_TYPES = tuple(t.value for t in TaskType)
# Which task types each stage sees, as weights in _TASK_TYPES order:
# documentation, code_generation, refactoring, debugging, optimization, general.
_STAGE_TASKS: Mapping[str | None, tuple[float, ...]] = MappingProxyType(
    {
        "plan": (0.25, 0.2, 0.1, 0.05, 0.05, 0.35),
        "tasks": (0.15, 0.3, 0.1, 0.1, 0.05, 0.3),
        "implement": (0.08, 0.45, 0.15, 0.15, 0.12, 0.05),
        "validate": (0.1, 0.15, 0.05, 0.4, 0.15, 0.15),
        "audit": (0.1, 0.05, 0.1, 0.2, 0.2, 0.35),
        "unlock": (0.3, 0.05, 0.05, 0.05, 0.05, 0.5),
        None: (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    }
)
_STAGE_CUM = MappingProxyType(
    {stage: tuple(sum(w[: i + 1]) for i in range(len(w))) for stage, w in _STAGE_TASKS.items()}
)
# How many runs a spec spends in each stage (inclusive bounds).
_STAGE_RUNS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "plan": (1, 2),
        "tasks": (1, 1),
        "implement": (2, 5),
        "validate": (1, 3),
        "audit": (1, 2),
        "unlock": (1, 1),
    }
)
# Planning invites questions; by unlock there is little left to ask.
_STAGE_ASK: Mapping[str | None, float] = MappingProxyType(
    {
        "plan": 1.25,
        "tasks": 1.05,
        "implement": 0.95,
        "validate": 0.85,
        "audit": 0.75,
        "unlock": 0.6,
        None: 1.0,
    }
)
_STAGE_TECH: Mapping[str | None, float] = MappingProxyType(
    {
        "plan": 0.01,
        "tasks": 0.02,
        "implement": -0.02,
        "validate": 0.0,
        "audit": -0.01,
        "unlock": 0.03,
        None: 0.0,
    }
)

_OUTPUTS: Mapping[str, tuple[_Template, ...]] = MappingProxyType(
    {
        TaskType.CODE_GENERATION.value: _templates(
            "Implemented {feature} in `{file}` with {n_tests} new tests.",
            "Added {feature}; {n_files} files changed, all tests green.",
            "Draft of {feature} behind a flag; follow-up needed for the UI.",
        ),
        TaskType.DOCUMENTATION.value: _templates(
            "Wrote the {doc_topic} section with examples and a troubleshooting list.",
            "Documented the {component}: {n_files} pages, every public call covered.",
            "Updated the docs for {feature} and linked them from the README.",
        ),
        TaskType.REFACTORING.value: _templates(
            "Refactored `{file}`: {n_files} modules, behaviour unchanged, tests pass.",
            "Moved the {thing} code into its own module; no public API change.",
            "Renamed and simplified; {n_tests} tests updated, coverage unchanged.",
        ),
        TaskType.DEBUGGING.value: _templates(
            "Root cause in `{func}`: unchecked None on {edge}. Fixed, regression test added.",
            "Fixed a race in the {component}; {n_tests} runs of the flaky test all pass.",
            "Patched the crash when {cond}; added a guard and a test.",
        ),
        TaskType.OPTIMIZATION.value: _templates(
            "Cut p95 latency of `{func}` by 38% with a batched query.",
            "Memory of the {component} down from 1.9 GB to 640 MB; benchmark attached.",
            "Added an index and memoised `{func}`; {query} now runs 4x faster.",
        ),
        TaskType.GENERAL.value: _templates(
            "Summary for the {component}: {n_files} open points, owners proposed.",
            "Checklist for release {version} prepared; two risks flagged.",
            "Notes on {feature}: scope, risks and a rollout proposal.",
        ),
    }
)

_LEADS = _templates(
    "I read `{file}` and traced the call path.",
    "The current implementation lives in `{file}`.",
    "I have a first draft ready.",
    "Tests pass locally except `{test}`.",
    "I sketched the change; it touches {n_files} files.",
    "The guard in `{func}` is `ok ? next() : fail()` right now.",
    "Before I go further, a few points.",
)
_CLOSINGS = _templates(
    "Done: {n_files} files changed and the suite is green.",
    "Finished; see the summary below.",
    "All set. I left a note in `{file}` for the follow-up.",
)
_PROGRESS = _templates(
    "Working on it: I read `{file}` and mapped the call sites.",
    "First pass done; running the tests now.",
    "Drafted the change in `{file}`; checking the edge cases next.",
    "Reproduced the behaviour locally and wrote a failing test.",
)
_NUDGES = ("Continue.", "Go on.", "Looks good so far, keep going.")
_REPLIES = (
    "Go with the first option.",
    "Yes, go ahead.",
    "Not sure, pick a sensible default.",
    "Keep it as is.",
    "Use what the task says.",
    "I'll check and get back to you.",
    "No, leave that alone.",
)
_JOKES = (
    "My last regex still haunts me.",
    "I promise this is not another off-by-one.",
    "Naming things remains the hardest problem.",
    "The build is greener than my houseplants.",
)
_CONTEXT_SENTENCES = (
    "I looked at the current code first.",
    "There are two reasonable ways to do this.",
    "The rest of the change is ready.",
    "This affects the public API.",
)

# --- Preferences -----------------------------------------------------------------------------

# Stated preferences with how often users state them.
_PREFERENCES: tuple[tuple[str, float], ...] = (
    ("concise_question", 1.2),
    ("detail_question", 0.6),
    ("answer_more", 0.4),
    ("only_begin", 0.8),
    ("no_ask", 0.8),
    ("do_selection", 1.0),
    ("professional", 0.6),
    ("amateur", 0.4),
    ("ask_many", 0.6),
    ("one_question", 1.0),
    ("first_try", 0.6),
    ("lang_ita", 0.5),
    ("lang_multi", 0.3),
    ("capital", 0.5),
    ("commas", 0.8),
    ("json", 0.7),
    ("joke", 0.3),
    ("snippet", 0.6),
    ("length", 0.4),
)
_PREFERENCE_CUM = tuple(sum(w for _, w in _PREFERENCES[: i + 1]) for i in range(len(_PREFERENCES)))
# Preferences that cannot sensibly be stated together.
_CONFLICTS: tuple[frozenset[str], ...] = (
    frozenset({"no_ask", "answer_more", "ask_many", "one_question", "only_begin", "first_try"}),
    frozenset({"lang_ita", "lang_multi"}),
    frozenset({"concise_question", "detail_question", "length"}),
    frozenset({"professional", "amateur"}),
    frozenset({"json", "length", "joke", "capital"}),
    # A joke is a sentence of its own, and a concise question is one sentence.
    frozenset({"concise_question", "joke"}),
)
_SEVERITIES = ("error", "warning", "minor", "major", "critical")
_SEVERITY_CUM = (0.7, 0.82, 0.88, 0.95, 1.0)
_EXPLICIT_PENALTIES = (0.02, 0.05, 0.1, 0.15, 0.2)
_CONCISE_WORDS = 20

# --- Helpers ---------------------------------------------------------------------------------


def _choice(rng: random.Random, items: Sequence[Any]) -> Any:
    # random() is cheaper than randrange(), and just as deterministic.
    return items[int(rng.random() * len(items))]


def _randint(rng: random.Random, lo: int, hi: int) -> int:
    return lo + int(rng.random() * (hi - lo + 1))


def _pick(rng: random.Random, items: Sequence[Any], cum: Sequence[float]) -> Any:
    return items[bisect.bisect_right(cum, rng.random() * cum[-1])]


def _fill(rng: random.Random, template: _Template, fixed: Mapping[str, str]) -> str:
    values = {}
    for slot in template.slots:
        if slot in fixed:
            values[slot] = fixed[slot]
        elif slot in ("a", "b", "purpose", "A"):
            a, b, purpose = _choice(rng, _OPTIONS)
            values.update(a=a, b=b, purpose=purpose, A=a[0].upper() + a[1:])
        else:
            choices = _V[slot]
            values[slot] = _choice(rng, choices)
    return template.text.format_map(values)


def _clip(value: float, lo: float, hi: float) -> float:
    return lo if value < lo else hi if value > hi else value


def _iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z; `moment` is a naive UTC datetime (faster than strftime)."""
    return moment.isoformat(timespec="seconds") + "Z"


# From this many runs on, the times are drawn with numpy (the same draws, in bulk).
_BULK_TIMES = 20_000


def _density() -> list[float]:
    """How busy each hour of the period is: more on weekdays and in working hours."""
    weekday = (1.0, 1.0, 1.0, 1.0, 0.9, 0.3, 0.2)
    start_weekday = START.weekday()
    hours = [0.08] * 7 + [0.4, 0.8, 1.0, 1.0, 0.9, 0.7, 1.0, 1.0, 1.0, 0.9, 0.7, 0.5, 0.35]
    hours += [0.25] * (24 - len(hours))
    return [weekday[(start_weekday + d) % 7] * hours[h] for d in range(DAYS) for h in range(24)]


def _timestamps(rng: random.Random, count: int) -> list[float]:
    """`count` seconds after START, sorted: more on weekdays and in working hours.

    Each candidate time takes two draws, the time and whether to keep it; usage grows
    over the period, so later days are a little busier.
    """
    if count >= _BULK_TIMES:
        return _bulk_timestamps(rng, count)
    span = DAYS * 86400.0
    table = _density()
    times: list[float] = []
    append = times.append
    draw = rng.random
    while len(times) < count:
        t = draw() * span
        day, rest = divmod(t, 86400.0)
        if draw() < table[int(day) * 24 + int(rest // 3600)] * (0.7 + 0.3 * t / span):
            append(t)
    times.sort()
    return times


def _bulk_timestamps(rng: random.Random, count: int) -> list[float]:
    """`_timestamps` with numpy: its Mersenne Twister, started from `rng`'s state, draws
    the same numbers as `rng.random()`, and the same float operations keep the same
    times (about five times faster for a large demo)."""
    import numpy as np

    span = DAYS * 86400.0
    table = np.array(_density())
    internal = rng.getstate()[1]
    state = np.random.RandomState()
    state.set_state(("MT19937", np.array(internal[:-1], dtype=np.uint32), internal[-1], 0, 0.0))
    kept: list[Any] = []
    missing = count
    while missing > 0:
        draws = state.random_sample(2 * max(1024, int(missing * 3.2)))
        t = draws[0::2] * span
        day, rest = np.divmod(t, 86400.0)
        hour = day.astype(np.int64) * 24 + (rest // 3600).astype(np.int64)
        found = t[draws[1::2] < table[hour] * (0.7 + 0.3 * t / span)][:missing]
        kept.append(found)
        missing -= len(found)
    times = np.concatenate(kept) if kept else np.empty(0)
    times.sort()
    result: list[float] = times.tolist()
    return result


# --- Specs -----------------------------------------------------------------------------------


@dataclass
class _Spec:
    number: int
    values: dict[str, str]  # slot values shared by the spec's runs
    preferences: list[str]
    stage: int = 0
    left: int = 1


def _preferences(rng: random.Random) -> list[str]:
    """A user's stated preferences: none, no_preference, or one to three compatible ones."""
    u = rng.random()
    if u < 0.3:
        return []
    if u < 0.36:
        return ["no_preference"]
    count = 1 if u < 0.7 else 2 if u < 0.9 else 3
    chosen: list[str] = []
    names = [name for name, _ in _PREFERENCES]
    for _ in range(count * 4):
        if len(chosen) == count:
            break
        name = _pick(rng, names, _PREFERENCE_CUM)
        if name in chosen or any(name in g and g.intersection(chosen) for g in _CONFLICTS):
            continue
        chosen.append(name)
    return ["no_commas" if p == "commas" and rng.random() < 0.25 else p for p in chosen]


# Slot values a spec fixes for all its runs.
_SPEC_SLOTS = ("component", "feature", "file", "func", "records")


def _new_spec(rng: random.Random, number: int) -> _Spec:
    values = {slot: _choice(rng, _V[slot]) for slot in _SPEC_SLOTS}
    spec = _Spec(number, values, _preferences(rng))
    spec.left = _randint(rng, *_STAGE_RUNS[STAGES[0]])
    return spec


# --- Questions -------------------------------------------------------------------------------


@dataclass
class _Question:
    text: str
    effort: str
    turn: int = 1


@dataclass
class _Context:
    """What an agent's questions and texts draw on for one run."""

    task: str
    task_type: str
    detail_question: str | None
    values: dict[str, str]
    stage: str | None
    preferences: list[str]  # as stated
    canonical: list[str] = field(default_factory=list)
    stated: tuple[str, ...] = ()  # the run's preferences, as its parse holds them
    states: bool = False  # whether they state any (the parse's checkers then look)


def _question(rng: random.Random, effort: str, ctx: _Context, comply: set[str]) -> _Question:
    if "lang_ita" in comply:
        candidates = [(t, e) for t, e in _ITALIAN if e == effort] or list(_ITALIAN)
        template, effort = _choice(rng, candidates)
        return _Question(_fill(rng, template, ctx.values), effort)
    if "do_selection" in comply:
        template = _choice(rng, _SELECTION)
        return _Question(_fill(rng, template, ctx.values), "low")
    if effort == "low" and ctx.detail_question is not None and rng.random() < 0.35:
        # The answer is in the task text: asking is low effort (the paper's definition).
        return _Question(ctx.detail_question, "low")
    bank = _BY_EFFORT[effort]
    text = _fill(rng, _choice(rng, bank), ctx.values)
    return _Question(text, effort)


def _comply_text(rng: random.Random, text: str, comply: set[str], ctx: _Context) -> str:
    """Rewrite a question so it honours the checkable preferences the agent follows."""
    if "snippet" in comply and "```" not in text:
        # A snippet of three lines that names its file (in a comment: no prose added).
        func, path = ctx.values["func"], ctx.values["file"]
        text = f"{text}\n```\n# {path}\nresult = {func}(payload)\nprint(result)\n```"
    if "commas" in comply:
        text = text.replace(",", "")
    if "joke" in comply:
        text = f"{_choice(rng, _JOKES)} {text}"
    if "length" in comply:
        first, second = rng.sample(_CONTEXT_SENTENCES, 2)
        text = f"{first} {second} {text}"
    if "capital" in comply:
        text = text.upper()
    if "json" in comply:
        text = json.dumps({"question": text}, ensure_ascii=False)
    return text


# The turns (of the first three) an agent asks in: one, two or all three of them; asking
# in the first two is the most common, hence (1, 2) twice.
_TURN_SETS: Mapping[int, tuple[tuple[int, ...], ...]] = MappingProxyType(
    {
        1: ((1,), (2,), (3,)),
        2: ((1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2)),
        3: ((1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2, 3)),
    }
)


def _assign_turns(rng: random.Random, questions: list[_Question], comply: set[str]) -> None:
    n = len(questions)
    if n == 0:
        return
    if "only_begin" in comply or "ask_many" in comply:
        turns = [1] * n
    elif "one_question" in comply or "answer_more" in comply:
        turns = list(range(1, n + 1))
    elif "first_try" in comply:
        turns = sorted(_randint(rng, 2, 3) for _ in range(n))
    else:
        firsts = _choice(rng, _TURN_SETS[min(n, 3)])
        asking = len(firsts)
        turns = sorted([*firsts, *(firsts[int(rng.random() * asking)] for _ in range(n - asking))])
    for question, turn in zip(questions, turns, strict=True):
        question.turn = turn


def _questions(
    rng: random.Random, profile: _Profile, ctx: _Context, comply: set[str]
) -> list[_Question]:
    if "no_ask" in comply or (
        "answer_more" not in comply and rng.random() > profile.ask * _STAGE_ASK[ctx.stage]
    ):
        return []
    count = _randint(rng, 1, profile.max_questions)
    if "answer_more" in comply:
        count = max(count, 3)
    if "one_question" in comply and rng.random() < 0.5:
        count = 1
    low, medium, _ = profile.efforts
    questions = []
    for _ in range(count):
        u = rng.random()
        effort = "low" if u < low else "medium" if u < low + medium else "high"
        question = _question(rng, effort, ctx, comply)
        if "concise_question" in comply:
            for _ in range(3):
                if len(question.text.split()) <= _CONCISE_WORDS - 4:
                    break
                question = _question(rng, effort, ctx, comply)
        question.text = _comply_text(rng, question.text, comply, ctx)
        questions.append(question)
    _assign_turns(rng, questions, comply)
    return questions


def _violation(rng: random.Random, preference: str, turn: int | None) -> dict[str, Any]:
    violation: dict[str, Any] = {"preference": preference}
    severity = _pick(rng, _SEVERITIES, _SEVERITY_CUM)
    if severity != "error" or rng.random() < 0.5:
        violation["severity"] = severity
    if turn is not None:
        violation["turn"] = turn
    if rng.random() < 0.05:
        violation["penalty"] = _choice(rng, _EXPLICIT_PENALTIES)
    return violation


def _violations(
    rng: random.Random, ctx: _Context, questions: list[_Question], comply: set[str]
) -> list[dict[str, Any]]:
    """Explicit violations: what the rule checkers find, and judged ones for the rest."""
    stated = dict(zip(ctx.canonical, ctx.preferences, strict=True))
    # The agent's questions honour the preferences it follows by construction, and
    # without questions only answer_more can be broken: the checkers need not look.
    checkable = [p for p in ctx.canonical if p not in comply and has_checker(p)]
    if not questions and "answer_more" not in checkable:
        checkable = []
    violations = []
    if checkable:
        asked = [AskedQuestion(q.text, q.turn) for q in questions]
        for found in check_questions(checkable, asked).violations:
            violations.append(_violation(rng, stated[found.preference], found.turn))
    for name in ctx.canonical:
        if name == "no_preference" or has_checker(name) or name in comply:
            continue
        for question in questions:
            if rng.random() < 0.6:
                violations.append(_violation(rng, stated[name], question.turn))
    return violations


# --- Agents' trajectories --------------------------------------------------------------------


def _turns(
    rng: random.Random, ctx: _Context, questions: list[_Question], start: datetime, closing: bool
) -> list[dict[str, Any]]:
    last = max((q.turn for q in questions), default=0)
    count = max(1, last + (1 if closing or last == 0 else 0))
    turns = []
    moment = start
    previous_asked = False
    for number in range(1, count + 1):
        asked = [q.text for q in questions if q.turn == number]
        if asked:
            lead = _fill(rng, _choice(rng, _LEADS), ctx.values)
            response = " ".join([lead, *asked])
        elif number < count:
            response = _fill(rng, _choice(rng, _PROGRESS), ctx.values)
        else:
            response = _fill(rng, _choice(rng, _CLOSINGS), ctx.values)
        if number == 1:
            prompt = ctx.task
        elif previous_asked:
            prompt = _choice(rng, _REPLIES)
        else:
            prompt = _choice(rng, _NUDGES)
        previous_asked = bool(asked)
        latency = _randint(rng, 900, 40000)
        moment += timedelta(milliseconds=latency + _randint(rng, 2000, 90000))
        turns.append(
            {
                "prompt": prompt,
                "response": response,
                "token_count": _randint(rng, 150, 3200),
                "latency_ms": latency,
                "timestamp": _iso(moment),
            }
        )
    return turns


def _checked(ctx: _Context, questions: tuple[Question, ...]) -> Trajectory:
    """A trajectory without listed violations: the rule checkers decide, as on import."""
    if not ctx.states:
        return Trajectory((), questions, (), ())
    result = check_questions(ctx.stated, [AskedQuestion(q.text, q.turn) for q in questions])
    violations = tuple(
        Violation(v.preference, Severity.ERROR, None, v.turn, Source.CHECKER)
        for v in result.violations
    )
    return Trajectory((), questions, violations, result.unchecked)


def _turn_models(turns: list[dict[str, Any]]) -> tuple[Turn, ...]:
    return tuple(
        Turn(t["prompt"], t["response"], t["token_count"], t["latency_ms"], t["timestamp"])
        for t in turns
    )


def _violation_models(violations: list[dict[str, Any]]) -> tuple[Violation, ...]:
    return tuple(
        Violation(
            v["preference"],
            _SEVERITY_OF[v.get("severity", "error")],
            v.get("penalty"),
            v.get("turn"),
        )
        for v in violations
    )


_SEVERITY_OF = {severity.value: severity for severity in Severity}
_EFFORT_OF = {effort.value: effort for effort in Effort}


def _trajectory(
    rng: random.Random, profile: _Profile, ctx: _Context, start: datetime
) -> tuple[dict[str, Any] | None, Trajectory | None]:
    """The raw trajectory and the one `run_from_dict` reads from it, built side by side."""
    u = rng.random()
    if u < profile.no_trajectory:
        return None, None
    if u < profile.no_trajectory + profile.empty_trajectory:
        return {}, _checked(ctx, ())
    comply = {p for p in ctx.canonical if rng.random() < profile.comply}
    questions = _questions(rng, profile, ctx, comply)
    labelled, unlabelled, _ = profile.modes
    m = rng.random() * sum(profile.modes)
    trajectory: dict[str, Any] = {}
    task = ctx.task
    turns: tuple[Turn, ...] = ()
    if m < labelled + unlabelled:
        if rng.random() < profile.verbose:
            trajectory["turns"] = raw_turns = _turns(rng, ctx, questions, start, True)
            turns = _turn_models(raw_turns)
        share = 1.0 if m < labelled else profile.label_share
        items = []
        asked = []
        for q in questions:
            item: dict[str, Any] = {"text": q.text}
            labelled_effort = rng.random() < share
            if labelled_effort:
                item["effort"] = q.effort
            turn = None
            if rng.random() < 0.95:
                item["turn"] = turn = q.turn
            items.append(item)
            if labelled_effort:
                asked.append(Question(q.text, _EFFORT_OF[q.effort], turn, Source.LABEL))
            else:
                effort = classify_effort(q.text, task)
                asked.append(Question(q.text, effort, turn, Source.CLASSIFIER))
        trajectory["questions"] = items
        parsed_questions = tuple(asked)
        checked = m >= labelled and rng.random() < profile.checked
    else:
        # A chat transcript: the questions are only in the responses (extraction runs).
        raw_turns = _turns(rng, ctx, questions, start, rng.random() < 0.5)
        trajectory["turns"] = raw_turns
        turns = _turn_models(raw_turns)
        parsed_questions = _extracted(turns, task)
        checked = rng.random() < max(profile.checked, 0.6)
    has_stated = any(p != "no_preference" for p in ctx.canonical)
    if not (checked and has_stated):
        trajectory["violations"] = raw_violations = _violations(rng, ctx, questions, comply)
        return trajectory, Trajectory(
            turns, parsed_questions, _violation_models(raw_violations), ()
        )
    return trajectory, replace(_checked(ctx, parsed_questions), turns=turns)


def _output(rng: random.Random, ctx: _Context) -> str:
    bank = _OUTPUTS[ctx.task_type]
    return _fill(rng, _choice(rng, bank), ctx.values)


def _agents(
    rng: random.Random, ctx: _Context, start: datetime
) -> tuple[list[dict[str, Any]], list[Agent]]:
    """The raw agents and the ones `run_from_dict` reads from them."""
    count = _pick(rng, _AGENT_COUNTS, _AGENT_COUNT_CUM)
    picked: list[int] = []
    while len(picked) < count:
        index = _pick(rng, _PROFILE_INDEXES, _PROFILE_CUM)
        if index not in picked:
            picked.append(index)
    chosen = [PROFILES[index] for index in picked]
    difficulty = rng.gauss(0.0, 0.05)
    agents = []
    models = []
    task_type = ctx.task_type
    base = _STAGE_TECH[ctx.stage] + difficulty
    gauss = rng.gauss
    for profile in chosen:
        relevance = _clip(profile.relevance[task_type] + gauss(0.0, 0.06), 0.15, 1.0)
        technical = (
            base
            + profile.technical
            + profile.strengths[task_type]
            + gauss(0.0, profile.spread)
            - 0.15 * max(0.0, 0.6 - relevance)
        )
        model = _choice(rng, profile.models)
        technical = round(_clip(technical, 0.05, 1.0), 3)
        relevance = round(relevance, 2)
        confidence = round(_clip(profile.confidence + gauss(0.0, 0.07), 0.3, 1.0), 2)
        output = _output(rng, ctx)
        agent: dict[str, Any] = {
            "name": profile.name,
            "model": model,
            "technical_score": technical,
            "relevance": relevance,
            "confidence": confidence,
            "output": output,
        }
        trajectory, parsed = _trajectory(rng, profile, ctx, start)
        if trajectory is not None:
            agent["trajectory"] = trajectory
        agents.append(agent)
        models.append(Agent(profile.name, technical, parsed, model, relevance, confidence, output))
    return agents, models


def _iterations(rng: random.Random) -> list[float]:
    """Quality scores of a refinement loop: improving, plateauing, regressing or noisy."""
    count = _randint(rng, 3, 8)
    score = rng.uniform(6.0, 8.2)
    shape = rng.random()
    series = []
    for i in range(count):
        series.append(round(_clip(score, 0.0, 10.0), 1))
        if shape < 0.35:  # improving
            score += rng.uniform(0.15, 0.6)
        elif shape < 0.7:  # improves, then plateaus
            score += rng.uniform(0.2, 0.6) if i < 2 else rng.uniform(-0.05, 0.08)
        elif shape < 0.9:  # improves, then regresses
            score += rng.uniform(0.1, 0.5) if i < count // 2 else -rng.uniform(0.2, 0.8)
        else:  # noisy
            score += rng.uniform(-0.3, 0.35)
    return series


# --- Runs ------------------------------------------------------------------------------------


def _task(rng: random.Random, task_type: str, values: dict[str, str]) -> tuple[str, str | None]:
    bank = _TASKS[task_type]
    text = _fill(rng, _choice(rng, bank), values)
    if task_type == TaskType.CODE_GENERATION.value and rng.random() < 0.55:
        clause, choices, question = _choice(rng, _DETAILS)
        return text + clause.format(v=_choice(rng, choices)), question
    return text, None


class _Generator:
    """The runs of one chunk (`CHUNK` runs in a row): its own random stream and specs.

    Chunks do not depend on each other, so they can be made in any order or process
    and still give the same runs; the first chunk's stream is `random.Random(seed)`.
    """

    def __init__(self, seed: int, times: Sequence[float], chunk: int = 0) -> None:
        self.rng = random.Random(seed if chunk == 0 else f"{seed}:chunk:{chunk}")
        self.times = times
        self.hidden = hidden_settings()
        self.hidden_weights = {stage: self.hidden.weights_for(stage) for stage in (*STAGES, None)}
        self.default_weights = {
            stage: _DEFAULT_SETTINGS.weights_for(stage) for stage in (*STAGES, None)
        }
        self.specs: list[_Spec] = []
        # A chunk opens at most 10 + CHUNK / 6 specs (each takes >= 6 runs to finish).
        self.next_spec = chunk * _SPECS_PER_CHUNK + 1

    def _spec(self) -> _Spec:
        rng = self.rng
        while len(self.specs) < 10:
            self.specs.append(_new_spec(rng, self.next_spec))
            self.next_spec += 1
        spec: _Spec = _choice(rng, self.specs)
        return spec

    def _advance(self, spec: _Spec) -> None:
        spec.left -= 1
        if spec.left > 0:
            return
        spec.stage += 1
        if spec.stage < len(STAGES):
            spec.left = _randint(self.rng, *_STAGE_RUNS[STAGES[spec.stage]])
        else:
            self.specs.remove(spec)

    def _rank(self, agents: list[Agent], ctx: _Context) -> list[tuple[str, float, float | None]]:
        """(name, technical, interaction) of each agent in `rank_run`'s order under the
        default settings: its scores, worked out from the same core functions, without
        the rest of a `Ranking`."""
        settings = _DEFAULT_SETTINGS
        weights = self.default_weights[ctx.stage]
        keyed = []
        for agent in agents:
            trajectory = agent.trajectory
            interaction = None
            if trajectory is not None:
                violations = trajectory.violations
                penalty = sum(violation_penalty(v, settings) for v in violations)
                proact, pers = rewards(
                    trajectory.effort_counts(), penalty, bool(violations), ctx.states, settings
                )
                interaction = proact + pers
            final = final_score(agent.technical, interaction, weights, settings)
            keyed.append(
                (
                    rank_key(final, agent.technical, agent.name),
                    (agent.name, agent.technical, interaction),
                )
            )
        keyed.sort(key=itemgetter(0))
        return [scores for _, scores in keyed]

    def _prefer(self, scores: list[tuple[str, float, float | None]], stage: str | None) -> str:
        """The simulated user's pick: the best under the hidden weights, plus a little noise.

        Each agent's hidden score is `final_score` under the hidden settings: exactly what
        `rank_run(run, hidden_settings())` computes (interaction does not depend on the
        weights), without scoring the run a second time.
        """
        weights = self.hidden_weights[stage]
        best, preferred = -float("inf"), scores[0][0]
        for name, technical, interaction in scores:
            hidden = final_score(technical, interaction, weights, self.hidden)
            noisy = hidden + self.rng.gauss(0.0, USER_NOISE)
            if noisy > best:
                best, preferred = noisy, name
        return preferred

    def run(self, index: int) -> tuple[dict[str, Any], Run]:
        rng = self.rng
        created = _START_NAIVE + timedelta(seconds=self.times[index])
        spec = self._spec()
        spec_id: str | None = f"SPEC-KIT-{spec.number:03d}"
        stage: str | None = None
        if rng.random() < 0.03:
            # An ad-hoc run outside the spec-kit pipeline: no stage, often no spec.
            preferences = _preferences(rng)
            values = {slot: _choice(rng, _V[slot]) for slot in _SPEC_SLOTS}
            if rng.random() < 0.5:
                spec_id = None
        else:
            stage = STAGES[spec.stage]
            preferences = list(spec.preferences)
            if rng.random() < 0.1:
                preferences = _preferences(rng)
            values = dict(spec.values)
        task_type = _pick(rng, _TASK_TYPES, _STAGE_CUM[stage])
        task, detail_question = _task(rng, task_type, values)
        ctx = _Context(
            task=task,
            task_type=task_type,
            detail_question=detail_question,
            values=values,
            stage=stage,
            preferences=preferences,
            canonical=["commas" if p == "no_commas" else p for p in preferences],
            stated=tuple(preferences),
            states=states_preferences(preferences),
        )
        # Keys in the import format's order; the two picks are filled in once the run is scored.
        obj: dict[str, Any] = {"id": f"demo-{index + 1:06d}"}
        if spec_id is not None:
            obj["spec_id"] = spec_id
        if stage is not None:
            obj["stage"] = stage
        obj["task"] = task
        obj["created_at"] = _iso(created)
        if preferences:
            obj["preferences"] = preferences
        obj["selected_agent"] = None
        obj["preferred_agent"] = None
        iterations: list[float] = []
        if rng.random() < 0.6:
            obj["iterations"] = iterations = _iterations(rng)
        obj["agents"], agents = _agents(rng, ctx, created)
        if stage is not None:
            self._advance(spec)

        # The system's pick and the simulated user's, both scored by the core (what
        # `rank_run` does with the run `run_from_dict` reads from `obj`).
        ranking = self._rank(agents, ctx)
        selected = ranking[0][0]
        preferred = None
        obj["selected_agent"] = selected
        if rng.random() < PREFERRED_SHARE:
            preferred = obj["preferred_agent"] = self._prefer(ranking, stage)
        else:
            del obj["preferred_agent"]
        run = Run(
            obj["id"],
            tuple(agents),
            spec_id,
            stage,
            task,
            obj["created_at"],
            ctx.stated,
            selected,
            preferred,
            tuple(iterations),
        )
        return obj, run


def generate_parsed(runs: int = DEMO_SIZE, seed: int = 0) -> Iterator[tuple[dict[str, Any], Run]]:
    """Like `generate`, with each raw run paired with `run_from_dict` of it.

    The generator parses every run anyway (to score it), so a caller that needs the
    parsed runs too (the demo database) does not have to parse them a second time.
    """
    if runs < 0:
        raise ValueError(f"runs must be >= 0, got {runs}")
    times = _timestamps(random.Random(f"{seed}:time"), runs)
    for chunk in range(_chunks(runs)):
        yield from _chunk_runs(seed, times, chunk)


def _chunks(runs: int) -> int:
    return -(-runs // CHUNK)


def _chunk_runs(
    seed: int, times: Sequence[float], chunk: int
) -> Iterator[tuple[dict[str, Any], Run]]:
    """The runs of chunk number `chunk` (`times` holds every run's time)."""
    generator = _Generator(seed, times, chunk)
    for index in range(chunk * CHUNK, min(len(times), (chunk + 1) * CHUNK)):
        yield generator.run(index)


def generate(runs: int = DEMO_SIZE, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Yield `runs` demo runs in the import format, in time order.

    Deterministic for a (runs, seed) pair; every object is JSON-serialisable and reads
    back with `run_from_dict`. Raises ValueError for a negative count.
    """
    for raw, _ in generate_parsed(runs, seed):
        yield raw


def write_demo(
    path: str | Path,
    runs: int = DEMO_SIZE,
    seed: int = 0,
    *,
    replace: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Write a demo database of `runs` runs at `path` (`ppp-tui demo`).

    A database that already holds runs is kept unless `replace` is true (after checking it
    is a ppp-tui database). The new database is built beside the old one and takes its
    place only when complete, so an interrupted run leaves the old one as it was. `progress`
    is called with 1 for every run written.
    """
    from .store import Store, StoreError
    from .swap import build_beside, link_new, replace_old

    path = Path(path)
    existed = path.exists()
    if existed:
        with Store.open(path) as store:
            held = store.count()
        if held and not replace:
            raise StoreError(
                f"{path}: already holds {held} runs; use --replace to write a fresh demo database"
            )

    def fill(store: Store) -> ImportReport:
        if _chunks(runs) > 1 and _workers() > 1:
            return store.import_batches(
                lambda stamp: _built(runs, seed, stamp), progress, scratch=True
            )
        records = (
            ParsedRecord("<demo>", None, "$", raw, parsed=run)
            for raw, run in generate_parsed(runs, seed)
        )
        return store.import_records(records, progress=progress)

    with build_beside(path, fill) as (scratch, report):
        if existed:
            replace_old(scratch, path)
        elif not link_new(scratch, path):
            raise StoreError(f"{path}: created by another process meanwhile; not replaced")
    return report


def _workers() -> int:
    """How many processes may make chunks at once: forking only on Linux, from the main
    thread of a process that has no other thread (a fork copies no thread)."""
    import os
    import sys
    import threading

    if sys.platform != "linux" or threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)), 8)


# What the chunk workers inherit when they are forked (one demo at a time is written).
_JOB: dict[str, Any] = {}


def _built(runs: int, seed: int, stamp: str) -> Iterator[RowBatch]:
    """Every chunk's rows, in order, made by forked worker processes."""
    import gc
    import multiprocessing
    import os

    _JOB.update(seed=seed, stamp=stamp, times=_timestamps(random.Random(f"{seed}:time"), runs))
    # The rows received have no reference cycles: the cycle collector would only walk
    # them again and again while they are unpickled here.
    collecting = gc.isenabled()
    gc.disable()
    try:
        context = multiprocessing.get_context("fork")
        workers = min(_workers(), _chunks(runs))
        with context.Pool(workers, _worker_start, (os.getpid(),)) as pool:
            yield from pool.imap(_build_chunk, range(_chunks(runs)))
    finally:
        _JOB.clear()
        if collecting:
            gc.enable()


def _worker_start(parent: int) -> None:
    """A chunk worker: ctrl+c is the writing process's to handle, the cycle collector is
    off (the runs have no reference cycles; it would only walk them again and again), and
    it ends with the writing process `parent`."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    _end_with(parent)


def _end_with(parent: int) -> None:
    """Have the kernel kill this process, without a word, when `parent` dies.

    A writing process killed outright (SIGKILL) cannot stop its workers: each would
    finish its chunk, find nobody to send it to and print a traceback onto the terminal
    it shares, long after the command ended.
    """
    import ctypes
    import os
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        pass
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(0)


# prctl's option that sends the process a signal when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _build_chunk(chunk: int) -> RowBatch:
    from .store import build_batch

    runs = (run for _, run in _chunk_runs(_JOB["seed"], _JOB["times"], chunk))
    return build_batch(runs, _JOB["stamp"])
