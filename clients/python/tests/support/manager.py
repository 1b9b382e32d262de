"""Real Sluice managers for the integration tests: the operator's jar (``sluice serve``) on the
local database (127.0.0.1:3306, root without a password), one fresh database per test run.

``SLUICE_JAR`` names the jar (default: the repository's ``examples/target/sluice.jar``, built
with Maven when missing unless ``SLUICE_PY_BUILD_JAR=0``); ``SLUICE_PY_DB_HOST``/``_PORT``/
``_USER``/``_PASSWORD`` another server. When the database, Java or the jar cannot be had, the
integration tests are skipped, saying which.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from typing import Dict, List, Optional

from .wait import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))

DB_HOST = os.environ.get("SLUICE_PY_DB_HOST", "127.0.0.1")
DB_PORT = int(os.environ.get("SLUICE_PY_DB_PORT", "3306"))
DB_USER = os.environ.get("SLUICE_PY_DB_USER", "root")
DB_PASSWORD = os.environ.get("SLUICE_PY_DB_PASSWORD", "")

BUILD = (
    "./mvnw -o -B -q -pl examples -am -DskipTests -Dspotless.check.skip -Dmaven.javadoc.skip "
    "-Dmaven.source.skip package"
)


class Unavailable(Exception):
    """Why the integration tests cannot run here."""


def connect(database: Optional[str] = None, autocommit: bool = True):
    import pymysql

    return pymysql.connect(
        host=DB_HOST, port=DB_PORT, user=DB_USER, password=DB_PASSWORD, database=database,
        autocommit=autocommit, connect_timeout=3,
    )


def check_database() -> None:
    try:
        import pymysql  # noqa: F401
    except ImportError as e:
        raise Unavailable(f"PyMySQL is not installed ({e}): apt-get install python3-pymysql")
    try:
        connect().close()
    except Exception as e:
        raise Unavailable(f"no database at {DB_HOST}:{DB_PORT} as {DB_USER}: {e}")


def find_jar() -> str:
    if shutil.which("java") is None:
        raise Unavailable("java is not on PATH: the managers are the operator's jar")
    jar = os.environ.get("SLUICE_JAR") or os.path.join(REPO, "examples", "target", "sluice.jar")
    if not os.path.isfile(jar) and os.environ.get("SLUICE_PY_BUILD_JAR", "1") != "0":
        subprocess.run(BUILD, shell=True, cwd=REPO, timeout=1800, check=False)
    if not os.path.isfile(jar):
        raise Unavailable(f"no manager jar at {jar}: build it with `{BUILD}` or set SLUICE_JAR")
    return jar


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Database:
    """A fresh database on the local server, dropped by :meth:`drop`."""

    def __init__(self, prefix: str = "sluice_py") -> None:
        self.name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        with connect() as c, c.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{self.name}`")

    def connect(self, autocommit: bool = True):
        return connect(self.name, autocommit)

    def execute(self, sql: str, params=None):
        with self.connect() as c, c.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def drop(self) -> None:
        with connect() as c, c.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{self.name}`")


class Manager:
    """One ``sluice serve`` process on a database, on free ports, logging to a file."""

    def __init__(
        self,
        jar: str,
        database: str,
        workdir: str,
        manager_id: str = "m1",
        extra_config: str = "",
        env: Optional[Dict[str, str]] = None,
    ) -> None:
        self.jar = jar
        self.database = database
        self.manager_id = manager_id
        self.grpc_port = free_port()
        self.http_port = free_port()
        self.target = f"127.0.0.1:{self.grpc_port}"
        self.dir = os.path.join(workdir, manager_id)
        os.makedirs(self.dir, exist_ok=True)
        self.config = os.path.join(self.dir, "sluice.yaml")
        self.log_path = os.path.join(self.dir, "serve.log")
        with open(self.config, "w") as f:
            f.write(
                f"manager_id: {manager_id}\n"
                f"grpc_port: {self.grpc_port}\n"
                f"http_port: {self.http_port}\n"
                "discovery_interval: 200ms\n"
                "shutdown_timeout: 2s\n"
                "shards:\n"
                "  - name: main\n"
                f"    url: jdbc:mysql://{DB_HOST}:{DB_PORT}/{database}\n"
                f"    user: {DB_USER}\n"
                f'    password: "{DB_PASSWORD}"\n'
                "    binlog: \"off\"\n" + extra_config
            )
        self._env = dict(os.environ, **(env or {}))
        self.process: Optional[subprocess.Popen] = None

    def start(self, timeout: float = 60) -> "Manager":
        self._log_start = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", self.jar,
             "serve", "--config", self.config],
            cwd=self.dir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=self._env,
        )
        log.close()
        wait_until(lambda: self._listening(), timeout, f"manager {self.manager_id} listening",
                   on_timeout=self.tail)
        return self

    def _listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(
                f"manager {self.manager_id} exited with {self.process.returncode}:\n{self.tail()}"
            )
        with open(self.log_path, "rb") as f:
            f.seek(self._log_start)
            return b"listening for receivers" in f.read()

    def await_serving(self, queue: str, timeout: float = 60) -> None:
        """Waits until this manager serves ``queue`` (found by its discovery, leading its shard)."""
        line = f"queue {queue} on shard main: serving"
        wait_until(lambda: line in self.log_text(), timeout, f"{self.manager_id} serving {queue}",
                   on_timeout=self.tail)

    def log_text(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL: the manager vanishes without a word."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM and wait (graceful), SIGKILL after 20 s."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def queue_table(name: str, columns: List[str], comment: str = "", extra: List[str] = ()) -> str:
    """The CREATE TABLE of a queue with the convention's system columns (as ``sluice queue
    create`` writes it), ``columns`` after them."""
    now = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)"
    parts = [
        "`id` BIGINT NOT NULL AUTO_INCREMENT",
        f"`time_next` BIGINT NOT NULL DEFAULT ({now})",
        "`state` TINYINT NOT NULL DEFAULT 0",
        "`epoch` INT NOT NULL DEFAULT 0",
        "`priority` TINYINT NOT NULL DEFAULT 0",
        "`tenant` VARCHAR(64) NOT NULL DEFAULT ''",
        f"`time_created` BIGINT NOT NULL DEFAULT ({now})",
        "`time_acked` BIGINT NULL",
        *columns,
        "PRIMARY KEY (`id`)",
        "KEY `sluice_poll` (`state`, `time_next`)",
        "KEY `sluice_tenant` (`state`, `tenant`, `time_next`)",
        *extra,
    ]
    body = ",\n  ".join(parts)
    return f"CREATE TABLE `{name}` (\n  {body}\n) ENGINE=InnoDB COMMENT='sluice_queue {comment}'"


def states(db: Database, queue: str) -> Dict[int, int]:
    """Rows by state code."""
    return {s: n for s, n in db.execute(f"SELECT state, COUNT(*) FROM `{queue}` GROUP BY state")}
