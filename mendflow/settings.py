"""All configuration in one place: typed, documented, read from ``MENDFLOW_*`` environment variables.

Nested groups use ``__`` in the variable name, e.g. ``MENDFLOW_LLM__BASE_URL``. The seed's names
(``BUILD_TIMEOUT_SEC``, ``MIN_LINE_COV``) are accepted as aliases.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from mendflow.contracts import ErrorCategory, Language
from mendflow.quick_settings import default_state_dir


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "mendflow"


class SandboxSettings(BaseModel):
    """Limits every job gets, on either launcher."""

    memory_limit_mb: int = Field(4096, description="Address-space (local) or memory (k8s) limit per job.")
    cpu_limit: float = Field(2.0, description="CPU cores a job may use (k8s limit; local: cpu cgroup quota).")
    cpu_time_limit_sec: int = Field(3600, description="RLIMIT_CPU for local jobs.")
    open_files_limit: int = Field(4096, description="RLIMIT_NOFILE for local jobs.")
    max_processes: int = Field(
        16384,
        description="Processes and threads a local job may have at once (pids cgroup, where writable); a job that "
        "reaches it is ERRORED (once_cell's stress test holds 1,000 threads beside the other tests).",
    )
    # Above every id systemd gives (65535 is its last) and below useradd's first subordinate id (100000), and
    # small enough for ustar's owner fields (7 octal digits, 2097151 at most): commons-compress 1.28.0's tests
    # archive files they wrote, and its tar writer refused a group id of 1600872332, as no CI runner's is.
    job_ids_start: int = Field(
        65_536,
        description="When mendflow runs as root each local job drops to a uid of its own, and each repository's "
        "dependency cache gets a group of its own, from this range (above the ids systemd gives accounts, below "
        "useradd's subordinate ids).",
    )
    job_ids_count: int = Field(34_464, description="How many ids the range above holds (the last is 99999).")
    egress_hosts: list[str] = Field(
        ["pypi.org", "files.pythonhosted.org"],
        description="What a local job's dependency phase may reach (``host`` for port 443, or ``host:port``), "
        "through the launcher's egress proxy; the hosts of the index URLs in the job's environment "
        "(UV_INDEX_URL, UV_DEFAULT_INDEX, PIP_INDEX_URL, ...) are added. Every other phase has no network.",
    )
    cache_max_idle_days: float = Field(
        14, description="`mendflow reap` removes a repository's dependency cache no job has used for this long."
    )
    cache_max_gb: float = Field(
        20, description="`mendflow reap` then removes the least recently used caches until the rest fit in this."
    )
    workspace_size_mb: int = Field(4096, description="emptyDir size limit for /workspace on Kubernetes.")
    local_base_dir: Path | None = Field(
        None,
        description="Local launcher's workspaces, job toolchain and the jobs' dependency cache. Default: "
        "/var/tmp/mendflow when running as root (jobs drop privileges and cannot reach ~root), else "
        "<cache_dir>/local-launcher.",
    )


# npm, pnpm and yarn 1 read npm_config_registry, yarn 2+ its own.
NPM_REGISTRY_VARIABLES = ("npm_config_registry", "YARN_NPM_REGISTRY_SERVER")
# The Rust runner reads these (a non-default index is written into the job's cargo config as crates.io's replacement).
CARGO_VARIABLES = ("MENDFLOW_CARGO_INDEX", "MENDFLOW_CARGO_DOWNLOADS")
CRATES_IO_INDEX = "https://index.crates.io/"
# The Java runner reads this (a repository other than Maven Central becomes every pom's mirror).
MAVEN_VARIABLES = ("MENDFLOW_MAVEN_REPOSITORY",)
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"


class LanguageSettings(BaseModel):
    """What a language's build job gets from the trusted side: where its dependency phase fetches from."""

    go_proxy: str = Field(
        "https://proxy.golang.org",
        description="GOPROXY of a Go job's dependency phase; its hosts join the phase's egress allowlist. The "
        "offline phases get GOPROXY=off.",
    )

    npm_registry: str = Field(
        "https://registry.npmjs.org/",
        description="The npm registry of a JavaScript/TypeScript job's dependency phase (npm, pnpm and yarn 1, and "
        "the pnpm or yarn a project uses); its host joins the phase's egress allowlist.",
    )
    yarn_registry: str = Field(
        "https://registry.yarnpkg.com",
        description="Yarn 2+'s registry (npmRegistryServer), also the host yarn 1's lockfiles name in their "
        "`resolved` URLs, which yarn 1 fetches as written; joins the allowlist like npm_registry.",
    )

    cargo_index: str = Field(
        CRATES_IO_INDEX,
        description="The sparse index a Rust job's `cargo fetch` reads (another one replaces crates.io for the "
        "job); its host joins the phase's egress allowlist.",
    )
    cargo_downloads: str = Field(
        "https://static.crates.io/",
        description="Where that index's crates are downloaded from (its config.json's `dl`); joins the allowlist.",
    )

    maven_repository: str = Field(
        MAVEN_CENTRAL,
        description="The Maven repository of a Java job's dependency phase; another one than Maven Central "
        "becomes the mirror of every repository a pom names (settings.xml, mirrorOf *). Its host joins the "
        "phase's egress allowlist.",
    )

    def job_env(self, language: Language) -> dict[str, str]:
        if language is Language.GO:
            return {"GOPROXY": self.go_proxy}
        if language is Language.TYPESCRIPT:
            return {"npm_config_registry": self.npm_registry, "YARN_NPM_REGISTRY_SERVER": self.yarn_registry}
        if language is Language.RUST:
            return {"MENDFLOW_CARGO_INDEX": self.cargo_index, "MENDFLOW_CARGO_DOWNLOADS": self.cargo_downloads}
        if language is Language.JAVA:
            return {"MENDFLOW_MAVEN_REPOSITORY": self.maven_repository}
        return {}

    def every_job_env(self) -> dict[str, str]:
        """What any language's job may get: a shared egress proxy allows the indexes all of them name."""
        return {k: v for language in Language for k, v in self.job_env(language).items()}


