"""Install the repository's dependencies into a fresh venv with uv (cache shared across jobs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import repo_config
from .proc import Log, StepResult, run

# Tools the runner itself drives inside the repo's venv; installed only when the repo did not bring them.
RUNNER_TOOLS = {"pytest": "pytest", "coverage": "coverage[toml]>=7.5"}


class DependencyError(Exception):
    def __init__(self, step: StepResult) -> None:
        super().__init__(step.describe())
        self.step = step


class Installer:
    def __init__(self, root: Path, venv: Path, python: str, env: dict[str, str], log: Log) -> None:
        self.root, self.venv, self.python, self.log = root, venv, python, log
        self.env = {
            **env,
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_PROJECT_ENVIRONMENT": str(venv),
            "VIRTUAL_ENV": str(venv),
            "UV_NO_PROGRESS": "1",
        }
        self.env.pop("UV_SYSTEM_PYTHON", None)

    @property
    def venv_python(self) -> str:
        return str(self.venv / "bin" / "python")

    def _run(self, argv: list[str], timeout: float) -> StepResult:
        r = run(argv, cwd=self.root, env=self.env, timeout=timeout, log=self.log)
        if not r.ok:
            raise DependencyError(r)
        return r

    def _pip(self, args: list[str], timeout: float) -> None:
        self._run(["uv", "pip", "install", "--python", self.venv_python, *args], timeout)

    def install(self, remaining: Callable[[], float]) -> None:
        """Each command gets what is left of the job's budget; raises DependencyError on the first failure."""
        self._run(["uv", "venv", "--python", self.python, str(self.venv)], remaining())
        root = self.root
        if (root / "uv.lock").is_file():
            self._run(["uv", "sync", "--frozen", "--all-groups", "--python", self.venv_python], remaining())
        else:
            for req in sorted(root.glob("requirements*.txt")):
                self._pip(["-r", str(req)], remaining())
            if repo_config.is_installable(root):
                extras = repo_config.wanted_extras(root)
                target = f".[{','.join(extras)}]" if extras else "."
                self._pip(["-e", target], remaining())
        self._add_runner_tools(remaining())

    def _add_runner_tools(self, timeout: float) -> None:
        probe = "import importlib.util as u; print(' '.join(n for n in %r if u.find_spec(n) is None))"
        r = self._run([self.venv_python, "-c", probe % (tuple(RUNNER_TOOLS),)], timeout)
        missing = [RUNNER_TOOLS[n] for n in r.stdout.split()]
        if missing:
            self._pip(missing, timeout)
