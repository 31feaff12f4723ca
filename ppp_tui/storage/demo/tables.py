"""The demo's text tables: the words, sentence templates and preference catalogue
that questions, tasks, outputs and turns are drawn from.

Templates name their slots in braces (`{file}`, `{func}`, ...); a run fills them with
the values of its spec, so the texts of one spec's runs agree. Nothing here draws a
random number: the generator does.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from types import MappingProxyType

from ...core.relevance import TaskType

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
    # Each slot once, in the order it first appears: the order its value is drawn in.
    slots: tuple[str, ...]
    # The text as a %-format with a %s per field ("%" doubled, braces unescaped), or
    # without slots the text itself, unescaped; and what picks the fields' values, in
    # the text's order, from the slots' values. Filling with % this way gives what
    # `text.format_map` gives, in about half the time.
    pattern: str
    fields: Callable[[Mapping[str, str]], str | tuple[str, ...]] | None


def _template(text: str) -> _Template:
    literals: list[str] = []  # the text around the fields, unescaped
    names: list[str] = []
    pattern: list[str] = []
    for literal, name, spec, conversion in string.Formatter().parse(text):
        if name == "" or spec or conversion:
            raise ValueError(f"a demo template has only named, plain slots: {text!r}")
        literals.append(literal)
        pattern.append(literal.replace("%", "%%"))
        if name is not None:
            names.append(name)
            pattern.append("%s")
    if not names:
        return _Template(text, (), "".join(literals), None)
    return _Template(text, tuple(dict.fromkeys(names)), "".join(pattern), itemgetter(*names))


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
    # Capitals are English ones: a question in Italian, or in several languages, is not.
    frozenset({"capital", "lang_ita"}),
    frozenset({"capital", "lang_multi"}),
    # A joke is a sentence of its own, and a concise question is one sentence.
    frozenset({"concise_question", "joke"}),
)
_SEVERITIES = ("error", "warning", "minor", "major", "critical")
_SEVERITY_CUM = (0.7, 0.82, 0.88, 0.95, 1.0)
_EXPLICIT_PENALTIES = (0.02, 0.05, 0.1, 0.15, 0.2)
_CONCISE_WORDS = 20