class PynguinSettings(BaseModel):
    """Offline test generation. A fixed seed makes a run reproducible: same commit, same tests."""

    seed: int = Field(20260101, description="Pynguin's --seed for every module.")
    search_time_sec: int = Field(20, description="Pynguin's --maximum-search-time for a module with a small gap.")
    search_sec_per_gap: float = Field(
        2.0,
        description="A module's search grows with its gap: this many seconds per line and branch the build "
        "missed in it, from search_time_sec up to search_time_max_sec.",
    )
    search_time_max_sec: int = Field(60, description="The longest --maximum-search-time any module gets.")
    module_limit_sec: int = Field(120, description="Hard limit on Pynguin's total time per module.")


class S3Settings(BaseModel):
    """Credentials stay on the trusted side; jobs only ever see presigned URLs."""

    endpoint_url: str | None = Field(None, description="For MinIO-style stores; None means AWS.")
    region_name: str | None = None
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    presign_expiry_sec: int = 3600
    bucket_block: str | None = Field(
        None,
        description="A prefect-aws S3Bucket block: the store is its bucket and folder, with its credentials "
        "(use instead of MENDFLOW_STORE_URL).",
    )
    credentials_block: str | None = Field(
        None, description="A prefect-aws AwsCredentials block for the s3:// store URL; wins over the keys above."
    )


class LLMSettings(BaseModel):
    """Any OpenAI-compatible endpoint; with no base_url and no api_key mendflow runs offline."""

    base_url: str | None = None
    api_key: SecretStr | None = None
    api_key_block: str | None = Field(None, description="A Prefect Secret block holding the key; wins over api_key.")
    model: str = "gpt-4o-mini"
    embedding_model: str = "text-embedding-3-small"
    token_budget_per_run: int = 200_000
    max_retries: int = 4
    timeout_sec: float = 120.0

    @property
    def enabled(self) -> bool:
        return bool(self.base_url or self.api_key or self.api_key_block)


class IndexSettings(BaseModel):
    backend: Literal["embedded", "weaviate"] = "embedded"
    weaviate_url: str = "http://127.0.0.1:8080"
    weaviate_grpc_port: int = 50051
    embeddings: Literal["none", "openai", "local", "wordllama", "weaviate"] = "none"
    max_file_bytes: int = 1_000_000
    max_symbol_lines: int = 400
    processes: int = Field(
        0, ge=0, description="Processes sharing a cold index, helpers included: 0 = one per CPU (at most 4)."
    )


class KubernetesSettings(BaseModel):
    namespace: str = "mendflow-jobs"
    context: str | None = Field(None, description="kubeconfig context; None uses the current one or in-cluster.")
    image_registry: str = "ghcr.io/mendflow"
    image_tag: str = "0.1.0"
    image_pull_grace_sec: int = 60
    ttl_seconds_after_finished: int = 300
    service_account: str = "mendflow-job"
    credentials_block: str | None = Field(
        None, description="A prefect-kubernetes KubernetesCredentials block; wins over context and KUBECONFIG."
    )
    egress_proxy: str | None = Field(
        None,
        description="URL of `mendflow egress-proxy`'s index port (k8s/egress: "
        "http://mendflow-egress.mendflow-egress.svc.cluster.local:3128). Set, a job that installs dependencies runs "
        "as two pods: the first, its only way to the package index, installs; the second runs the rest offline.",
    )
    store_proxy: str | None = Field(
        None,
        description="URL of the proxy's store-only port (k8s/egress: ...:3129): every other pod's HTTPS_PROXY, for "
        "presigned transfers to a store outside the cluster. Unset: no proxy (an in-cluster store).",
    )
    ca_bundle_configmap: str | None = Field(
        None,
        description="A ConfigMap in the jobs' namespace whose key ca.crt is a CA bundle (a TLS-intercepting proxy's, "
        "a private index's): mounted read-only in every pod and named by SSL_CERT_FILE and each toolchain's CA "
        "variable. Unset: the image's own bundle.",
    )
    ca_java_truststore_key: str | None = Field(
        None,
        description="A key of ca_bundle_configmap holding the same CAs as a Java keystore made by keytool (JKS or "
        "PKCS12, password 'changeit', e.g. a host's /etc/ssl/certs/java/cacerts), for the JVM, which reads no PEM "
        "bundle. Unset: Java jobs trust the image's own keystore.",
    )
    runtime_class: str | None = Field(
        None, description="runtimeClassName of every job pod (e.g. gVisor or Kata for a stronger sandbox)."
    )
    offline_runtime_class: str | None = Field(
        None,
        description="runtimeClassName of the offline pod of a split job (egress_proxy set): a class whose network "
        "reaches the store only enforces 'no egress' from the pod's first packet. Unset: runtime_class.",
    )


class LimitsSettings(BaseModel):
    """Sizes the trusted side accepts from a repository or a job; past one, the run stops with one clear error."""

    snapshot_mb: int = Field(2048, gt=0, description="Content of one commit's tree, in MiB.")
    snapshot_file_mb: int = Field(100, gt=0, description="One file of a commit's tree, in MiB.")
    job_output_mb: int = Field(64, gt=0, description="One file a job returns (report, result, coverage), in MiB.")
    job_log_mb: int = Field(16, gt=0, description="A job's log kept in the store, in MiB (the tail is kept).")


class HealSettings(BaseModel):
    """The heal stage (seed 004): how hard it tries, and what it may merge without a human."""

    enabled: bool = Field(True, description="Heal a failed B1/B2 before filing the Regression.")
    max_rounds: int = Field(3, ge=1, le=10, description="Repair → incremental re-run rounds before giving up.")
    llm_attempts: int = Field(3, ge=0, le=10, description="LLM repairs tried per failing test, across rounds.")
    propose_source_fixes: bool = Field(
        True, description="With an LLM: a fix to the code for a real regression, on its own branch (never merged)."
    )
    auto_approve: list[ErrorCategory] = Field(
        default_factory=lambda: [ErrorCategory.IMPORT, ErrorCategory.NAME, ErrorCategory.LINT],
        description="Categories whose test fixes merge without a human; others wait for approval.",
    )
    approval_wait_sec: int = Field(
        0, ge=0, description="How long a run pauses for a human's answer in the Prefect UI; 0 ends awaiting approval."
    )
    check_flaky: bool = Field(True, description="Re-run the failed tests once first: a pass means flaky.")
    regenerate_stale: bool = Field(
        True,
        description="Generated tests (tests/test_*_mendflow.py) that pinned behaviour the commit changed: drop them "
        "and generate them again from the current code, always for a human's approval (the regression is still "
        "reported). Never auto-approved, whatever auto_approve says.",
    )


class Settings(BaseSettings):
    """mendflow's settings. Every field has a default so a fresh laptop needs none of them."""

    model_config = SettingsConfigDict(
        env_prefix="MENDFLOW_", env_nested_delimiter="__", extra="ignore", populate_by_name=True
    )

    state_dir: Path = Field(default_factory=default_state_dir, description="Local state (file store, index).")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="Dependency caches shared by jobs.")
    store_url: str | None = Field(
        None, description="file:///path or s3://bucket/prefix; default is a file store in state_dir."
    )
    launcher: Literal["local", "kubernetes"] = "local"
    build_timeout_sec: int = Field(
        900, validation_alias=AliasChoices("MENDFLOW_BUILD_TIMEOUT_SEC", "BUILD_TIMEOUT_SEC")
    )
    min_line_cov: float = Field(80.0, validation_alias=AliasChoices("MENDFLOW_MIN_LINE_COV", "MIN_LINE_COV"))
    test_marker: str = Field("fast", description="pytest marker for the fast suite, used when the repo declares it.")
    retry_delays_sec: list[int] = Field(
        default_factory=lambda: [0, 90, 300],
        description="Seed back-off: attempt 1 immediate, attempt 2 +90 s, attempt 3 +5 min; ERRORED only.",
    )
    merge_mode: Literal["merge", "push", "none"] = Field(
        "merge",
        description="merge: into the run's branch (pushed to origin for a URL repo); push: the tested branch to "
        "origin; none: leave it. README, Configuration.",
    )
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    pynguin: PynguinSettings = Field(default_factory=PynguinSettings)
    languages: LanguageSettings = Field(default_factory=LanguageSettings)
    s3: S3Settings = Field(default_factory=S3Settings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    heal: HealSettings = Field(default_factory=HealSettings)
    metrics_catch_up_sec: float = Field(
        10,
        gt=0,
        description="`mendflow metrics` reads the events of the minute before each (re)connect again this long "
        "after it: one published just before is in neither the live stream nor its replay until the Prefect "
        "server writes it, every 5 s by default (PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL).",
    )

    def resolved_store_url(self) -> str:
        return self.store_url or (self.state_dir / "artefacts").resolve().as_uri()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings read once per process; tests call ``get_settings.cache_clear()`` after changing the env."""
    return Settings()
